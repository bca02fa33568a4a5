"""What the pshard-server test scripts share: a server on a free port, HTTP calls with
the standard library, server-sent events, and pshard-run's answer for a prompt.

    with Server(build, model, "-np", "2") as s:
        status, body = s.json("POST", "/v1/completions", {"prompt": "Hi", "max_tokens": 4})
        events, raw = s.stream("/v1/completions", {"prompt": "Hi", "stream": True})
"""
import http.client
import json
import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cli_util import Checks, run  # noqa: E402,F401


def tool(build, name):
    return os.path.join(build, "tools", name, name)


class Server:
    """pshard-server on 127.0.0.1 and a port the kernel picks (--port 0)."""

    def __init__(self, build, model, *args, api_key=None):
        cmd = [tool(build, "pshard-server"), "-m", model, "--port", "0", "-t", "1", *args]
        if api_key:
            cmd += ["--api-key", api_key]
        self.api_key = api_key
        self.proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
        self.log = []
        self.port = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.log.append(line)
            m = re.search(r"on http://[^:]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
        if self.port is None:
            self.proc.kill()
            raise RuntimeError("pshard-server did not start: " + "".join(self.log))
        # Keep reading stderr, so that the server never blocks on a full pipe.
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self, sig=signal.SIGTERM):
        """Stops the server; its exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode

    def headers(self, extra=None):
        h = {"Content-Type": "application/json"}
        if self.api_key:
            h["Authorization"] = "Bearer " + self.api_key
        h.update(extra or {})
        return h

    def request(self, method, path, body=None, headers=None, timeout=120):
        """(status, headers, body bytes); `body` a dict (sent as JSON) or raw bytes/str."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
        conn.request(method, path, body=data, headers=self.headers(headers))
        r = conn.getresponse()
        out = (r.status, dict(r.getheaders()), r.read())
        conn.close()
        return out

    def json(self, method, path, body=None, headers=None):
        status, _, data = self.request(method, path, body, headers)
        try:
            return status, json.loads(data)
        except ValueError:
            return status, {"unparsed": data.decode("utf-8", "replace")}

    def stream(self, path, body, headers=None):
        """A streamed response read to its end: (status, [event objects], raw text, done)."""
        status, hdrs, data = self.request("POST", path, body, headers)
        raw = data.decode("utf-8")
        events, done = [], False
        for block in raw.split("\n\n"):
            if not block.startswith("data: "):
                continue
            payload = block[len("data: "):]
            if payload == "[DONE]":
                done = True
            else:
                events.append(json.loads(payload))
        return status, events, raw, done, hdrs

    def metric(self, name, labels=""):
        """One sample's value from /metrics (None when absent)."""
        _, _, data = self.request("GET", "/metrics")
        key = name + ("{" + labels + "}" if labels else "")
        for line in data.decode().splitlines():
            if line.startswith(key + " "):
                return float(line.split()[-1])
        return None


def run_text(build, model, prompt, n, *extra):
    """What pshard-run prints for the prompt, greedy: the generated text as streamed."""
    p = run(tool(build, "pshard-run"), "-m", model, "-p", prompt, "-n", str(n), "--temp", "0",
            "-t", "1", *extra)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    assert p.stdout.startswith(prompt) and p.stdout.endswith("\n"), p.stdout
    return p.stdout[len(prompt):-1]


def f32(v):
    """The float32 values of a list (pshard-run prints 9 digits, the server and JavaScript
    a float's double whole): what to compare embeddings by, bit for bit."""
    return list(struct.unpack(f"<{len(v)}f", struct.pack(f"<{len(v)}f", *v)))


def run_embedding(build, model, text, *extra):
    """pshard-run --embedding --json for the text: its JSON object, the vector as float32."""
    p = run(tool(build, "pshard-run"), "-m", model, "-p", text, "--embedding", "--json", "-t", "1",
            *extra)
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    out = json.loads(p.stdout)
    out["embedding"] = f32(out["embedding"])
    return out


def chat_text(build, model, user, n, template="chatml"):
    """pshard-run -cnv's answer to one user message, greedy."""
    p = run(tool(build, "pshard-run"), "-m", model, "-cnv", "--chat-template", template, "-n",
            str(n), "--temp", "0", "-t", "1", stdin=user + "\n")
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return p.stdout[:-1]


def npm_package(build, folder, package):
    """A JavaScript package installed from npm in BUILD/tests/tools/server/FOLDER (kept for
    later runs): the folder, or None, saying why, when node, npm or the registry is missing."""
    import shutil
    if not shutil.which("node") or not shutil.which("npm"):
        print("skipped: node and npm are needed (Debian: nodejs, npm)")
        return None
    root = os.path.join(build, "tests", "tools", "server", folder)
    if os.path.exists(os.path.join(root, "node_modules", package, "package.json")):
        return root
    os.makedirs(root, exist_ok=True)
    with open(os.path.join(root, "package.json"), "w") as f:
        json.dump({"name": "pshard-" + folder + "-test", "private": True, "type": "module"}, f)
    try:
        p = subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", package],
                           cwd=root, capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        print(f"skipped: npm install {package} timed out (is the npm registry reachable?)")
        return None
    if p.returncode != 0:
        print(f"skipped: npm install {package} failed (is the npm registry reachable?):\n" +
              p.stderr[-800:])
        return None
    return root


def named_events(raw):
    """Server-sent events that name themselves ("event: TYPE" then "data: {...}", as the
    Responses and Messages APIs send them): the data objects, each with "_named" saying
    whether its event name matched its data's type."""
    events = []
    for block in raw.split("\n\n"):
        lines = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "data" in lines:
            event = json.loads(lines["data"])
            event["_named"] = lines.get("event") == event.get("type")
            events.append(event)
    return events


def script_args():
    """A test script's BUILD_DIR and SHARED_DIR arguments and the shared stories260K model;
    exits 77 (skipped, saying why) when the model is not there."""
    build, shared = sys.argv[1], sys.argv[2]
    stories = os.path.join(shared, "models", "stories260K.gguf")
    if not os.path.exists(stories):
        print(f"SKIP: the shared model {stories} is not present")
        sys.exit(77)
    return build, shared, stories
