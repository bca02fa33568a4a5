#!/usr/bin/env python3
"""What a JSON Schema costs per generated token, end to end: pshard-run on one model,
with and without -j, greedy and sampled, runs alternated, medians of --rounds. Prints a
Markdown table of milliseconds per generated token (the decode loop: generation time over
the tokens after the first) and each constrained case's ratio to the plain one.

usage: bench-structured-output.py BUILD MODEL [-n 64] [--rounds 3] [-t 2]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
        "address": {"type": "object", "properties": {
            "street": {"type": "string"}, "city": {"type": "string"}},
            "required": ["street", "city"]},
        "active": {"type": "boolean"},
    },
    "required": ["name", "age", "tags", "address", "active"],
}


def run(build, model, n, threads, extra):
    cmd = [os.path.join(build, "tools/pshard-run/pshard-run"), "-m", model, "-p",
           "Describe a person as JSON:", "-n", str(n), "-t", str(threads), "--json", *extra]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{' '.join(cmd)}\n{p.stderr}")
    out = json.loads(p.stdout)
    t = out["timings"]
    if t["predicted_n"] < 2:
        sys.exit(f"only {t['predicted_n']} tokens generated: {out['text']!r}")
    return t["predicted_ms"] / (t["predicted_n"] - 1), t["predicted_n"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("model")
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-t", type=int, default=2)
    a = ap.parse_args()
    schema = json.dumps(SCHEMA)
    cases = [
        ("greedy", ["--temp", "0", "--ignore-eos"]),
        ("greedy, -j schema", ["--temp", "0", "-j", schema]),
        ("sampled (T 0.8, seed 1)", ["--temp", "0.8", "--seed", "1", "--ignore-eos"]),
        ("sampled, -j schema", ["--temp", "0.8", "--seed", "1", "-j", schema]),
    ]
    ms = {name: [] for name, _ in cases}
    tokens = {}
    for _ in range(a.rounds):
        for name, extra in cases:
            per_token, n = run(a.build, a.model, a.n, a.t, extra)
            ms[name].append(per_token)
            tokens[name] = n
    print(f"| case | tokens | ms per token (median of {a.rounds}) | vs plain |")
    print("|---|--:|--:|--:|")
    for i, (name, _) in enumerate(cases):
        med = statistics.median(ms[name])
        plain = statistics.median(ms[cases[i - i % 2][0]])
        print(f"| {name} | {tokens[name]} | {med:.2f} | {med / plain:.3f}x |")


main()
