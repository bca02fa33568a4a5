#!/usr/bin/env python3
"""Expert-level MoE placement against the best whole-block plan, measured on `emu`.

Profiles the emulated GPU (slow PCIe, one kernel thread against one CPU thread: a PC
whose PCIe is slower than its CPU memory), takes a routing profile of the model on the
first half of a real text, compiles the model twice at one budget — expert-level (the
default) and --whole-moe — and runs pshard-bench on both with the text's second half as
the tests' tokens (--text), alternating, ROUNDS times; prints each
round's tok/s and the medians and ratios. The machine may be shared and noisy: the two
schedules run side by side in every round, so compare the ratios.

  /usr/bin/python3 tools/bench-expert-level.py BUILD MODEL TEXT [--budget 900M]
      [--pcie 4] [--rounds 5] [--reps 3] [--work DIR]

e.g. MODEL = the moe8x2 shape (pshard-mkmodel --n-embd 1024 --n-layer 16 --n-head 16
--n-head-kv 8 --n-ff 4096 --n-expert 8 --n-expert-used 2 --type q8_0), TEXT = any
English text (../shared/DESIGN.md).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def run(*cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("model")
    ap.add_argument("text")
    ap.add_argument("--budget", default="900M")
    ap.add_argument("--pcie", default="4", help="emulated PCIe GB/s")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3, help="pshard-bench repetitions per round")
    ap.add_argument("--work", default="bench-expert-level")
    a = ap.parse_args()
    tool = lambda name: os.path.join(a.build, "tools", name, name)
    os.makedirs(a.work, exist_ok=True)
    profile = os.path.join(a.work, f"emu-pcie{a.pcie}.pshprof")
    if not os.path.exists(profile):
        run(tool("pshard-profile"), "--backend", "emu", "--emu-pcie", a.pcie, "--quick",
            "--threads", "1", "-q", "-o", profile)
    # The routing profile from the text's first half; the tests decode its second half
    # (pshard-bench --text), so the plans meet text that routes like the profile's
    # without being the profiled text itself.
    with open(a.text, encoding="utf-8") as f:
        whole = f.read()
    halves = (os.path.join(a.work, "profiled.txt"), os.path.join(a.work, "held-out.txt"))
    for path, part in zip(halves, (whole[:len(whole) // 2], whole[len(whole) // 2:])):
        with open(path, "w", encoding="utf-8") as f:
            f.write(part)
    routing = os.path.join(a.work, "routing.json")
    if not os.path.exists(routing):
        run(tool("pshard-profile"), "--routing", "-m", a.model, "-f", halves[0], "-n", "512",
            "-c", "256", "-o", routing)
    schedules = {}
    for name, extra in (("expert-level", []), ("whole-block", ["--whole-moe"])):
        path = os.path.join(a.work, f"{name}.pshard")
        out = run(tool("pshard-compile"), "-m", a.model, "--profile", profile, "--routing", routing,
                  "--budgets", a.budget, "--tiers", "1,16", "-c", "512", "--kernel-workspace", "0",
                  "-o", path, *extra)
        print(f"{name}: pshard-compile plans")
        print("\n".join(l for l in out.splitlines() if l.startswith(("budget", " ", a.budget[:3]))))
        schedules[name] = path
    results = {name: {"pp64": [], "tg16": []} for name in schedules}
    plans = {name: {} for name in schedules} # the last round's plans, with their expert uses
    for r in range(a.rounds):
        for name, path in schedules.items():
            out = run(tool("pshard-bench"), "-m", a.model, "-s", path, "--backend", "emu",
                      "-p", "64", "-n", "16", "-r", str(a.reps), "-t", "1", "-o", "json",
                      "--text", halves[1])
            for row in json.loads(out):
                results[name][row["test"]].append(row["avg_ts"])
                plans[name][row["test"]] = row.get("plans", "")
        print(f"round {r + 1}: " + ", ".join(
            f"{n} pp64 {v['pp64'][-1]:.1f} tg16 {v['tg16'][-1]:.2f}" for n, v in results.items()))
    print(f"\nmedians of {a.rounds} rounds (each the mean of {a.reps} runs), tok/s, budget {a.budget}, "
          f"emu PCIe {a.pcie} GB/s:")
    for test in ("pp64", "tg16"):
        el = statistics.median(results["expert-level"][test])
        wb = statistics.median(results["whole-block"][test])
        ratios = [x / y for x, y in zip(results["expert-level"][test], results["whole-block"][test])]
        print(f"  {test}: expert-level {el:.2f}, whole-block {wb:.2f}, ratio {el / wb:.3f} "
              f"(per-round ratios median {statistics.median(ratios):.3f}, "
              f"min {min(ratios):.3f}, max {max(ratios):.3f})")
    print("\nthe last round's plans (predicted and measured per pass; where the routed experts ran):")
    for name, tests in plans.items():
        for test, text in tests.items():
            print(f"  {name} {test}: {text}")


if __name__ == "__main__":
    main()
