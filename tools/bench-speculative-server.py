#!/usr/bin/env python3
"""A draft model in pshard-server (-md), measured: PARALLEL greedy completions of NEW
tokens at once, against one server without drafts, one with the draft model at
--draft-p-min 0.75 (the default) and one at 0 (every draft whole), alternated, REPS
rounds. The answers must be equal (drafts change the passes, never the text). Prints each
server's median wall time and generated tokens/s, and the drafted tokens accepted
(/metrics).

usage: bench-speculative-server.py BUILD_DIR MODEL DRAFT_MODEL [PARALLEL=4] [NEW=128]
           [REPS=5] [-- SERVER ARGS]
The prompts are English sentences: a draft model needs text its model would continue.
"""
import http.client
import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import BenchServer, split_args  # noqa: E402

PROMPTS = ["Once upon a time", "The little dog", "Lily and Ben went to the park",
           "One day, a girl named Sue found a box", "Tom had a red ball", "The sun was hot",
           "There was a big tree", "Mom said it was time for bed"]


def metric(server, name):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    c.request("GET", "/metrics")
    text = c.getresponse().read().decode()
    c.close()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def round_trip(server, parallel, new):
    """(seconds for all answers, the answers)."""
    answers = [None] * parallel

    def one(i):
        status, body = server.post("/v1/completions", {
            "prompt": PROMPTS[i % len(PROMPTS)], "max_tokens": new, "temperature": 0,
            "ignore_eos": True})
        answers[i] = body["choices"][0]["text"] if status == 200 else body

    start = time.perf_counter()
    threads = [threading.Thread(target=one, args=(i,)) for i in range(parallel)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - start, answers


def main():
    argv = sys.argv[1:]
    if len(argv) < 3:
        sys.exit(__doc__)
    draft = argv.pop(2)
    build, model, (parallel, new, reps), extra = split_args(argv, (4, 128, 5))
    common = ["-np", str(parallel), "--no-prefix-cache", *extra]
    servers = {"plain": BenchServer(build, model, common),
               "-md, p-min 0.75": BenchServer(build, model, ["-md", draft, *common]),
               "-md, p-min 0": BenchServer(build, model,
                                           ["-md", draft, "--draft-p-min", "0", *common])}
    seconds = {k: [] for k in servers}
    try:
        want = None
        for r in range(reps):
            for k, s in servers.items():
                t, answers = round_trip(s, parallel, new)
                if want is None:
                    want = answers
                elif answers != want:
                    sys.exit(f"{k}: other answers than plain decoding: a bug")
                seconds[k].append(t)
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.2f} s" for k, v in seconds.items()))
        print(f"\n{parallel} requests at once, {new} tokens each, {reps} rounds, equal answers; "
              f"pshard-server {' '.join(common)}")
        print("| server | s (median) | tok/s | vs plain | drafted accepted |")
        print("| --- | ---: | ---: | ---: | --- |")
        for k, s in servers.items():
            med = statistics.median(seconds[k])
            ratios = [p / x for p, x in zip(seconds["plain"], seconds[k])]
            drafted = metric(s, "pshard_draft_tokens_total")
            accepted = metric(s, "pshard_draft_tokens_accepted_total")
            share = f"{accepted:.0f} of {drafted:.0f} ({100 * accepted / drafted:.0f}%)" \
                if drafted else "-"
            print(f"| {k} | {med:.3f} | {parallel * new / med:.0f} | "
                  f"{statistics.median(ratios):.3f} | {share} |")
    finally:
        for s in servers.values():
            s.stop()


if __name__ == "__main__":
    main()
