#!/usr/bin/env python3
"""pshard-compile --mmproj + pshard-run --mmproj --image -s on the emulated GPU, as a user
runs them on a generated Qwen2-VL language model and projector: under every compiled
budget the image prompt's tokens and log-probabilities are the cpu backend's without a
schedule (a prompt of two images too, and a -cnv conversation with an image); the vision phase is reported (plan, tier, predicted and measured ms, arena);
the measured peak VRAM is the larger phase's, not their sum; an image above the largest
tier and a schedule compiled for another projector are refused naming the fix.

usage: vision_plan_cli_test.py BUILD_DIR
"""
import json
import os
import sys
import tempfile

from cli_util import Checks, run, write_png

build = sys.argv[1]
mkmodel = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
checks = Checks()
BUDGETS = ["0", "4M", "8M", "12M", "20M"]


def png(path, w, h):
    rgb = bytearray()
    for y in range(h):
        for x in range(w):
            v = (x * 7 + y * 13) % 256
            rgb += bytes([v, (v * 3 + 1) % 256, 255 - v])
    write_png(path, w, h, rgb)


def compile_schedule(lm, proj, out, sizes):
    # --kernel-workspace 0: the emulated GPU needs no CUDA kernel scratch in its plans;
    # gpu-only: the language model is too small for the GPU to pay otherwise. The vision
    # plans are the planner's choice: CPU at 4M, streamed at 8M and 12M, resident at 20M.
    p = run(compile_bin, "-m", lm, "--profile", profile, "-o", out, "--tiers", "1,16", "-c", "256",
            "-q", "--kernel-workspace", "0", "--budgets", ",".join(BUDGETS), "--strategy",
            "gpu-only", "--mmproj", proj, "--image-sizes", sizes)
    checks.check("compile --image-sizes " + sizes, p.returncode == 0, p.stderr)


def generate(lm, proj, image, *extra):
    p = run(run_bin, "-m", lm, "--mmproj", proj, "--image", image, "-p",
            "<__media__>What is in the picture?", "-n", "6", "--temp", "0", "--ignore-eos",
            "--json", "--top-logprobs", "2", "-t", "2", *extra)
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def main(tmp):
    lm, proj = os.path.join(tmp, "qwen2vl.gguf"), os.path.join(tmp, "mmproj.gguf")
    shape = ["--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2",
             "--n-ff", "96", "--v-n-embd", "256", "--v-n-ff", "512", "--v-n-head", "4", "--v-n-layer", "4",
             "--v-image-size", "224", "--v-window-size", "56"]
    p = run(mkmodel, "-o", lm, "--arch", "qwen2vl", "--mmproj-out", proj, *shape)
    if p.returncode != 0:
        return checks.check("pshard-mkmodel", False, p.stderr)
    image = os.path.join(tmp, "a.png")
    png(image, 224, 168)  # 16 x 12 patches: 192
    schedule = os.path.join(tmp, "vlm.pshard")
    compile_schedule(lm, proj, schedule, "64,192")
    p, want = generate(lm, proj, image)
    checks.check("cpu run", want is not None, p.stderr)
    if want is None:
        return
    placements = set()
    for vram in BUDGETS:
        p, got = generate(lm, proj, image, "-s", schedule, "--backend", "emu", "--vram", vram)
        checks.check(f"emu --vram {vram} runs", got is not None, p.stderr)
        if got is None:
            continue
        checks.check(f"emu --vram {vram}: the cpu run's tokens and log-probabilities",
                     got["generated_tokens"] == want["generated_tokens"] and
                     got["top_logprobs"] == want["top_logprobs"],
                     f"{got['generated_tokens']} vs {want['generated_tokens']}")
        v, lang = got["images"][0].get("vision_phase"), got.get("language_phase")
        checks.check(f"emu --vram {vram}: vision phase reported", v is not None and lang is not None,
                     str(got.keys()))
        if v is None or lang is None:
            continue
        checks.check(f"emu --vram {vram}: tier 192", v["tier"] == 192 and v["patches"] == 192, str(v))
        peak, vp, lp = got["peak_device_bytes"], v["peak_device_bytes"], lang["peak_device_bytes"]
        checks.check(f"emu --vram {vram}: peak = max(vision {vp}, language {lp})",
                     peak == max(vp, lp), str(peak))
        placements.add("streamed" if v["streamed"] else "resident" if v["resident"] else "cpu")
        print(f"--vram {vram}: vision {v['strategy']} ({v['resident']} resident, {v['streamed']} "
              f"streamed, {v['cpu']} cpu, tile {v['attention_tile']}), predicted "
              f"{v['predicted_ms']:.2f} ms, measured {v['measured_ms']:.2f} ms; arenas vision {vp} B, "
              f"language {lp} B, peak {peak} B")
    checks.check("the budgets cover cpu, streamed and resident vision plans",
                 placements == {"cpu", "streamed", "resident"}, str(placements))
    # Two images: each by a vision phase of its own, then the language plans; the cpu
    # run's answer, and a peak that is still the largest phase's.
    def two_images(*extra):
        p = run(run_bin, "-m", lm, "--mmproj", proj, "--image", image, "--image", image, "-p",
                "<__media__> and <__media__>: the same?", "-n", "4", "--temp", "0",
                "--ignore-eos", "--json", "--top-logprobs", "2", "-t", "2", *extra)
        return p, (json.loads(p.stdout) if p.returncode == 0 else None)
    p, want2 = two_images()
    p2, got2 = two_images("-s", schedule, "--backend", "emu", "--vram", BUDGETS[-1])
    ok = want2 is not None and got2 is not None
    checks.check("two images on emu: the cpu run's answer, a vision phase each, peak = max",
                 ok and got2["generated_tokens"] == want2["generated_tokens"] and
                 got2["top_logprobs"] == want2["top_logprobs"] and len(got2["images"]) == 2 and
                 all("vision_phase" in i for i in got2["images"]) and
                 got2["peak_device_bytes"] == max(
                     [i["vision_phase"]["peak_device_bytes"] for i in got2["images"]] +
                     [got2["language_phase"]["peak_device_bytes"]]),
                 p.stderr + p2.stderr)

    # A conversation (-cnv) with an image: each turn's vision and language phases share the
    # device in time (the kept image sequence's KV goes to the host between turns); the
    # answers are the cpu conversation's under every plan kind.
    def conversation(*extra):
        return run(run_bin, "-m", lm, "--mmproj", proj, "-cnv", "--chat-template", "chatml",
                   "-n", "4", "--temp", "0", "--ignore-eos", "-t", "2", *extra,
                   stdin=f"/image {image}\nWhat is it?\nAnd then?\n".encode(),
                   text=False)
    want_chat = conversation()
    checks.check("-cnv with images on cpu", want_chat.returncode == 0 and
                 want_chat.stdout.count(b"\n") >= 2, want_chat.stderr)  # two turns fit 256 positions
    for vram in ("4M", "8M", BUDGETS[-1]):
        got_chat = conversation("-s", schedule, "--backend", "emu", "--vram", vram)
        checks.check(f"-cnv with images on emu --vram {vram}: the cpu conversation's answers",
                     got_chat.returncode == 0 and got_chat.stdout == want_chat.stdout,
                     f"{got_chat.stdout!r} vs {want_chat.stdout!r}: {got_chat.stderr!r}")

    # The text report names the phase.
    p = run(run_bin, "-m", lm, "--mmproj", proj, "--image", image, "-p", "<__media__>hi", "-n", "2",
            "-t", "2", "-s", schedule, "--backend", "emu", "--vram", BUDGETS[-1])
    checks.check("text report: vision phase and peak VRAM",
                 p.returncode == 0 and "vision phase:" in p.stderr and "peak VRAM:" in p.stderr,
                 p.stderr)

    small = os.path.join(tmp, "small.pshard")
    compile_schedule(lm, proj, small, "64")
    p, _ = generate(lm, proj, image, "-s", small, "--backend", "emu")
    checks.check("an image above the largest tier is refused naming --image-sizes",
                 p.returncode != 0 and "192 patches" in p.stderr and "--image-sizes" in p.stderr,
                 p.stderr)
    # With at most 16 image tokens (64 patches) the same image fits that schedule, and its
    # answer on emu is the cpu run's under the same limit.
    limit = ("--image-max-tokens", "16")
    p, want16 = generate(lm, proj, image, *limit)
    p2, got16 = generate(lm, proj, image, "-s", small, "--backend", "emu", *limit)
    checks.check("--image-max-tokens 16: the image fits the 64-patch tier on emu with the cpu "
                 "run's answer", want16 is not None and got16 is not None and
                 got16["images"][0]["vision_phase"]["patches"] <= 64 and
                 got16["generated_tokens"] == want16["generated_tokens"] and
                 got16["top_logprobs"] == want16["top_logprobs"], p.stderr + p2.stderr)
    p, _ = generate(lm, proj, image, "--image-min-tokens", "4")
    checks.check("--image-min-tokens without --image-max-tokens is refused naming it",
                 p.returncode != 0 and "--image-max-tokens" in p.stderr, p.stderr)
    p, _ = generate(lm, proj, image, "--image-min-tokens", "40", "--image-max-tokens", "20")
    checks.check("a minimum above the maximum is refused", p.returncode != 0 and
                 "above the maximum" in p.stderr, p.stderr)
    other = os.path.join(tmp, "mmproj-other.gguf")
    run(mkmodel, "--mmproj-out", other, *shape[:10], "--v-n-embd", "256", "--v-n-ff", "512",
        "--v-n-head", "4", "--v-n-layer", "2", "--v-image-size", "224", "--v-window-size", "56")
    foreign = os.path.join(tmp, "foreign.pshard")
    compile_schedule(lm, other, foreign, "192")
    p, _ = generate(lm, proj, image, "-s", foreign, "--backend", "emu")
    checks.check("a schedule for another projector is refused naming the fix",
                 p.returncode != 0 and "another projector" in p.stderr and "--mmproj" in p.stderr,
                 p.stderr)


with tempfile.TemporaryDirectory() as d:
    main(d)
sys.exit(checks.finish())
