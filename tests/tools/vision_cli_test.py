#!/usr/bin/env python3
"""pshard-run --mmproj FILE --image FILE on a generated Qwen2-VL language model and
projector: the image's tokens take the place llama-mtmd-cli gives them (at <__media__>,
inside <|vision_start|>...<|vision_end|>, or before the prompt), the answer depends on
the image; several --image options fill the prompt's places in order (or all go before a
prompt without places), and the answer depends on their order; every bad input is
refused with a message naming it: a missing or foreign projector, a projector of another
embedding width, an unreadable image, a language model without multimodal RoPE, --image
without --mmproj, images and places that differ in number. In a conversation (-cnv),
"/image PATH" (or --image) shows the next message an image, each turn answers as the
whole conversation given at once, and bad images are refused the same way.

usage: vision_cli_test.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

from cli_util import run as run_tool, write_pattern_png as png

build = sys.argv[1]
mkmodel = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
failures = 0


def run(*args):
    return run_tool(*[str(a) for a in args])


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def generate(model, proj, image, prompt, *extra):
    images = [image] if isinstance(image, str) else image
    flags = [arg for path in images for arg in ("--image", path)]
    p = run(run_bin, "-m", model, "--mmproj", proj, *flags, "-p", prompt, "-n", "6",
            "--temp", "0", "--ignore-eos", "--json", "--top-logprobs", "1", "-t", "2", *extra)
    if p.returncode != 0:
        fail(f"pshard-run {image} {prompt!r}: {p.stderr}")
        return None
    return json.loads(p.stdout)


def expect_error(what, args, says):
    p = run(run_bin, *args, "-p", "hi", "-n", "2")
    if p.returncode == 0:
        fail(f"{what}: pshard-run succeeded")
    elif says not in p.stderr:
        fail(f"{what}: the error does not say {says!r}: {p.stderr.strip()}")
    else:
        print(f"{what}: refused ({p.stderr.strip()[:110]})")


def main(tmp):
    lm, proj = os.path.join(tmp, "qwen2vl.gguf"), os.path.join(tmp, "mmproj.gguf")
    shape = ["--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2",
             "--n-ff", "96", "--v-n-embd", "32", "--v-n-head", "2", "--v-n-layer", "2",
             "--v-image-size", "112", "--v-window-size", "56"]
    p = run(mkmodel, "-o", lm, "--arch", "qwen2vl", "--mmproj-out", proj, *shape)
    if p.returncode != 0:
        return fail(f"pshard-mkmodel: {p.stderr}")
    a, b = os.path.join(tmp, "a.png"), os.path.join(tmp, "b.png")
    png(a, 90, 60, 1)
    png(b, 90, 60, 2)
    text = generate(lm, proj, a, "<__media__>What is in the picture?")
    if text is None:
        return
    img = text["images"][0]
    n_img = img["tokens_x"] * img["tokens_y"]
    if (img["input_width"], img["input_height"]) != (112, 84) or (img["tokens_x"], img["tokens_y"]) != (4, 3):
        fail(f"90x60 under a 112 cap: preprocessed to {img}")
    # Three placements of the same image give the same prompt length: text + n image tokens.
    spans = [generate(lm, proj, a, "<|vision_start|><|image_pad|><|vision_end|>What is in the picture?"),
             generate(lm, proj, a, "What is in the picture?")]
    for s in spans:
        if s is not None and len(s["prompt_tokens"]) != len(text["prompt_tokens"]):
            fail(f"placements differ in length: {len(s['prompt_tokens'])} vs "
                 f"{len(text['prompt_tokens'])}")
    if spans[1] is not None and spans[1]["generated_tokens"] != text["generated_tokens"]:
        fail("the image before the prompt and at the marker at its start gave different answers")
    other = generate(lm, proj, b, "<__media__>What is in the picture?")
    if other is not None and other["top_logprobs"][0] == text["top_logprobs"][0]:
        fail("two different images gave the same first-position log-probabilities")
    print(f"image prompt: {n_img} image tokens, {len(text['prompt_tokens'])} prompt tokens, "
          f"generated {text['generated_tokens']}")
    # The model flags an image prompt takes as a text prompt does: --override-kv (here the
    # end token: the answer stops where the plain one first had its 2nd token) and DRY.
    stop = text["generated_tokens"][1]
    first = text["generated_tokens"].index(stop)
    p = run(run_bin, "-m", lm, "--mmproj", proj, "--image", a, "-p", "<__media__>What is in "
            "the picture?", "-n", "6", "--temp", "0", "--json", "-t", "2", "--override-kv",
            f"tokenizer.ggml.eos_token_id=int:{stop}")
    if p.returncode != 0 or \
            json.loads(p.stdout)["generated_tokens"] != text["generated_tokens"][:first]:
        fail(f"--override-kv with an image: {p.stdout[:300]} {p.stderr}")
    expect_error("a key the model never reads, with an image",
                 ["-m", lm, "--mmproj", proj, "--image", a, "--override-kv",
                  "qwen2vl.nothing=int:1"], "never reads")
    expect_error("a missing LoRA adapter, with an image",
                 ["-m", lm, "--mmproj", proj, "--image", a, "--lora",
                  os.path.join(tmp, "no-lora.gguf")], "no-lora.gguf")
    dry = generate(lm, proj, a, "<__media__>What is in the picture?", "--dry-multiplier", "1e6",
                   "--dry-allowed-length", "1", "--dry-sequence-breaker", "none")
    # The plain answer loops on one token; DRY (every repeat penalised) may not.
    looped = lambda ids: any(ids[i] == ids[i + 1] == ids[i + 2] for i in range(len(ids) - 2))
    if dry is not None and (not looped(text["generated_tokens"]) or
                            looped(dry["generated_tokens"])):
        fail(f"DRY with an image: {dry['generated_tokens']} after {text['generated_tokens']}")

    # Two images: each at its place, in order; their tokens are in the prompt, the second's
    # after the first's and the text between; the order matters.
    c = os.path.join(tmp, "c.png")
    png(c, 60, 120, 3)  # taller than wide: another grid
    two = generate(lm, proj, [a, c], "<__media__> and <__media__> differ how?")
    swapped = generate(lm, proj, [c, a], "<__media__> and <__media__> differ how?")
    before = generate(lm, proj, [a, c], "differ how?")
    marked = generate(lm, proj, [a, c], "<__media__><__media__>differ how?")
    if None not in (two, swapped, before, marked):
        i0, i1 = two["images"]
        n0, n1 = i0["tokens_x"] * i0["tokens_y"], i1["tokens_x"] * i1["tokens_y"]
        ids = two["prompt_tokens"]
        if (i0["tokens_x"], i0["tokens_y"]) == (i1["tokens_x"], i1["tokens_y"]):
            fail(f"the two test images have the same grid {i0}: the test needs two")
        if ids[i0["position"]:i0["position"] + n0] != [0] * n0 or \
                ids[i1["position"]:i1["position"] + n1] != [0] * n1 or \
                i1["position"] <= i0["position"] + n0:
            fail(f"two images: placeholders not at {i0['position']} (+{n0}) and "
                 f"{i1['position']} (+{n1}) in {ids}")
        if len(ids) != len(swapped["prompt_tokens"]):
            fail("swapping the two images changed the prompt's length")
        if swapped["top_logprobs"][0] == two["top_logprobs"][0]:
            fail("swapping the two images did not change the first-position log-probabilities")
        if (before["prompt_tokens"], before["top_logprobs"]) != \
                (marked["prompt_tokens"], marked["top_logprobs"]):
            fail("two images before a prompt without places are not the prompt with both "
                 "markers at its start")
        print(f"two images: {i0['tokens_x']}x{i0['tokens_y']} at {i0['position']}, "
              f"{i1['tokens_x']}x{i1['tokens_y']} at {i1['position']}; swapped, they answer "
              f"{swapped['generated_tokens']} instead of {two['generated_tokens']}")

    # Bad inputs.
    other_width = os.path.join(tmp, "mmproj-32.gguf")
    run(mkmodel, "--mmproj-out", other_width, "--n-embd", "32", "--v-n-embd", "32", "--v-n-head", "2")
    qwen2 = os.path.join(tmp, "qwen2.gguf")
    run(mkmodel, "-o", qwen2, "--arch", "qwen2", "--n-embd", "64")
    junk = os.path.join(tmp, "junk.png")
    with open(junk, "w") as f:
        f.write("not an image")
    expect_error("missing projector", ["-m", lm, "--mmproj", os.path.join(tmp, "none.gguf"), "--image", a],
                 "does not exist")
    expect_error("a language model as projector", ["-m", lm, "--mmproj", lm, "--image", a],
                 "not a vision projector")
    expect_error("projector of another width", ["-m", lm, "--mmproj", other_width, "--image", a],
                 "embedding width is 64")
    expect_error("unreadable image", ["-m", lm, "--mmproj", proj, "--image", junk], "cannot be decoded")
    expect_error("missing image", ["-m", lm, "--mmproj", proj, "--image", os.path.join(tmp, "no.png")],
                 "cannot open")
    expect_error("a model without M-RoPE", ["-m", qwen2, "--mmproj", proj, "--image", a], "qwen2vl")
    expect_error("--image without --mmproj", ["-m", lm, "--image", a], "--mmproj and --image")
    p = run(run_bin, "-m", lm, "--mmproj", proj, "--image", a, "--image", a, "-p",
            "only <__media__> here", "-n", "2")
    if p.returncode == 0 or "names 1 image places but 2 images" not in p.stderr:
        fail(f"two images for one place: {p.returncode} {p.stderr.strip()}")
    conversation(lm, proj, a, b, junk)


def chat(model, stdin, *extra):
    """pshard-run -cnv; its answers as bytes (a random model's need not be UTF-8)."""
    return run_tool(run_bin, "-m", model, "-cnv", "--chat-template", "chatml", "--temp", "0",
                    "-n", "6", "-t", "2", "--ignore-eos", *extra, stdin=stdin.encode(),
                    text=False)


def conversation(lm, proj, a, b, junk):
    def at_once(images, *messages):
        """The answer to the conversation given as one prompt (chatml), as bytes."""
        prompt = b"".join(b"<|im_start|>%s\n%s<|im_end|>\n" % m for m in messages) + \
            b"<|im_start|>assistant\n"
        flags = [arg for path in images for arg in ("--image", path)]
        # Bytes as they are (cli_util.run spells each argument with str()).
        p = subprocess.run([run_bin, "-m", lm, "--mmproj", proj, *flags, "-p", prompt, "-n", "6",
                            "--temp", "0", "--ignore-eos", "-t", "2"], capture_output=True,
                           timeout=300)
        if p.returncode != 0:
            fail(f"pshard-run {prompt!r}: {p.stderr}")
        return p.stdout.removesuffix(b"\n")

    p = chat(lm, f"/image {a}\nWhat is in it?\nAnd the colours?\n", "--mmproj", proj)
    if p.returncode != 0:
        return fail(f"-cnv with /image: {p.stderr}")
    first = at_once([a], (b"user", b"<__media__>What is in it?"))
    second = at_once([a], (b"user", b"<__media__>What is in it?"), (b"assistant", first),
                     (b"user", b"And the colours?"))
    if p.stdout != first + b"\n" + second + b"\n":
        fail(f"-cnv with /image answered {p.stdout!r}; the conversation given at once, turn "
             f"by turn: {first!r}, {second!r}")
    flag = chat(lm, "What is in it?\nAnd the colours?\n", "--mmproj", proj, "--image", a)
    if flag.stdout != p.stdout:
        fail(f"-cnv --image is not /image before the first message: {flag.stdout!r}")
    other = chat(lm, f"/image {b}\nWhat is in it?\n", "--mmproj", proj)
    print(f"conversation: {p.stdout!r}; another image: {other.stdout!r}")
    for what, stdin, extra, says in [
            ("/image without --mmproj", f"/image {a}\nHi\n", [], "--mmproj"),
            ("/image of a missing file", "/image /no/such.png\nHi\n", ["--mmproj", proj],
             "/no/such.png"),
            ("/image of no image", f"/image {junk}\nHi\n", ["--mmproj", proj],
             "not an image pshard reads"),
            ("/image with no path", "/image\nHi\n", ["--mmproj", proj], "/image PATH")]:
        p = chat(lm, stdin, *extra)
        err = p.stderr.decode(errors="replace")
        if p.returncode == 0 or says not in err:
            fail(f"-cnv {what}: rc {p.returncode}, {err.strip()}")
        else:
            print(f"-cnv {what}: refused ({err.strip().splitlines()[-1][:100]})")


with tempfile.TemporaryDirectory() as d:
    main(d)
print("vision cli:", "ok" if failures == 0 else f"{failures} failures")
sys.exit(1 if failures else 0)
