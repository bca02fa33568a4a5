#!/usr/bin/env python3
"""Prefix caching in pshard-server, measured: a chat of TURNS turns (each prompt is the
previous prompt, its answer and NEW more tokens, as a chat client resends the whole
conversation) against one server with the prefix cache and one with --no-prefix-cache,
alternated turn by turn, REPS conversations each. Prints each turn's median time to the
first token and to the whole answer, both servers side by side, the ratio, and the
prompt tokens the cache served (usage.prompt_tokens_details.cached_tokens). The answers
must be equal (greedy): the cache changes no token. The answers go back in as fresh ids of
their length (the response has no ids), so the cache serves the earlier prompts but not
the answers: a lower bound of what a chat client gets.

usage: bench-prefix-cache.py BUILD_DIR MODEL [TURNS=6] [NEW=200] [REPS=3] [-- SERVER ARGS]
Token-id prompts (random ids below the vocabulary's size, from a seed), so any model
works, synthetic ones too.
"""
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_server import BenchServer, split_args  # noqa: E402


class Server(BenchServer):
    def __init__(self, build, model, args):
        super().__init__(build, model, ["-np", "1", *args])

    def complete(self, prompt, max_tokens):
        """(seconds to the first token, seconds in all, answer ids, cached tokens)."""
        body = {"prompt": prompt, "max_tokens": max_tokens, "temperature": 0, "stream": True,
                "stream_options": {"include_usage": True}, "logprobs": 1}
        first, total, text, cached = None, 0.0, "", 0
        for total, ev in self.stream("/v1/completions", body):
            if ev.get("usage"):
                cached = ev["usage"]["prompt_tokens_details"]["cached_tokens"]
            for ch in ev.get("choices", []):
                if first is None and ch.get("text") is not None:
                    first = total
                text += ch.get("text") or ""
        return first, total, text, cached


def main():
    build, model, (turns, new, reps), extra = split_args(sys.argv[1:], (6, 200, 3))
    answer_tokens = 16
    servers = {"cache": Server(build, model, extra),
               "no cache": Server(build, model, ["--no-prefix-cache", *extra])}
    top = min(30000, servers["cache"].meta()["n_vocab"])  # ids 0..2: BOS, EOS and the like
    rows = {k: [[] for _ in range(turns)] for k in servers}
    cached = [[] for _ in range(turns)]
    try:
        for rep in range(reps):
            rng = random.Random(1000 + rep)
            prompts = {k: [1] for k in servers}
            for t in range(turns):
                more = [rng.randrange(3, top) for _ in range(new)]
                answers = {}
                for k, s in servers.items():  # alternated: the same moment for both
                    prompts[k] = prompts[k] + more
                    first, total, text, c = s.complete(prompts[k], answer_tokens)
                    rows[k][t].append((first, total))
                    answers[k] = text
                    if k == "cache":
                        cached[t].append(c)
                if answers["cache"] != answers["no cache"]:
                    raise SystemExit(f"turn {t + 1}: the answers differ")
                # The client resends the answer with the next turn. Its ids are not in the
                # response, so fresh ids of its length stand in: the cache then serves the
                # earlier prompts only, not the answers it also holds (a lower bound).
                filler = [rng.randrange(3, top) for _ in range(answer_tokens)]
                for k in servers:
                    prompts[k] = prompts[k] + filler
    finally:
        for s in servers.values():
            s.stop()
    print(f"model {os.path.basename(model)}, {turns} turns of +{new} prompt tokens "
          f"(+{answer_tokens} answer), {answer_tokens} new tokens per turn, medians of {reps}")
    print("| turn | prompt tokens | cached | TTFT cache (s) | TTFT no cache (s) | ratio | "
          "total cache (s) | total no cache (s) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for t in range(turns):
        n = 1 + (t + 1) * new + t * answer_tokens
        fc = statistics.median(r[0] for r in rows["cache"][t])
        fn = statistics.median(r[0] for r in rows["no cache"][t])
        tc = statistics.median(r[1] for r in rows["cache"][t])
        tn = statistics.median(r[1] for r in rows["no cache"][t])
        print(f"| {t + 1} | {n} | {statistics.median(cached[t]):.0f} | {fc:.3f} | {fn:.3f} | "
              f"{fn / fc:.2f}x | {tc:.3f} | {tn:.3f} |")


if __name__ == "__main__":
    main()
