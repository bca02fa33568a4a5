#!/usr/bin/env python3
"""The known answers of ../shared/models/README-architectures.md (llama.cpp b6097's
greedy ids, text and first-position top-3 log-probs for the Qwen-family and K-quant
variants of stories260K), reproduced by pshard-run on the cpu and on the emulated GPU
under a schedule whose budget is half the model's size.

The answers are read from the README itself, so a model added there is tested too.
Tolerances as the README states them: log-probs within 0.02 for float files, 0.3 for
quantized ones (llama.cpp rounds activations inside quantized dot products).

usage: known_answers_test.py BUILD_DIR SHARED_DIR   (exit 77: README absent)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

build, shared = sys.argv[1], sys.argv[2]
readme = os.path.join(shared, "models/README-architectures.md")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
failures = 0

ENTRY = re.compile(r"^- \*\*`(?P<file>[^`]+)`\*\*: first 16 generated ids `\[(?P<ids>[^\]]*)\]`; "
                   r"text of all 32: `(?P<text>[^`]*)`; first position top-3 (?P<top>[^;]*);")


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300)


def answers():
    out = []
    for line in open(readme, encoding="utf-8"):
        m = ENTRY.match(line.strip())
        if not m:
            continue
        top = [(int(i), float(v)) for i, v in re.findall(r"(\d+): (-?[\d.]+)", m["top"])]
        out.append((m["file"], [int(x) for x in m["ids"].split(",")], m["text"], top))
    return out


def generate(model, *extra):
    p = run(run_bin, "-m", model, "-p", "Once upon a time", "-n", "32", "--temp", "0",
            "--ignore-eos", "--json", "--top-logprobs", "3", "-t", "2", *extra)
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def check(label, out, ids, text, top, tol):
    got = out["generated_tokens"]
    if got[:16] != ids:
        fail(f"{label}: first 16 ids {got[:16]}, expected {ids}")
    if not out["text"].startswith(text):
        fail(f"{label}: text {out['text']!r}, expected {text!r}")
    first = {t["id"]: t["logprob"] for t in out["top_logprobs"][0]}
    for tok, lp in top:
        if tok not in first or abs(first[tok] - lp) > tol:
            fail(f"{label}: first-position log-prob of {tok} is {first.get(tok)}, expected "
                 f"{lp} +- {tol}")
    return max((abs(first.get(t, 99) - lp) for t, lp in top), default=0)


def main(tmp):
    entries = answers()
    if not entries:
        fail(f"no known answers found in {readme}: has its format changed?")
    for name, ids, text, top in entries:
        model = os.path.join(shared, "models", name)
        tol = 0.3 if re.search(r"-Q\d", name) else 0.02
        p, cpu = generate(model)
        if cpu is None:
            fail(f"{name}: pshard-run failed on the cpu: {p.stderr.strip()}")
            continue
        err = check(name + " cpu", cpu, ids, text, top, tol)
        budget = str(os.path.getsize(model) // 2)
        sched = os.path.join(tmp, name + ".pshard")
        # gpu-only: on the laptop profile the CPU-only plan is the fastest for these tiny
        # models, and auto would keep the emulated GPU idle.
        p = run(compile_bin, "-m", model, "--profile", profile, "-o", sched, "--budgets", budget,
                "--tiers", "1,4,16", "-c", "256", "-q", "--kernel-workspace", "0",
                "--strategy", "gpu-only")
        if p.returncode != 0:
            fail(f"{name}: pshard-compile failed: {p.stderr.strip()}")
            continue
        p, emu = generate(model, "-s", sched, "--backend", "emu", "--vram", budget)
        if emu is None:
            fail(f"{name}: pshard-run failed on emu: {p.stderr.strip()}")
            continue
        check(name + " emu", emu, ids, text, top, tol)
        peak = emu["stats"]["peak_vram_bytes"]
        if not 0 < peak <= int(budget):
            fail(f"{name}: emu peak VRAM {peak} not within (0, {budget}]")
        print(f"{name}: ids and text match on cpu and emu ({budget} B budget, peak {peak} B), "
              f"log-probs within {err:.4f}")


if not os.path.exists(readme):
    print(f"SKIP: {readme} is not present")
    sys.exit(77)
with tempfile.TemporaryDirectory() as d:
    main(d)
print("known answers:", "ok" if failures == 0 else f"{failures} failures")
sys.exit(1 if failures else 0)
