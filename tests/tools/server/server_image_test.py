#!/usr/bin/env python3
"""pshard-server --mmproj on a generated Qwen2-VL language model and projector: a chat
message with an image_url part (a base64 data URL) is answered, greedy, with exactly the
text pshard-run --mmproj --image gives for the same prompt and image — streamed and not,
and while other image and text requests share the batch — and every bad image part is a
400 with OpenAI's error object: bad base64, bytes that are no image, an http(s) URL (the
server fetches nothing), too many images, an image sent to a server without --mmproj.

usage: server_image_test.py BUILD_DIR SHARED_DIR
"""
import base64
import json
import os
import sys
import tempfile
import threading

from server_util import Checks, Server, run, tool

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cli_util import write_png  # noqa: E402

build = sys.argv[1]
checks = Checks()
check = checks.check
N = 8
PLACE = "<|vision_start|><|image_pad|><|vision_end|>"
QUESTION = "What is in the picture?"


def image_png(path, w, h, seed):
    rgb = bytearray()
    for y in range(h):
        for x in range(w):
            v = (x * 7 + y * 13 + seed * 29) % 256
            rgb += bytes([v, (v * 3 + seed) % 256, 255 - v])
    write_png(path, w, h, rgb)
    with open(path, "rb") as f:
        return f.read()


def data_url(png):
    return "data:image/png;base64," + base64.b64encode(png).decode()


def chat_body(png, stream=False, question=QUESTION):
    return {"messages": [{"role": "user", "content": [
        {"type": "image_url", "image_url": {"url": data_url(png)}},
        {"type": "text", "text": question}]}],
        "max_tokens": N, "temperature": 0, "ignore_eos": True, "stream": stream}


def pshard_run(lm, proj, image, question=QUESTION):
    """pshard-run's greedy answer to the chatml prompt the server renders."""
    prompt = f"<|im_start|>user\n{PLACE}{question}<|im_end|>\n<|im_start|>assistant\n"
    p = run(tool(build, "pshard-run"), "-m", lm, "--mmproj", proj, "--image", image, "-p", prompt,
            "-n", str(N), "--temp", "0", "--ignore-eos", "--json", "-t", "1")
    if p.returncode != 0:
        raise RuntimeError(p.stderr)
    return json.loads(p.stdout)


def answer(s, body):
    """The assistant's text, the usage and the status of a chat request (streamed or not)."""
    if body.get("stream"):
        status, events, _, done, _ = s.stream("/v1/chat/completions", body)
        text = "".join(e["choices"][0]["delta"].get("content", "") or ""
                       for e in events if e.get("choices"))
        return status, text if done else None, None
    status, got = s.json("POST", "/v1/chat/completions", body)
    if status != 200:
        return status, None, got
    return status, got["choices"][0]["message"]["content"], got["usage"]


def expect_error(s, name, body, code, says):
    status, got = s.json("POST", "/v1/chat/completions", body)
    e = got.get("error", {}) if isinstance(got, dict) else {}
    check(name, status == 400 and e.get("type") == "invalid_request_error" and
          e.get("code") == code and says in e.get("message", ""),
          f"{status} {got}")


def main(tmp):
    lm, proj = os.path.join(tmp, "qwen2vl.gguf"), os.path.join(tmp, "mmproj.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", lm, "--arch", "qwen2vl", "--mmproj-out", proj,
            "--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff",
            "96", "--v-n-embd", "32", "--v-n-head", "2", "--v-n-layer", "2", "--v-image-size",
            "112", "--v-window-size", "56")
    if p.returncode != 0:
        check("pshard-mkmodel", False, p.stderr)
        return
    a_path, b_path = os.path.join(tmp, "a.png"), os.path.join(tmp, "b.png")
    a, b = image_png(a_path, 90, 60, 1), image_png(b_path, 60, 90, 2)
    ref_a, ref_b = pshard_run(lm, proj, a_path), pshard_run(lm, proj, b_path)
    check("the two images give different answers (the image is read)",
          ref_a["top_logprobs"] != ref_b["top_logprobs"] or ref_a["text"] != ref_b["text"])

    with Server(build, lm, "--mmproj", proj, "--chat-template", "chatml", "-np", "3") as s:
        status, text, usage = answer(s, chat_body(a))
        check("image chat: 200", status == 200, f"{status} {usage}")
        check("image chat == pshard-run --mmproj --image", text == ref_a["text"],
              f"{text!r} vs {ref_a['text']!r}")
        check("image chat: prompt tokens as pshard-run's",
              usage and usage["prompt_tokens"] == len(ref_a["prompt_tokens"]),
              f"{usage} vs {len(ref_a['prompt_tokens'])}")
        status, text, _ = answer(s, chat_body(a, stream=True))
        check("streamed image chat == pshard-run", status == 200 and text == ref_a["text"],
              f"{status} {text!r}")

        # Image and text requests together in the batch: each its answer alone.
        text_body = {"messages": [{"role": "user", "content": "Hello there"}], "max_tokens": N,
                     "temperature": 0, "ignore_eos": True}
        _, text_alone, _ = answer(s, text_body)
        jobs = [("a", chat_body(a), ref_a["text"]), ("b streamed", chat_body(b, True), ref_b["text"]),
                ("text", text_body, text_alone), ("a streamed", chat_body(a, True), ref_a["text"]),
                ("text streamed", dict(text_body, stream=True), text_alone)]
        results = {}

        def worker(name, body):
            results[name] = answer(s, body)
        threads = [threading.Thread(target=worker, args=(n, body)) for n, body, _ in jobs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for name, _, want in jobs:
            status, text, _ = results[name]
            check(f"concurrent {name} == alone", status == 200 and text == want,
                  f"{status} {text!r} vs {want!r}")

        def with_url(url):
            body = chat_body(a)
            body["messages"][0]["content"][0]["image_url"]["url"] = url
            return body
        expect_error(s, "bad base64", with_url("data:image/png;base64,@@not-base64@@"),
                     "invalid_base64", "not valid base64")
        expect_error(s, "not an image", with_url(data_url(b"this is not a png at all")),
                     "invalid_image", "not an image")
        expect_error(s, "http URL", with_url("https://example.com/cat.png"), "invalid_image_url",
                     "only data URLs")
        expect_error(s, "not a data URL", with_url("file:///etc/passwd"), "invalid_image_url",
                     "base64 data URL")
        two = chat_body(a)
        two["messages"][0]["content"].append(two["messages"][0]["content"][0])
        expect_error(s, "too many images", two, "too_many_images", "too many images")
        status, text, _ = answer(s, chat_body(a))
        check("still serving after the errors", status == 200 and text == ref_a["text"], text)

    with Server(build, lm, "--chat-template", "chatml") as s:
        expect_error(s, "image without --mmproj", chat_body(a), "images_unsupported", "--mmproj")


with tempfile.TemporaryDirectory() as tmp:
    main(tmp)
sys.exit(checks.finish())
