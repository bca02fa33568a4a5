#!/usr/bin/env python3
"""Embeddings through pshard-server, measured: TEXTS short texts (12 to 30 words) embedded
one request at a time against one server with a single sequence (-np 1), and as one
/v1/embeddings request of all of them against a server with -np 8 (up to 8 texts share
each forward pass, so each pass reads the weights once for several texts), alternated,
REPS rounds. Prints each way's median texts/s and prompt tokens/s and the ratio; the
vectors must be equal both ways (bit for bit). Extra server arguments go after "--" (a
schedule and the emulated GPU: -s MODEL.pshard --backend emu --vram 300M).

usage: bench-embeddings.py BUILD_DIR MODEL [TEXTS=32] [REPS=3] [-- SERVER ARGS]
The servers pool by last token (--pooling last), so any model works.
"""
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import BenchServer, print_medians, split_args  # noqa: E402

WORDS = ("the model reads every token of a text and its last layer becomes one vector whose "
         "neighbours mean the same so a search finds passages by meaning rather than words "
         "small machines run large models by streaming weights while the processor computes").split()


def texts(n, seed=5):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(12, 30))) for _ in range(n)]


def main():
    build, model, (n, reps), extra = split_args(sys.argv[1:], (32, 3))
    inputs = texts(n)
    common = ["--pooling", "last", "-c", "512", *extra]
    one = BenchServer(build, model, ["-np", "1", *common])
    many = BenchServer(build, model, ["-np", "8", *common])
    seconds = {"one request per text, -np 1": [], "one request of all, -np 8": []}
    vectors = {}
    tokens = 0
    try:
        for _ in range(reps):
            start = time.perf_counter()
            got = []
            for t in inputs:
                status, body = one.post("/v1/embeddings", {"input": t})
                if status != 200:
                    sys.exit(f"-np 1: {status} {body}")
                got.append(body["data"][0]["embedding"])
            seconds["one request per text, -np 1"].append(time.perf_counter() - start)
            vectors["one"] = got
            start = time.perf_counter()
            status, body = many.post("/v1/embeddings", {"input": inputs})
            seconds["one request of all, -np 8"].append(time.perf_counter() - start)
            if status != 200:
                sys.exit(f"-np 8: {status} {body}")
            vectors["many"] = [d["embedding"] for d in body["data"]]
            tokens = body["usage"]["prompt_tokens"]
    finally:
        one.stop()
        many.stop()
    if vectors["one"] != vectors["many"]:
        sys.exit("the vectors differ between the two ways")
    print(f"{n} texts, {tokens} prompt tokens, medians of {reps} rounds, "
          f"server args: {' '.join(common)}\n")
    ratio = print_medians(seconds, {"texts/s": n, "tokens/s": tokens})
    print(f"\nbatched / one at a time: {ratio:.2f}x; vectors equal both ways")


if __name__ == "__main__":
    main()
