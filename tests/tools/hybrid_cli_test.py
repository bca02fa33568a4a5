#!/usr/bin/env python3
"""pshard-compile + pshard-run --backend emu as a user runs them: same tokens as the CPU
whatever the plan, the JSON `stats`, the trace, and clear errors for bad input.

usage: hybrid_cli_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import sys
import tempfile

from cli_util import Checks, run

checks = Checks()
check, skip = checks.check, checks.skip

build, shared = sys.argv[1], sys.argv[2]
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
stories = os.path.join(shared, "models/stories260K.gguf")
EXPECTED = [432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337]




def compile_schedule(out, *extra):
    # The laptop profile is a CUDA GPU's, whose kernels need ~37 MiB of scratch in every
    # plan; these runs are on the emulated GPU, which needs none, at sub-MiB budgets.
    p = run(compile_bin, "-m", stories, "--profile", profile, "-o", out, "--tiers", "1,4,16",
            "-c", "256", "-q", "--kernel-workspace", "0", *extra)
    check("compile " + " ".join(extra), p.returncode == 0, p.stderr)


def generate(*extra):
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "16", "--temp", "0",
            "-t", "2", "--json", *extra)
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def sliding_window_rings(tmp):
    """A Gemma-3-shaped model's local layers keep rings of window + largest tier - 1
    positions (16-aligned): the summary and pshard-diff say so, the host cache is smaller,
    and the tokens are --swa-full's (whole caches), on cpu and emu; compiled for several
    sequences, a pool of their windows' pages that the batched engine keeps."""
    model = os.path.join(tmp, "gemma3.gguf")
    p = run(os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel"), "-o", model, "--arch",
            "gemma3", "--n-layer", "6", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2",
            "--head-dim", "32", "--n-ff", "128", "--vocab", "512", "--sliding-window", "8",
            "--ctx", "512")
    check("mkmodel gemma3", p.returncode == 0, p.stderr)
    outs = {}
    for name, extra in [("rings", []), ("whole", ["--swa-full"])]:
        out = os.path.join(tmp, name + ".pshard")
        p = run(compile_bin, "-m", model, "--profile", profile, "-o", out, "--tiers", "1,4,16",
                "-c", "512", "--budgets", "0,2M", "--kernel-workspace", "0", *extra)
        check("compile " + name, p.returncode == 0, p.stderr)
        said = "caches are rings of 32 positions" in p.stdout  # 8 + 16 - 1, rounded up to 16
        check("summary says " + name, said == (name == "rings"), p.stdout)
        outs[name] = out
    p = run(os.path.join(build, "tools/pshard-diff/pshard-diff"), outs["rings"], outs["whole"])
    check("pshard-diff notes the rings", "rings of 32 -> whole" in p.stdout, p.stdout)
    # Four sequences (-np 4): a pool in pages of 16 of each one's window and rewind margin
    # (8 - 1 + 65 positions: 5 pages, 2 more at the ends) and the largest pass (1 page);
    # the batched engine keeps that pool on emu.
    pooled = os.path.join(tmp, "pooled.pshard")
    p = run(compile_bin, "-m", model, "--profile", profile, "-o", pooled, "--tiers", "1,4,16",
            "-c", "512", "--budgets", "0,2M", "--kernel-workspace", "0", "-np", "4")
    check("compile -np 4", p.returncode == 0 and "caches are a pool of 464 positions" in p.stdout,
          p.stdout + p.stderr)
    p = run(os.path.join(build, "tools/pshard-bench/pshard-bench"), "-m", model, "-s", pooled,
            "--backend", "emu", "-npp", "100", "-ntg", "8", "-npl", "4", "-c", "512", "-b", "16",
            "-t", "2")
    check("batched bench keeps the compiled window pool",
          p.returncode == 0 and "sliding-window layers 29 pages" in p.stdout, p.stdout + p.stderr)
    prompt = " ".join(["the cat sat on the mat"] * 12)  # past the ring, so it wraps
    for backend, vram in [("cpu", "0"), ("emu", "2M")]:
        runs = {}
        for name, sched in outs.items():
            p = run(run_bin, "-m", model, "-s", sched, "--backend", backend, "--vram", vram,
                    "-p", prompt, "-n", "40", "--temp", "0", "-t", "2", "-c", "512", "--json")
            check(f"{name} {backend} runs", p.returncode == 0, p.stderr)
            runs[name] = json.loads(p.stdout) if p.returncode == 0 else None
        if runs["rings"] and runs["whole"]:
            check(f"{backend}: rings give the whole caches' tokens",
                  runs["rings"]["generated_tokens"] == runs["whole"]["generated_tokens"],
                  (runs["rings"]["generated_tokens"], runs["whole"]["generated_tokens"]))
            check(f"{backend}: rings allocate less host memory",
                  runs["rings"]["memory"]["allocated_bytes"] <
                  runs["whole"]["memory"]["allocated_bytes"], (runs["rings"]["memory"],
                                                               runs["whole"]["memory"]))
    # --swa-full at run time: whole caches without a schedule; refused with a ring schedule.
    plain = {}
    for extra in [[], ["--swa-full"]]:
        p = run(run_bin, "-m", model, "-p", prompt, "-n", "40", "--temp", "0", "-t", "2", "-c",
                "512", "--json", *extra)
        check("no schedule " + " ".join(extra), p.returncode == 0, p.stderr)
        plain[bool(extra)] = json.loads(p.stdout) if p.returncode == 0 else None
    if plain[False] and plain[True]:
        check("--swa-full: the same tokens",
              plain[False]["generated_tokens"] == plain[True]["generated_tokens"])
        check("--swa-full: more host memory", plain[True]["memory"]["allocated_bytes"] >
              plain[False]["memory"]["allocated_bytes"], (plain[False]["memory"],
                                                          plain[True]["memory"]))
    p = run(run_bin, "-m", model, "-s", outs["rings"], "--swa-full", "-p", "x", "-n", "2")
    check("--swa-full with a ring schedule is refused, naming the fix",
          p.returncode != 0 and "pshard-compile --swa-full" in p.stderr, p.stderr)


def main(tmp):
    sliding_window_rings(tmp)
    auto = os.path.join(tmp, "auto.pshard")
    streamed = os.path.join(tmp, "gpu-only.pshard")
    compile_schedule(auto, "--budgets", "0,512K,768K,2M")
    compile_schedule(streamed, "--budgets", "768K", "--strategy", "gpu-only")
    for backend in ["cpu", "emu"]:
        for vram in ["0", "512K", "768K", "2M"]:
            p, out = generate("-s", auto, "--backend", backend, "--vram", vram)
            check(f"{backend} {vram} runs", p.returncode == 0, p.stderr)
            if out:
                check(f"{backend} {vram} tokens", out["generated_tokens"] == EXPECTED,
                      out["generated_tokens"])
    trace = os.path.join(tmp, "trace.json")
    p, out = generate("-s", streamed, "--backend", "emu", "--vram", "768K", "--trace", trace)
    check("streamed runs", p.returncode == 0, p.stderr)
    if out:
        st = out["stats"]
        check("streamed tokens", out["generated_tokens"] == EXPECTED, out["generated_tokens"])
        check("stats fields", all(k in st for k in ["peak_vram_bytes", "bytes_streamed", "plans"]), st)
        check("peak within budget", 0 < st["peak_vram_bytes"] <= 768 * 1024, st)
        check("bytes streamed", st["bytes_streamed"] > 0, st)
        check("plans with predicted and measured ms",
              st["plans"] and all(p["predicted_ms_per_pass"] > 0 and p["measured_ms_per_pass"] > 0
                                  for p in st["plans"]), st["plans"])
        events = json.load(open(trace))["traceEvents"]
        tracks = {e["tid"] for e in events if e.get("ph") == "X"}
        check("trace has CPU, compute and copy tracks", {1, 2} <= tracks, tracks)
    p = run(run_bin, "-m", stories, "-s", streamed, "-p", "x", "-n", "4", "--vram", "800K")
    check("text report shows plans", p.returncode == 0 and "plan:" in p.stderr, p.stderr)
    check("text report shows switches", "switches:" in p.stderr, p.stderr)
    # Without device memory and without a compiled budget 0, the run uses the schedule's
    # CPU-only plans and reports their real tiers and predictions.
    p, out = generate("-s", streamed, "--backend", "emu", "--vram", "0")
    check("vram 0 runs", p.returncode == 0, p.stderr)
    if out:
        check("vram 0 tokens", out["generated_tokens"] == EXPECTED, out["generated_tokens"])
        plans = out["stats"]["plans"]
        check("vram 0 plans report their tier, context and prediction",
              plans and all(q["tier"] in (1, 4, 16) and q["context"] == 256 and
                            q["predicted_ms_per_pass"] > 0 and q["strategy"] == "cpu-only"
                            for q in plans), plans)
    # Context ranges: a run that outgrows the short range moves to the long one's plans,
    # each reported with its range and the prediction at the contexts it ran at.
    ranged = os.path.join(tmp, "ranged.pshard")
    compile_schedule(ranged, "--budgets", "768K", "--contexts", "8,256")
    p, out = generate("-s", ranged, "--backend", "emu", "--vram", "768K")
    check("ranged runs", p.returncode == 0, p.stderr)
    if out:
        check("ranged tokens", out["generated_tokens"] == EXPECTED, out["generated_tokens"])
        contexts = {q["context"] for q in out["stats"]["plans"]}
        check("ranged plans of both ranges", contexts == {8, 256}, out["stats"]["plans"])
        check("switch stats", all(k in out["stats"] for k in ["plan_switches", "switch_ms"]),
              out["stats"])
    # Bad input: clear errors, non-zero exit.
    p = run(compile_bin, "-m", stories, "--profile", profile, "-o", os.path.join(tmp, "x.pshard"),
            "--budgets", "768K", "-c", "256", "-q")
    check("CUDA profile: the budget must hold the kernel scratch",
          p.returncode != 0 and "kernel scratch" in p.stderr, p.stderr)
    p = run(run_bin, "-m", stories, "-s", streamed, "-p", "x", "--vram", "100K")
    check("budget below minimum", p.returncode != 0 and "smallest" in p.stderr, p.stderr)
    p = run(run_bin, "-m", stories, "-s", auto, "-p", "x", "-c", "1K")
    check("context longer than compiled", p.returncode != 0 and "compiled for" in p.stderr, p.stderr)
    other = os.path.join(shared, "models/stories260K-F16.gguf")
    if os.path.exists(other):
        p = run(run_bin, "-m", other, "-s", auto, "-p", "x")
        check("another model's schedule", p.returncode != 0 and "fingerprint" in p.stderr.lower(),
              p.stderr)
    bad = os.path.join(tmp, "bad.pshard")
    with open(auto, "rb") as f:
        data = f.read()
    with open(bad, "wb") as f:
        f.write(data[: len(data) // 3])
    p = run(run_bin, "-m", stories, "-s", bad, "-p", "x")
    check("truncated schedule", p.returncode != 0 and "bad.pshard" in p.stderr, p.stderr)


if not os.path.exists(stories):
    print(f"SKIP: {stories} is not present")
    sys.exit(0)
with tempfile.TemporaryDirectory() as tmp:
    main(tmp)
sys.exit(checks.finish())
