#!/usr/bin/env python3
"""Code infill: POST /infill (llama-server's body and answer) and /v1/completions with
`suffix` build the fill-in-the-middle prompt the test builds itself from token ids —
[BOS] [repo]myproject\\n ([file_sep]name\\ntext)* [file_sep]filename\\n [prefix]before
[suffix]after[middle]prompt — so their greedy answers equal /v1/completions given those
ids; without repository markers the extra files' texts come first; code that spells a
marker is text; a stream sends the same content; a model without the markers, and bad
bodies, are 400s naming the field.

usage: server_infill_test.py BUILD_DIR SHARED_DIR   (exit 77: the shared model missing)
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_util import Checks, Server, run, script_args, tool  # noqa: E402

build, shared, stories = script_args()
c = Checks()
MARKERS = ["<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|repo_name|>", "<|file_sep|>"]
BODY = {"input_prefix": "def add(a, b):\n", "input_suffix": "\n\nprint(add(1, 2))\n",
        "input_extra": [{"filename": "util.py", "text": "X = 1\n"}], "prompt": "    return",
        "n_predict": 12, "temperature": 0}


def coder(tmp, name, markers):
    """A small qwen2-shaped model whose generated vocabulary ends with `markers`."""
    path = os.path.join(tmp, name + ".gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", path, "--arch", "qwen2", "--n-embd", "64",
            "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "96",
            "--control-tokens", ",".join(markers))
    c.check("mkmodel " + name, p.returncode == 0, p.stderr)
    return path


def ids(s, text):
    """The text's tokens as infill tokenizes it: no BOS, markers spelled out as text."""
    if not text:
        return []
    status, body = s.json("POST", "/tokenize", {"content": text, "parse_special": False})
    return body["tokens"] if status == 200 else [None]


def completion(s, prompt_ids, n):
    _, body = s.json("POST", "/v1/completions", {"prompt": prompt_ids, "max_tokens": n,
                                                 "temperature": 0})
    return body["choices"][0]["text"]


def repo_level(s, n_vocab):
    rep, sep, pre, suf, mid = (n_vocab - 2, n_vocab - 1, n_vocab - 5, n_vocab - 4, n_vocab - 3)
    bos = s.json("POST", "/tokenize", {"content": "", "add_special": True})[1]["tokens"]
    want_ids = (bos + [rep] + ids(s, "myproject\n") + [sep] + ids(s, "util.py\nX = 1\n") +
                [sep] + ids(s, "filename\n") + [pre] + ids(s, BODY["input_prefix"]) + [suf] +
                ids(s, BODY["input_suffix"]) + [mid] + ids(s, BODY["prompt"]))
    want = completion(s, want_ids, 12)
    status, body = s.json("POST", "/infill", BODY)
    c.check("/infill == completions of the repository-level prompt", status == 200 and
            body["content"] == want and body["tokens_evaluated"] == len(want_ids) and
            body["stop"] is True and body["stop_type"] in ("eos", "limit") and
            body["tokens_predicted"] <= 12, (body, want, len(want_ids)))
    status, events, _, _, _ = s.stream("/infill", dict(BODY, stream=True))
    c.check("/infill streamed: the same content, then a stop object", status == 200 and
            "".join(e["content"] for e in events) == want and events[-1]["stop"] is True and
            all(e["stop"] is False for e in events[:-1]), events[-3:])
    # A stop string: stop_type "word", the string named (the first ASCII character the
    # answer has, so that it surely stops there).
    word = next((ch for ch in want if " " < ch < "\x7f"), None)
    if word is not None:
        status, body = s.json("POST", "/infill", dict(BODY, stop=["never-said", word]))
        c.check("a stop word: stop_type word, stopping_word", status == 200 and
                body["stop_type"] == "word" and body["stopping_word"] == word and
                word not in body["content"], body)
        status, events, _, _, _ = s.stream("/infill", dict(BODY, stop=[word], stream=True))
        c.check("a stop word streamed", status == 200 and events[-1]["stop_type"] == "word" and
                events[-1]["stopping_word"] == word, events[-1:])
    # OpenAI's suffix: the same prompt without extra files or a started line.
    plain = (bos + [rep] + ids(s, "myproject\n") + [sep] + ids(s, "filename\n") + [pre] +
             ids(s, "x = ") + [suf] + ids(s, "\ny = x") + [mid])
    status, body = s.json("POST", "/v1/completions", {"prompt": "x = ", "suffix": "\ny = x",
                                                      "max_tokens": 8, "temperature": 0})
    c.check("completions' suffix == completions of the infill prompt", status == 200 and
            body["choices"][0]["text"] == completion(s, plain, 8) and
            body["usage"]["prompt_tokens"] == len(plain), body)
    status, body = s.json("POST", "/infill", dict(BODY, input_prefix=MARKERS[0], input_extra=[]))
    _, empty = s.json("POST", "/infill", dict(BODY, input_prefix="", input_extra=[]))
    c.check("a marker spelled in the code is text", status == 200 and
            body["tokens_evaluated"] - empty["tokens_evaluated"] == len(ids(s, MARKERS[0])) > 1,
            (body, empty))
    bad = [("input_extra not an array", dict(BODY, input_extra="x"), "input_extra"),
           ("an input_extra entry without text", dict(BODY, input_extra=[{"filename": "a"}]),
            "input_extra[0]"),
           ("n > 1", dict(BODY, n=2), "n"),
           ("input_prefix not a string", dict(BODY, input_prefix=3), "input_prefix")]
    for name, body, param in bad:
        status, answer = s.json("POST", "/infill", body)
        c.check("400: " + name, status == 400 and answer["error"]["param"] == param, answer)
    status, answer = s.json("POST", "/v1/completions", {"prompt": [1, 2], "suffix": "x"})
    c.check("400: suffix with a token prompt", status == 400 and
            answer["error"]["param"] == "suffix", answer)
    status, answer = s.json("POST", "/v1/chat/completions",
                            {"messages": [{"role": "user", "content": "hi"}], "suffix": "x"})
    c.check("400: suffix on chat", status == 400 and
            answer["error"]["code"] == "unsupported_parameter", answer)


def main():
    with tempfile.TemporaryDirectory() as tmp:
        with Server(build, coder(tmp, "coder", MARKERS), "-c", "512") as s:
            n_vocab = s.json("GET", "/v1/models")[1]["data"][0]["meta"]["n_vocab"]
            repo_level(s, n_vocab)
        with Server(build, coder(tmp, "fim-only", MARKERS[:3]), "-c", "512") as s:
            n_vocab = s.json("GET", "/v1/models")[1]["data"][0]["meta"]["n_vocab"]
            pre, suf, mid = n_vocab - 3, n_vocab - 2, n_vocab - 1
            bos = s.json("POST", "/tokenize", {"content": "", "add_special": True})[1]["tokens"]
            want_ids = (bos + ids(s, "X = 1\n") + [pre] + ids(s, BODY["input_prefix"]) + [suf] +
                        ids(s, BODY["input_suffix"]) + [mid] + ids(s, BODY["prompt"]))
            status, body = s.json("POST", "/infill", BODY)
            c.check("without repository markers the extra text comes first", status == 200 and
                    body["content"] == completion(s, want_ids, 12) and
                    body["tokens_evaluated"] == len(want_ids), body)
        with Server(build, stories) as s:
            for path, body, param in (("/infill", BODY, "input_prefix"),
                                      ("/v1/completions", {"prompt": "a", "suffix": "b"}, "suffix")):
                status, answer = s.json("POST", path, body)
                c.check("400 fim_unsupported on " + path, status == 400 and
                        answer["error"]["code"] == "fim_unsupported" and
                        answer["error"]["param"] == param, answer)
    return c.finish()


sys.exit(main())
