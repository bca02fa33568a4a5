#!/usr/bin/env python3
"""The chat page at "/" in a real browser: headless Chromium (Debian's `chromium`) loads
it from pshard-server, the page streams a first answer (sent from its query string) and
a second one typed into its form, and both equal what /v1/chat/completions answers for
the same conversation. Chromium is driven over its DevTools pipe (--remote-debugging-pipe:
NUL-separated JSON on fds 3 and 4), so no library beyond Python's is needed; a
screenshot is left in the build tree. Skips, saying why, without chromium.

usage: server_page_test.py BUILD_DIR SHARED_DIR
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

from server_util import Checks, Server

build, shared = sys.argv[1], sys.argv[2]
stories = os.path.join(shared, "models/stories260K.gguf")
checks = Checks()
check = checks.check


class Browser:
    """Chromium over the DevTools protocol's pipe transport."""

    def __init__(self, exe, profile_dir):
        to_chrome_r, self.to_chrome = os.pipe()
        self.from_chrome, from_chrome_w = os.pipe()

        def fds():  # chromium reads commands on fd 3 and answers on fd 4
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-pipe", f"--user-data-dir={profile_dir}", "about:blank"],
            preexec_fn=fds, close_fds=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.next_id = 0
        self.buffer = b""

    def call(self, method, session=None, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self.to_chrome, json.dumps(msg).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.from_chrome, 1 << 16)
                if not chunk:
                    raise RuntimeError("chromium closed its DevTools pipe")
                self.buffer += chunk
            raw, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(raw)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply["result"]

    def evaluate(self, session, expression):
        r = self.call("Runtime.evaluate", session, expression=expression, returnByValue=True,
                      awaitPromise=True)
        return r["result"].get("value")

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:  # noqa: BLE001 - it is going away either way
            pass
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def wait_for(browser, session, expression, value, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if browser.evaluate(session, expression) == value:
            return True
        time.sleep(0.1)
    return False


MESSAGES = ("JSON.stringify([...document.querySelectorAll('.message')]"
            ".map(e => [e.className, e.textContent, e.dataset.finish || null]))")


THINKING = 'root ::= "<think>\\n" [a-z]{2,6} "\\n</think>\\n\\n" [a-z ]{1,8}'


def main():
    if not os.path.exists(stories):
        print(f"skipped: {stories} is not present")
        return 77
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("skipped: no chromium (Debian: apt-get install chromium)")
        return 77
    first, second, n = "Tell me a story", "And then?", 16
    with Server(build, stories, "--chat-template", "chatml") as s, \
            tempfile.TemporaryDirectory() as profile:
        def api(conversation):
            status, body = s.json("POST", "/v1/chat/completions", {
                "messages": conversation, "max_tokens": n, "temperature": 0})
            return body["choices"][0]["message"]["content"]

        want1 = api([{"role": "user", "content": first}])
        want2 = api([{"role": "user", "content": first}, {"role": "assistant", "content": want1},
                     {"role": "user", "content": second}])
        _, headers, page = s.request("GET", "/")
        check("page served", headers.get("Content-Type", "").startswith("text/html") and
              b"/v1/chat/completions" in page, headers)

        browser = Browser(exe, profile)
        try:
            query = urllib.parse.urlencode({"q": first, "temperature": 0, "max_tokens": n})
            target = browser.call("Target.createTarget",
                                  url=f"http://127.0.0.1:{s.port}/?{query}")["targetId"]
            session = browser.call("Target.attachToTarget", targetId=target,
                                   flatten=True)["sessionId"]
            check("first answer streamed", wait_for(browser, session,
                                                    "document.body.dataset.state", "done"),
                  browser.evaluate(session, "document.body.outerHTML"))
            got = json.loads(browser.evaluate(session, MESSAGES))
            check("first answer == the API's",
                  got == [["message user", first, None], ["message assistant", want1, "length"]], got)
            # A second turn typed into the form: the page sends the whole conversation.
            browser.evaluate(session, f"""document.getElementById('input').value = {json.dumps(second)};
                document.body.dataset.state = 'typed';
                document.getElementById('form').requestSubmit(); true""")
            check("second answer streamed", wait_for(browser, session,
                                                     "document.body.dataset.state", "done"), "")
            got = json.loads(browser.evaluate(session, MESSAGES))
            check("second answer == the API's", len(got) == 4 and got[3][1] == want2, (got, want2))
            # A thinking answer (a grammar, slipped into the page's requests, forces one): the
            # thought shown apart from the answer, and only the answer sent back next turn.
            third = "Think first"
            history = [{"role": "user", "content": first}, {"role": "assistant", "content": want1},
                       {"role": "user", "content": second},
                       {"role": "assistant", "content": want2},
                       {"role": "user", "content": third}]
            _, body = s.json("POST", "/v1/chat/completions", {
                "messages": history, "max_tokens": 60, "temperature": 0, "grammar": THINKING})
            want3 = body["choices"][0]["message"]
            browser.evaluate(session, f"""const real = window.fetch;
                window.fetch = (url, init) => {{
                  if (init && init.body) {{
                    const b = JSON.parse(init.body);
                    b.grammar = {json.dumps(THINKING)};
                    b.max_tokens = 60;
                    init = {{...init, body: JSON.stringify(b)}};
                  }}
                  return real(url, init);
                }};
                document.getElementById('input').value = {json.dumps(third)};
                document.body.dataset.state = 'typed';
                document.getElementById('form').requestSubmit(); true""")
            check("thinking answer streamed", wait_for(browser, session,
                                                       "document.body.dataset.state", "done"), "")
            shown = json.loads(browser.evaluate(session, """JSON.stringify((() => {
                const m = [...document.querySelectorAll('.message')].pop();
                const t = m.querySelector('.thought-text');
                return [t ? t.textContent : null, m.querySelector('.answer').textContent,
                        m.querySelector('details.thought').open];
              })())"""))
            check("the thought apart from the answer, folded",
                  want3.get("reasoning_content") and
                  shown == [want3["reasoning_content"], want3["content"], False], (shown, want3))
            check("model line", "stories260K" in browser.evaluate(
                session, "document.getElementById('model').textContent"), "")
            shot = browser.call("Page.captureScreenshot", session)["data"]
            path = os.path.join(build, "tests", "tools", "server", "chat_page.png")
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as f:
                f.write(base64.b64decode(shot))
            check("screenshot", os.path.getsize(path) > 1000, path)
        finally:
            browser.close()
    return checks.finish()


sys.exit(main())
