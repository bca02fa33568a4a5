#!/usr/bin/env python3
"""Reranking through pshard-server, measured: DOCS documents ranked against one query by
POST /v1/rerank, each round with new documents (so only the rerank prompt's start and the
query are shared between rounds and between a round's documents), against two servers
with -np 8: one with the prefix cache (the default), one with --no-prefix-cache;
alternated, REPS rounds. Every document's prompt starts with the same instruction and
query, so with the cache their KV pages are computed once and read by the rest. Prints
each way's median documents/s and the ratio; the scores must be equal both ways.

usage: bench-rerank.py BUILD_DIR MODEL [DOCS=32] [REPS=3] [-- SERVER ARGS]
MODEL a reranker (pooling_type rank: Qwen3-Reranker, or pshard-mkmodel --rerank).
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import BenchServer, print_medians, split_args  # noqa: E402

QUERY = "Which passage says how a small machine runs a large model?"


def documents(n, round_no):
    return [f"Passage {i} of round {round_no}: the processor computes while the weights of "
            f"layer {i % 7} stream to the device, and the plan was compiled ahead." for i in range(n)]


def main():
    build, model, (n, reps), extra = split_args(sys.argv[1:], (32, 3))
    common = ["-np", "8", "-c", "1024", *extra]
    cached = BenchServer(build, model, common)
    uncached = BenchServer(build, model, [*common, "--no-prefix-cache"])
    seconds = {"prefix cache": [], "--no-prefix-cache": []}
    tokens = 0
    try:
        for r in range(reps):
            docs = documents(n, r)
            scores = {}
            for name, server in (("prefix cache", cached), ("--no-prefix-cache", uncached)):
                start = time.perf_counter()
                status, body = server.post("/v1/rerank", {"query": QUERY, "documents": docs})
                seconds[name].append(time.perf_counter() - start)
                if status != 200:
                    sys.exit(f"{name}: {status} {body}")
                scores[name] = [(x["index"], x["relevance_score"]) for x in body["results"]]
                tokens = body["usage"]["prompt_tokens"]
            if scores["prefix cache"] != scores["--no-prefix-cache"]:
                sys.exit("the scores differ between the two servers")
    finally:
        cached.stop()
        uncached.stop()
    print(f"{n} documents a round, {tokens} prompt tokens, medians of {reps} rounds, "
          f"server args: {' '.join(common)}\n")
    ratio = print_medians(seconds, {"documents/s": n, "tokens/s": tokens})
    print(f"\nwith the prefix cache: {1 / ratio:.2f}x the documents/s without; scores equal "
          "both ways")


if __name__ == "__main__":
    main()
