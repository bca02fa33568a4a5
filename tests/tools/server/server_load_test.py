#!/usr/bin/env python3
"""A bounded load test on loopback: 64 concurrent streaming clients send 320 requests
(five each, prompts and sampling mixed, half greedy) to a server with 4 slots and a
queue that holds everyone waiting; all must succeed within the time limit, every stream
well formed, every greedy answer equal to the same prompt's answer alone.

usage: server_load_test.py BUILD_DIR SHARED_DIR [CLIENTS] [PER_CLIENT] [TIME_LIMIT_S]
"""
import os
import sys
import threading
import time

from server_util import Checks, Server

build, shared = sys.argv[1], sys.argv[2]
clients = int(sys.argv[3]) if len(sys.argv) > 3 else 64
per_client = int(sys.argv[4]) if len(sys.argv) > 4 else 5
time_limit = float(sys.argv[5]) if len(sys.argv) > 5 else 120
stories = os.path.join(shared, "models/stories260K.gguf")
checks = Checks()
PROMPTS = ["Once upon a time", "The little dog", "Tom and Sue went", "One day, a girl",
           "The sun was hot and", "Ben had a red ball", "There was a big tree", "Mom said"]


def request_for(client, i):
    prompt = PROMPTS[(client + i) % len(PROMPTS)]
    body = {"prompt": prompt, "max_tokens": 16, "stream": True}
    if (client + i) % 2 == 0:
        body["temperature"] = 0
    else:
        body.update(temperature=0.9, seed=client * 100 + i)
    return body


def main():
    if not os.path.exists(stories):
        print(f"skipped: {stories} is not present")
        return 77
    with Server(build, stories, "-np", "4", "--queue", str(clients)) as s:
        want = {}
        for p in PROMPTS:
            _, body = s.json("POST", "/v1/completions", {"prompt": p, "max_tokens": 16, "temperature": 0})
            want[p] = body["choices"][0]["text"]
        failures, lock = [], threading.Lock()
        done = [0]
        start = time.time()

        def client(c):
            for i in range(per_client):
                body = request_for(c, i)
                try:
                    status, events, raw, finished, _ = s.stream("/v1/completions", body)
                    text = "".join(e["choices"][0]["text"] for e in events if e.get("choices"))
                    errors = []
                    if status != 200:
                        errors.append(f"status {status}: {raw[:200]}")
                    elif not finished:
                        errors.append("no [DONE]")
                    elif events[-1]["choices"][0]["finish_reason"] not in ("stop", "length"):
                        errors.append("no finish_reason")
                    elif body.get("temperature") == 0 and text != want[body["prompt"]]:
                        errors.append(f"greedy answer differs: {text!r}")
                except Exception as e:  # noqa: BLE001 - a failed request is what this counts
                    errors = [repr(e)]
                with lock:
                    done[0] += 1
                    failures.extend(f"client {c} request {i}: {e}" for e in errors)

        threads = [threading.Thread(target=client, args=(c,), daemon=True) for c in range(clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=max(0.0, time_limit - (time.time() - start)))
        elapsed = time.time() - start
        total = clients * per_client
        print(f"{done[0]}/{total} requests in {elapsed:.1f} s "
              f"({done[0] / elapsed:.1f} requests/s), {len(failures)} failed")
        checks.check("all requests done in time", done[0] == total, f"{done[0]}/{total}")
        checks.check("zero failed requests", not failures, "\n".join(failures[:10]))
        checks.check("nothing left running", s.metric("pshard_requests_running") == 0 and
                     s.metric("pshard_requests_queued") == 0, "")
        checks.check("every request counted", s.metric("pshard_requests_added_total") ==
                     total + len(PROMPTS), "")
    return checks.finish()


sys.exit(main())
