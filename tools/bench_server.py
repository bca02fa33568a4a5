"""What the pshard-server benchmarks share: a server on a port the kernel picks, its
stderr drained, JSON posts over loopback HTTP.

    s = BenchServer(build, model, ["-np", "4"])
    status, body = s.post("/v1/embeddings", {"input": ["a", "b"]})
    s.stop()
"""
import http.client
import json
import os
import re
import statistics
import subprocess
import threading
import time


def split_args(argv, defaults):
    """BUILD MODEL [numbers...] [-- SERVER ARGS] -> (build, model, [numbers, defaults filling
    the missing ones], server args)."""
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    numbers = [int(a) for a in argv[2:]] + list(defaults[len(argv) - 2:])
    return argv[0], argv[1], numbers, extra


def print_medians(seconds, rates):
    """A markdown table of each way's median seconds (`seconds`: way -> the rounds' times)
    and rates (`rates`: column -> the amount one round does); returns the first way's
    median over the second's."""
    med = {k: statistics.median(v) for k, v in seconds.items()}
    print("| way | s | " + " | ".join(rates) + " |")
    print("| --- | ---: |" + " ---: |" * len(rates))
    for k, s in med.items():
        print(f"| {k} | {s:.2f} | " + " | ".join(f"{n / s:.1f}" for n in rates.values()) + " |")
    first, second = med.values()
    return first / second


class BenchServer:
    def __init__(self, build, model, args):
        cmd = [os.path.join(build, "tools", "pshard-server", "pshard-server"), "-m", model,
               "--port", "0", *args]
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        self.port = None
        log = []
        while self.port is None:
            line = self.proc.stderr.readline()
            if not line:
                raise RuntimeError("pshard-server did not start: " + "".join(log))
            log.append(line)
            m = re.search(r"on http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()

    def post(self, path, body):
        """(status, the answer as JSON)."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        out = r.status, json.loads(r.read())
        c.close()
        return out

    def stream(self, path, body):
        """A streamed answer's events as they arrive: (seconds since the request was sent,
        the event's JSON), up to the closing [DONE]."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=900)
        start = time.perf_counter()
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        if r.status != 200:  # an error is one JSON answer, no events: say what it was
            raise RuntimeError(f"POST {path}: HTTP {r.status}: {r.read().decode(errors='replace')}")
        for raw in r:
            line = raw.decode(errors="replace").strip()
            if line.startswith("data: ") and line != "data: [DONE]":
                yield time.perf_counter() - start, json.loads(line[6:])
        c.close()

    def meta(self):
        """The served model's facts (n_vocab, n_ctx, ...) from /v1/models."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        c.request("GET", "/v1/models")
        out = json.loads(c.getresponse().read())["data"][0]["meta"]
        c.close()
        return out

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
