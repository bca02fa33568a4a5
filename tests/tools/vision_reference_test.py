#!/usr/bin/env python3
"""The vision encoder against an independent float64 reference (reference/vision.py).

pshard-mkmodel writes small random projectors of the three types (F32 and F16 matrices,
with and without window attention, with DeepStack mergers); the script writes PNG images of several sizes and aspect
ratios (wider and taller than the cap, smaller than it, thinner than one image token);
pshard-vision preprocesses and encodes each. Checked:
  - the preprocessed size is the reference's (the longer side capped, or Hugging Face's
    smart_resize under --image-max-tokens / --image-min-tokens), and its pixels are the reference's bicubic
    resize within one 8-bit step (a step at a rounding tie; all but 0.5% exact);
  - the image embeddings equal the reference's encoding of the same preprocessed input
    within 1e-5 of the embeddings' largest magnitude (F32 arithmetic over a few blocks);
  - an image prompt, and one of two images of different grids, through pshard-run on a
    generated qwen2vl language model: the log-probabilities of every generated position
    equal the float64 forward pass (reference/forward.py) fed the reference's image
    embeddings at the images' positions with multimodal RoPE positions numbered here as
    Qwen2-VL's get_rope_index walks them (text t=h=w, image tokens (p, p+row, p+column),
    what follows an image continuing past its largest coordinate) within 1e-3 — for qwen2vl,
    and for qwen3vl / qwen3vlmoe (interleaved M-RoPE, DeepStack rows after the first
    layers) and qwen35 (Gated DeltaNet layers; the tower's DeepStack rows unused) with
    qwen3vl_merger projectors;
  - window attention matters exactly where it should: a projector whose blocks all
    attend fully and one with windows agree on an image that fits in one window and
    differ on an image of four windows.

usage: vision_reference_test.py BUILD_DIR   (exit 77: skipped, numpy missing)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("SKIP: this python has no numpy (Debian: apt-get install python3-numpy)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "reference"))
from cli_util import write_png  # noqa: E402
from forward import Reference  # noqa: E402
from gguf_reader import GgufModel  # noqa: E402
import vision  # noqa: E402

build = sys.argv[1]
mkmodel = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
vision_bin = os.path.join(build, "tools/pshard-vision/pshard-vision")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
TOL = 1e-5
# The tower: width 64, 4 heads of 16, 3 blocks, 14-pixel patches, longer side capped at 224.
SHAPE = ["--n-embd", "48", "--v-n-embd", "64", "--v-n-head", "4", "--v-n-ff", "96",
         "--v-n-layer", "3", "--v-image-size", "224", "--v-window-size", "56"]
PROJECTORS = {
    "qwen25vl-windows": ["--mmproj-type", "qwen2.5vl_merger", "--v-wa-pattern", "2"],
    "qwen25vl-f16": ["--mmproj-type", "qwen2.5vl_merger", "--v-wa-pattern", "3", "--v-type", "f16"],
    "qwen25vl-full": ["--mmproj-type", "qwen2.5vl_merger", "--v-wa-pattern", "0"],
    "qwen2vl": ["--mmproj-type", "qwen2vl_merger"],
    # Qwen3-VL: 16-pixel patches, a 14 x 14 position table resized to each image's grid.
    "qwen3vl-deepstack": ["--mmproj-type", "qwen3vl_merger", "--v-patch-size", "16",
                          "--v-deepstack", "0,2"],
    "qwen3vl-f16": ["--mmproj-type", "qwen3vl_merger", "--v-patch-size", "16", "--v-type", "f16",
                    "--v-deepstack", "1"],
}
# The image prompt's language models: (arch, its own options, the projector's options).
IMAGE_PROMPT_MODELS = [
    ("qwen2vl", ["--n-layer", "2", "--n-head", "4", "--n-head-kv", "2"],
     ["--mmproj-type", "qwen2.5vl_merger"]),
    # Heads of 24: 12 rotary pairs dealt t, h, w, t, h, w, t, h, w, t, t, t (sections 6/3/3);
    # DeepStack rows after layers 0 and 1.
    ("qwen3vl", ["--n-head", "2", "--n-head-kv", "1", "--n-layer", "3", "--n-deepstack", "2"],
     ["--mmproj-type", "qwen3vl_merger", "--v-patch-size", "16", "--v-deepstack", "0,2"]),
    ("qwen3vlmoe", ["--n-layer", "2", "--n-head", "2", "--n-head-kv", "1", "--n-deepstack", "1", "--n-expert", "4",
                    "--n-expert-used", "2"],
     ["--mmproj-type", "qwen3vl_merger", "--v-patch-size", "16", "--v-deepstack", "1"]),
    # Qwen3.5: Gated DeltaNet and gated attention layers, interleaved M-RoPE over 4 rotary
    # pairs (t, h, w, t); its language model takes no DeepStack rows and ignores the tower's.
    ("qwen35", ["--n-layer", "4", "--n-head", "2", "--n-head-kv", "1", "--head-dim", "16",
                "--rope-dim", "8", "--ssm-state", "16", "--ssm-groups", "2", "--ssm-v-heads", "6"],
     ["--mmproj-type", "qwen3vl_merger", "--v-patch-size", "16", "--v-deepstack", "1"]),
]
# (width, height): wider than the cap, taller, inside it, square at the cap, a sliver.
IMAGES = [(300, 120), (90, 250), (64, 48), (224, 224), (200, 9)]
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def test_image(w, h, seed):
    """Smooth gradients plus noise: the resize has both flat and busy regions."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([x * 255 / max(w - 1, 1), y * 255 / max(h - 1, 1),
                     (x + y) * 127 / max(w + h - 2, 1)], -1)
    return np.clip(base + rng.integers(-40, 41, (h, w, 3)), 0, 255).astype(np.uint8)


def encode(proj, png, tmp, limits=None):
    embd, inp = os.path.join(tmp, "embd.npy"), os.path.join(tmp, "in.npy")
    extra = ["--image-min-tokens", str(limits[0]), "--image-max-tokens", str(limits[1])] \
        if limits else []
    p = subprocess.run([vision_bin, "--mmproj", proj, "--image", png, "-o", embd,
                        "--input-out", inp, "-t", "2", *extra], capture_output=True, text=True,
                       timeout=300)
    if p.returncode != 0:
        fail(f"pshard-vision {proj} {png}: {p.stderr}")
        return None
    return json.loads(p.stdout), np.load(embd).astype(np.float64), np.load(inp).astype(np.float64)


def check(name, proj, png, img, tmp, limits=None):
    """`limits`: (min, max) image tokens, or None for the cap on the longer side."""
    got = encode(proj, png, tmp, limits)
    if got is None:
        return None
    info, embd, inp = got
    model = GgufModel(proj)
    hp = vision.VisionHParams(model)
    h, w = img.shape[:2]
    want_w, want_h = vision.input_size(hp, w, h, *(limits or (0, 0)))
    if info["input"] != [want_w, want_h]:
        fail(f"{name} {w}x{h}: preprocessed to {info['input']}, the reference {want_w}x{want_h}")
        return None
    ref_in = vision.preprocess(hp, img, *(limits or (0, 0)))
    steps = np.abs(inp - ref_in) * (hp.std[:, None, None] * 255.0)
    if steps.max() > 1.001 or (steps > 0.01).mean() > 0.005:
        fail(f"{name} {w}x{h}: preprocessed pixels differ by up to {steps.max():.2f} steps, "
             f"{(steps > 0.01).mean():.2%} of them")
    ref = vision.encode(hp, model, inp)
    scale = np.abs(ref).max()
    err = np.abs(embd - ref).max() / scale
    if embd.shape != ref.shape or err > TOL:
        fail(f"{name} {w}x{h}: embeddings {embd.shape} differ from the reference {ref.shape} "
             f"by {err:.2e} of their scale")
    print(f"{name} {w}x{h} -> {want_w}x{want_h} ({info['tokens'][0]}x{info['tokens'][1]} "
          f"tokens): pixels {(steps > 0.01).mean():.2%} off by a step, embeddings within "
          f"{err:.1e} of the float64 reference")
    return embd


def check_image_prompt(tmp, arch, lm_args, proj_args):
    lm, proj = os.path.join(tmp, arch + ".gguf"), os.path.join(tmp, arch + "-mmproj.gguf")
    p = subprocess.run([mkmodel, "-o", lm, "--arch", arch, "--n-ff", "64",
                        "--type", "f32", *lm_args, "--mmproj-out", proj, *SHAPE, *proj_args],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return fail(f"pshard-mkmodel {arch}: {p.stderr}")
    pngs = []
    for i, (w, h) in enumerate([(100, 48), (40, 72)]):  # a wide and a tall grid
        img = test_image(w, h, 21 + i)
        pngs.append(os.path.join(tmp, f"prompt{i}.png"))
        write_png(pngs[-1], img.shape[1], img.shape[0], img.tobytes())
    for batch in ("256", "3"):  # -b 3: passes that split the text and the images
        check_image_prompt_run(lm, proj, pngs[:1], "Look: <__media__> and tell", batch, tmp)
    check_image_prompt_run(lm, proj, pngs, "Look: <__media__> then <__media__> and tell", "5", tmp)


def rope_walk(n, images):
    """Qwen2-VL's get_rope_index over n slots: text one past the largest position so far,
    an image's grid (t, t + row, t + column) from there, counting max(columns, rows)."""
    positions, nxt, k, i = [], 0, 0, 0
    while i < n:
        if k < len(images) and i == images[k]["position"]:
            tx, ty = images[k]["tokens_x"], images[k]["tokens_y"]
            positions += [(nxt, nxt + r // tx, nxt + r % tx) for r in range(tx * ty)]
            nxt, i, k = nxt + max(tx, ty), i + tx * ty, k + 1
        else:
            positions.append(nxt)
            nxt, i = nxt + 1, i + 1
    return positions


def check_image_prompt_run(lm, proj, pngs, prompt, batch, tmp):
    flags = [arg for png in pngs for arg in ("--image", png)]
    p = subprocess.run([run_bin, "-m", lm, "--mmproj", proj, *flags, "-p", prompt, "-n", "6",
                        "--temp", "0", "--ignore-eos", "--json", "--top-logprobs", "2", "-t", "2",
                        "-ctk", "f32", "-ctv", "f32", "-b", batch],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return fail(f"pshard-run with {len(pngs)} images: {p.stderr}")
    out = json.loads(p.stdout)
    hp = vision.VisionHParams(GgufModel(proj))
    embeds = {}
    for png, info in zip(pngs, out["images"]):
        got = encode(proj, png, tmp)
        if got is None:
            return
        image = vision.encode(hp, GgufModel(proj), got[2])
        n = info["tokens_x"] * info["tokens_y"]
        if len(image) != n:
            return fail(f"image prompt: {png} has {len(image)} reference tokens, pshard {n}")
        embeds.update({info["position"] + r: image[r] for r in range(n)})
    ids = out["prompt_tokens"] + out["generated_tokens"]
    ref = Reference(GgufModel(lm))
    rows = ref.logprobs(ids, embeds, rope_walk(len(ids), out["images"]))
    worst = 0.0
    for j, tok in enumerate(out["generated_tokens"]):
        row = rows[len(out["prompt_tokens"]) - 1 + j]
        order = row.argsort()[::-1]
        mine = out["top_logprobs"][j][0]
        worst = max(worst, abs(mine["logprob"] - row[mine["id"]]))
        if row[order[0]] - row[order[1]] > 1e-3 and tok != order[0]:
            return fail(f"image prompt: position {j} pshard picked {tok}, the reference {order[0]}")
    if worst > 1e-3:
        fail(f"image prompt: log-probs differ from the float64 reference by up to {worst:.2e}")
    grids = ", ".join(f"{i['tokens_x']}x{i['tokens_y']} at {i['position']}" for i in out["images"])
    print(f"image prompt {os.path.basename(lm)} (-b {batch}, image tokens {grids}): "
          f"{len(out['generated_tokens'])} tokens, log-probs within {worst:.1e} of the float64 "
          f"reference")


def main(tmp):
    for arch, lm_args, proj_args in IMAGE_PROMPT_MODELS:
        check_image_prompt(tmp, arch, lm_args, proj_args)
    projs = {}
    for name, extra in PROJECTORS.items():
        path = os.path.join(tmp, name + ".gguf")
        p = subprocess.run([mkmodel, "--mmproj-out", path, *SHAPE, *extra, "--seed", "3"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            fail(f"{name}: pshard-mkmodel failed: {p.stderr}")
            continue
        projs[name] = path
    for i, (w, h) in enumerate(IMAGES):
        img = test_image(w, h, i)
        png = os.path.join(tmp, f"img{i}.png")
        write_png(png, img.shape[1], img.shape[0], img.tobytes())
        for name, path in projs.items():
            check(name, path, png, img, tmp)
    # Image token limits: past the cap (300 x 120 keeps its size: 9 x 4 tokens within 48),
    # shrunk to them (12 at most), enlarged to them (64 x 48 to at least 10).
    for i, (w, h, limits) in enumerate([(300, 120, (0, 48)), (300, 120, (4, 12)),
                                        (64, 48, (10, 40))]):
        img = test_image(w, h, 30 + i)
        png = os.path.join(tmp, f"limit{i}.png")
        write_png(png, img.shape[1], img.shape[0], img.tobytes())
        for name in ("qwen3vl-deepstack", "qwen2vl"):
            if name in projs:
                check(f"{name} tokens {limits}", projs[name], png, img, tmp, limits)
    # Window attention: 56-pixel windows of 2x2 image tokens. An image of one window sees
    # the same neighbours either way; one of 2x2 windows does not. "full" and "windows"
    # share the seed, so their weights are the same.
    if "qwen25vl-windows" in projs and "qwen25vl-full" in projs:
        for side, same in ((56, True), (112, False)):
            img = test_image(side, side, 10 + side)
            png = os.path.join(tmp, f"win{side}.png")
            write_png(png, img.shape[1], img.shape[0], img.tobytes())
            a = check("windows", projs["qwen25vl-windows"], png, img, tmp)
            b = check("full", projs["qwen25vl-full"], png, img, tmp)
            if a is None or b is None:
                continue
            diff = np.abs(a - b).max() / np.abs(b).max()
            if same and diff > TOL:
                fail(f"one window ({side} px): windowed and full attention differ by {diff:.2e}")
            if not same and diff < 1e-3:
                fail(f"four windows ({side} px): windowed and full attention agree ({diff:.2e})")
            print(f"{side}x{side}: windowed vs full attention differ by {diff:.1e} "
                  f"({'expected equal' if same else 'expected different'})")


with tempfile.TemporaryDirectory() as d:
    main(d)
print("vision reference:", "ok" if failures == 0 else f"{failures} failures")
sys.exit(1 if failures else 0)
