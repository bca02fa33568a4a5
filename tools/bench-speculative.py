#!/usr/bin/env python3
"""Speculative decoding against plain decoding, measured with pshard-run.

Runs pshard-run --json on one prompt with plain decoding (--draft-max 0), adaptive
prompt-lookup drafting (--draft-max N) and fixed drafting (--draft-max N --draft-fixed),
and with --draft-model M a draft model at --draft-p-min 0.75 (the default) and 0, alternating,
ROUNDS times; checks that every run generated the same tokens (speculation changes the
passes, never the text) and prints each configuration's median generation tokens/s, its
ratio to plain decoding (medians of the per-round ratios: the machine may be shared and
noisy), the accepted share of the drafted tokens and the tokens per decode pass.

  /usr/bin/python3 tools/bench-speculative.py BUILD MODEL PROMPT_FILE [-n 256]
      [--draft 8] [--rounds 5] [--draft-model M] [-- extra pshard-run arguments, e.g. -t 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("model")
    ap.add_argument("prompt_file")
    ap.add_argument("-n", type=int, default=256, help="tokens to generate")
    ap.add_argument("--draft", type=int, default=8, help="--draft-max of the speculative runs")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--draft-model", help="also measure this draft model (-md)")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    a = ap.parse_args(argv[:cut])
    extra = argv[cut + 1:]  # after --: more pshard-run arguments
    tool = os.path.join(a.build, "tools", "pshard-run", "pshard-run")
    configs = {
        "plain": ["--draft-max", "0"],
        f"adaptive {a.draft}": ["--draft-max", str(a.draft)],
        f"fixed {a.draft}": ["--draft-max", str(a.draft), "--draft-fixed"],
    }
    if a.draft_model:
        for p_min in ("0.75", "0"):
            configs[f"-md, p-min {p_min}"] = ["-md", a.draft_model, "--draft-max", str(a.draft),
                                             "--draft-p-min", p_min]
    speed = {name: [] for name in configs}
    last = {}
    tokens = None
    for r in range(a.rounds):
        for name, args in configs.items():
            cmd = [tool, "-m", a.model, "-f", a.prompt_file, "-n", str(a.n), "--temp", "0",
                   "--ignore-eos", "--json", *args, *extra]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
            out = json.loads(p.stdout)
            if tokens is None:
                tokens = out["generated_tokens"]
            elif out["generated_tokens"] != tokens:
                sys.exit(f"{name} generated other tokens than plain decoding: a bug")
            speed[name].append(out["timings"]["predicted_per_second"])
            last[name] = out["timings"]
        print(f"round {r + 1}: " + ", ".join(f"{n} {v[-1]:.2f} tok/s" for n, v in speed.items()))
    print(f"\n{a.n} tokens, {a.rounds} rounds, identical tokens in every run; "
          f"pshard-run {' '.join(extra)}")
    print("| decoding | tok/s (median) | vs plain | drafted accepted | tokens per pass |")
    print("| --- | --- | --- | --- | --- |")
    for name in configs:
        t = last[name]
        ratios = [x / y for x, y in zip(speed[name], speed["plain"])]
        accepted = (f"{t['draft_accepted_n']} of {t['draft_n']} "
                    f"({100 * t['draft_accepted_n'] / t['draft_n']:.0f}%)" if t["draft_n"] else "-")
        per_pass = (t["predicted_n"] - 1) / t["decode_passes"] if t["decode_passes"] else 0
        print(f"| {name} | {statistics.median(speed[name]):.2f} | {statistics.median(ratios):.3f} "
              f"| {accepted} | {per_pass:.2f} |")


if __name__ == "__main__":
    main()
