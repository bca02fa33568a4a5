#!/usr/bin/env python3
"""Golden schedules: compile fixed models against shipped reference profiles and compare
with the committed goldens using pshard-diff --strict (any placement change or a predicted
slowdown past 2% fails).

    golden_test.py <build dir> <shared dir>            # check (what CI runs)
    golden_test.py <build dir> <shared dir> --update   # rewrite goldens/ on purpose

Goldens are the JSON twin of the artifact (pshard-inspect --json), so a change shows up as
a readable diff in review. Update them only when a planner or estimator change is meant to
move schedules, and say why in the commit.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
GOLDENS = os.path.join(HERE, "goldens")
SKIP = 77  # ctest SKIP_RETURN_CODE

# name, model (a shared file, or "gen:KEY" for a model GENERATED below), profile, extra
# pshard-compile arguments
CASES = [
    # Without the CUDA kernels' ~37 MiB of scratch (as for the emulated GPU), so that
    # MiB-sized budgets stream this 1 MB model; the large shapes below keep the CUDA figure.
    ("stories260K-laptop", "stories260K.gguf", "laptop-rtx4060-8gb",
     ["--budgets", "0,4M,16M,64M", "--tiers", "1,16,256", "-c", "512",
      "--kernel-workspace", "0"]),
    # One budget and two tiers keep these goldens small (the 235B sub-layer table alone
    # lists ~1200 tensors); the full 10 x 6 grid's speed is checked by planner_test.
    ("moe235b-shape-laptop", "gen:qwen3-235b-a22b", "laptop-rtx4060-8gb",
     ["--budgets", "2G", "--tiers", "1,64", "-c", "1024"]),
    ("minitron8b-shape-laptop", "gen:minitron-8b", "laptop-rtx4060-8gb",
     ["--budgets", "1G,4G", "--tiers", "1,64", "-c", "4096"]),
]

# Shapes of real models, headers only (sparse files: no 120 GB on disk).
GENERATED = {
    # Qwen3-235B-A22B: qwen3moe, 94 layers, 64 query / 4 KV heads of 128 (so the query
    # width 8192 is twice n_embd), 128 experts of 1536, 8 used, Qwen's 151936-token vocab.
    "qwen3-235b-a22b": ["--arch", "qwen3moe", "--n-embd", "4096", "--n-layer", "94",
                        "--n-head", "64", "--n-head-kv", "4", "--head-dim", "128",
                        "--n-ff", "1536", "--n-expert", "128", "--n-expert-used", "8",
                        "--type", "q4_0", "--vocab", "151936", "--ctx", "40960",
                        "--rope-freq-base", "1000000", "--sparse", "--name", "qwen3-235b-a22b-shape"],
    # Mistral-NeMo-Minitron-8B: llama, 40 layers, 32 query / 8 KV heads of 128, FFN 11520,
    # the 131072-token Tekken vocabulary.
    "minitron-8b": ["--n-embd", "4096", "--n-layer", "40", "--n-head", "32", "--n-head-kv", "8",
                    "--head-dim", "128", "--n-ff", "11520", "--type", "q8_0",
                    "--vocab", "131072", "--ctx", "8192", "--rope-freq-base", "1000000",
                    "--sparse", "--name", "minitron-8b-shape"],
}


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    build, shared = sys.argv[1], sys.argv[2]
    update = "--update" in sys.argv[3:]
    tool = lambda name: os.path.join(build, "tools", name, name)
    failures, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for name, model, profile, extra in CASES:
            if model.startswith("gen:"):
                model_path = os.path.join(tmp, model[4:] + ".gguf")
                r = run([tool("pshard-mkmodel"), "-o", model_path] + GENERATED[model[4:]])
                if r.returncode:
                    failures.append(f"{name}: pshard-mkmodel failed: {r.stderr}")
                    continue
            else:
                model_path = os.path.join(shared, "models", model)
                if not os.path.exists(model_path):
                    skipped.append(f"{name}: {model_path} is absent")
                    continue
            out = os.path.join(tmp, name + ".pshard")
            prof = os.path.join(build, "profiles", profile + ".pshprof")
            r = run([tool("pshard-compile"), "-m", model_path, "--profile", prof, "-o", out, "-q"]
                    + extra)
            if r.returncode:
                failures.append(f"{name}: pshard-compile failed: {r.stderr}")
                continue
            golden = os.path.join(GOLDENS, name + ".json")
            if update:
                r = run([tool("pshard-inspect"), out, "--json"])
                if r.returncode:
                    failures.append(f"{name}: pshard-inspect failed: {r.stderr}")
                    continue
                with open(golden, "w") as f:
                    f.write(r.stdout)
                print(f"updated {golden}")
                continue
            if not os.path.exists(golden):
                failures.append(f"{name}: no golden {golden}; run with --update to create it")
                continue
            r = run([tool("pshard-diff"), golden, out, "--strict"])
            print(f"== {name}\n{r.stdout}{r.stderr}")
            if r.returncode:
                failures.append(f"{name}: schedule changed against {golden} (exit {r.returncode})")
    for s in skipped:
        print("skipped:", s)
    for f in failures:
        print("FAILED:", f)
    if failures:
        return 1
    return SKIP if skipped and len(skipped) == len(CASES) else 0


if __name__ == "__main__":
    sys.exit(main())
