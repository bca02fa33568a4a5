#!/usr/bin/env python3
"""`n` choices through pshard-server, measured: N sampled answers of one prompt (MAX_TOKENS
each, ignore_eos) asked as one request with "n": N against a server with -np N (the N
sequences share every decode pass, so each pass reads the weights once for all of them),
and as N requests one at a time, seed + i each, against a server with -np 1 — what a
client without `n` does. Alternated, REPS rounds; prints each way's median seconds and
generated tokens/s and the ratio. Choice i must equal the one-at-a-time answer of seed + i
(the script stops otherwise). Extra server arguments go after "--" (a schedule and the
emulated GPU: -s MODEL.pshard --backend emu --vram 300M).

usage: bench-choices.py BUILD_DIR MODEL [N=8] [MAX_TOKENS=64] [REPS=3] [-- SERVER ARGS]
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import BenchServer, print_medians, split_args  # noqa: E402

PROMPT = "Once upon a time, in a small town by the sea, there lived"


def main():
    build, model, (n, max_tokens, reps), extra = split_args(sys.argv[1:], (8, 64, 3))
    req = {"prompt": PROMPT, "max_tokens": max_tokens, "temperature": 0.8, "seed": 7,
           "ignore_eos": True}
    common = ["-c", "512", *extra]
    one = BenchServer(build, model, ["-np", "1", *common])
    many = BenchServer(build, model, ["-np", str(n), *common])
    seconds = {f"{n} requests one at a time, -np 1": [], f"one request with n = {n}, -np {n}": []}
    texts = {}
    try:
        for _ in range(reps):
            start = time.perf_counter()
            got = []
            for i in range(n):
                status, body = one.post("/v1/completions", dict(req, seed=7 + i))
                if status != 200:
                    sys.exit(f"-np 1: {status} {body}")
                got.append(body["choices"][0]["text"])
            seconds[f"{n} requests one at a time, -np 1"].append(time.perf_counter() - start)
            texts["one"] = got
            start = time.perf_counter()
            status, body = many.post("/v1/completions", dict(req, n=n))
            seconds[f"one request with n = {n}, -np {n}"].append(time.perf_counter() - start)
            if status != 200:
                sys.exit(f"n = {n}: {status} {body}")
            texts["many"] = [c["text"] for c in sorted(body["choices"], key=lambda c: c["index"])]
    finally:
        one.stop()
        many.stop()
    if texts["one"] != texts["many"]:
        sys.exit("choice i differs from the one-at-a-time answer of seed + i")
    tokens = n * max_tokens
    print(f"{n} answers of {max_tokens} tokens, medians of {reps} rounds, "
          f"server args: {' '.join(common)}\n")
    ratio = print_medians(seconds, {"generated tokens/s": tokens})
    print(f"\nn = {n} / one at a time: {ratio:.2f}x; every choice equal to its seed's answer")


if __name__ == "__main__":
    main()
