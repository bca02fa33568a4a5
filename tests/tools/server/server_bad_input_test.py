#!/usr/bin/env python3
"""pshard-server under bad input: every case gets the right HTTP status and OpenAI's
error object ({"error": {"message", "type", "param", "code"}}), and the server goes on
serving the others with nothing lost — malformed JSON, wrong types, values out of range,
unknown models and routes, a prompt longer than the context, max_tokens past it, more
concurrent requests than slots and queue (503, the rest served whole), a client that
disconnects mid-stream (its sequence cancelled), a wrong API key (401).

usage: server_bad_input_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import socket
import sys
import threading
import time

from server_util import Checks, Server, run_text

build, shared = sys.argv[1], sys.argv[2]
stories = os.path.join(shared, "models/stories260K.gguf")
checks = Checks()
check = checks.check
GOOD = {"prompt": "Once upon a time", "max_tokens": 16, "temperature": 0}
HI = [{"role": "user", "content": "hi"}]
TOOL = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}


def is_error_object(body, status):
    e = body.get("error") if isinstance(body, dict) else None
    return (isinstance(e, dict) and set(e) == {"message", "type", "param", "code"}
            and isinstance(e["message"], str) and e["message"] and isinstance(e["type"], str))


def expect(s, name, status_want, method, path, body, type_want, code_want=None, param_want=None,
           headers=None):
    status, got = s.json(method, path, body, headers)
    ok = status == status_want and is_error_object(got, status)
    if ok:
        e = got["error"]
        ok = e["type"] == type_want and (code_want is None or e["code"] == code_want) and \
            (param_want is None or e["param"] == param_want)
    check(name, ok, (status, got))


def still_serves(s, want, name):
    status, body = s.json("POST", "/v1/completions", GOOD)
    check("still serves after " + name, status == 200 and body["choices"][0]["text"] == want,
          (status, body))


def table(s, want):
    cases = [
        ("malformed JSON", 400, "POST", "/v1/completions", '{"prompt": "Once", ', "invalid_request_error",
         "invalid_json", None),
        ("not an object", 400, "POST", "/v1/completions", "[1, 2]", "invalid_request_error",
         "invalid_json", None),
        ("empty body", 400, "POST", "/v1/chat/completions", "", "invalid_request_error", "invalid_json",
         None),
        ("temperature a string", 400, "POST", "/v1/completions", dict(GOOD, temperature="hot"),
         "invalid_request_error", "invalid_type", "temperature"),
        ("max_tokens a float", 400, "POST", "/v1/completions", dict(GOOD, max_tokens=2.5),
         "invalid_request_error", "invalid_type", "max_tokens"),
        ("max_tokens negative", 400, "POST", "/v1/completions", dict(GOOD, max_tokens=-1),
         "invalid_request_error", "invalid_value", "max_tokens"),
        ("top_p out of range", 400, "POST", "/v1/completions", dict(GOOD, top_p=1.5),
         "invalid_request_error", "invalid_value", "top_p"),
        ("stream not a boolean", 400, "POST", "/v1/completions", dict(GOOD, stream="yes"),
         "invalid_request_error", "invalid_type", "stream"),
        ("stop not strings", 400, "POST", "/v1/completions", dict(GOOD, stop=[1, 2]),
         "invalid_request_error", "invalid_type", "stop"),
        ("prompt missing", 400, "POST", "/v1/completions", {"max_tokens": 4}, "invalid_request_error",
         "missing_required_parameter", "prompt"),
        ("prompt token out of range", 400, "POST", "/v1/completions", dict(GOOD, prompt=[1, 99999]),
         "invalid_request_error", "invalid_value", "prompt"),
        ("messages not an array", 400, "POST", "/v1/chat/completions", {"messages": "hi"},
         "invalid_request_error", "invalid_type", "messages"),
        ("message without a role", 400, "POST", "/v1/chat/completions",
         {"messages": [{"content": "hi"}]}, "invalid_request_error", "invalid_type", "messages[0].role"),
        ("image content without --mmproj", 400, "POST", "/v1/chat/completions",
         {"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {}}]}]},
         "invalid_request_error", "images_unsupported", "messages[0].content[0]"),
        ("unknown content part", 400, "POST", "/v1/chat/completions",
         {"messages": [{"role": "user", "content": [{"type": "audio", "audio": {}}]}]},
         "invalid_request_error", "invalid_value", "messages[0].content[0]"),
        ("unknown model", 404, "POST", "/v1/completions", dict(GOOD, model="gpt-4o"),
         "invalid_request_error", "model_not_found", "model"),
        ("unknown model (chat)", 404, "POST", "/v1/chat/completions",
         {"model": "llama", "messages": [{"role": "user", "content": "hi"}]},
         "invalid_request_error", "model_not_found", "model"),
        ("n past 16", 400, "POST", "/v1/completions", dict(GOOD, n=17), "invalid_request_error",
         "invalid_value", "n"),
        ("best_of", 400, "POST", "/v1/completions", dict(GOOD, best_of=3),
         "invalid_request_error", "unsupported_parameter", "best_of"),
        ("tools on completions", 400, "POST", "/v1/completions",
         dict(GOOD, tools=[TOOL]), "invalid_request_error", "unsupported_parameter", "tools"),
        ("reasoning_format on completions", 400, "POST", "/v1/completions",
         dict(GOOD, reasoning_format="none"), "invalid_request_error", "unsupported_parameter",
         "reasoning_format"),
        ("an unknown reasoning_format", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "reasoning_format": "r1"}, "invalid_request_error", "invalid_value",
         "reasoning_format"),
        ("a chat_template_kwargs key pshard does not read", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "chat_template_kwargs": {"add_generation_prompt": False}},
         "invalid_request_error", "unsupported_parameter",
         "chat_template_kwargs.add_generation_prompt"),
        ("enable_thinking not a boolean", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "chat_template_kwargs": {"enable_thinking": "no"}},
         "invalid_request_error", "invalid_type", "chat_template_kwargs.enable_thinking"),
        ("a tool without its function", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "tools": [{"type": "function"}]},
         "invalid_request_error", "invalid_type", "tools[0]"),
        ("a tool name with spaces", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "tools": [{"type": "function", "function": {"name": "get weather"}}]},
         "invalid_request_error", "invalid_value", "tools[0].function.name"),
        ("tool_choice naming an unlisted function", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "tools": [TOOL],
          "tool_choice": {"type": "function", "function": {"name": "send_mail"}}},
         "invalid_request_error", "invalid_value", "tool_choice"),
        ("tool_choice an object without its function", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "tools": [TOOL], "tool_choice": {"type": "function"}},
         "invalid_request_error", "invalid_type", "tool_choice"),
        ("tool parameters pshard cannot enforce", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "tools": [{"type": "function", "function": {"name": "f", "parameters": {
             "type": "object", "properties": {"n": {"type": "integer", "multipleOf": 2}}}}}]},
         "invalid_request_error", "unsupported_json_schema", "tools"),
        ("tools and a response_format", 400, "POST", "/v1/chat/completions",
         {"messages": HI, "tools": [TOOL], "response_format": {"type": "json_object"}},
         "invalid_request_error", "invalid_value", "tools"),
        ("an earlier call whose arguments are not JSON", 400, "POST", "/v1/chat/completions",
         {"messages": HI + [{"role": "assistant", "tool_calls": [{"id": "c", "type": "function",
          "function": {"name": "get_weather", "arguments": "{city"}}]}], "tools": [TOOL]},
         "invalid_request_error", "invalid_value", "messages[1].tool_calls[0].function.arguments"),
        ("response_format of an unknown type", 400, "POST", "/v1/completions",
         dict(GOOD, response_format={"type": "xml"}), "invalid_request_error", "invalid_value",
         "response_format.type"),
        ("json_schema without a schema", 400, "POST", "/v1/completions",
         dict(GOOD, response_format={"type": "json_schema", "json_schema": {"name": "x"}}),
         "invalid_request_error", "invalid_type", "response_format.json_schema.schema"),
        ("a schema of an unknown type", 400, "POST", "/v1/completions",
         dict(GOOD, json_schema={"type": "strnig"}), "invalid_request_error",
         "invalid_json_schema", "json_schema"),
        ("a schema keyword pshard cannot enforce", 400, "POST", "/v1/completions",
         dict(GOOD, response_format={"type": "json_schema", "json_schema": {
             "name": "x", "schema": {"type": "integer", "multipleOf": 3}}}),
         "invalid_request_error", "unsupported_json_schema", "response_format.json_schema.schema"),
        ("a grammar with a syntax error", 400, "POST", "/v1/completions",
         dict(GOOD, grammar='root ::= "a" | ('), "invalid_request_error", "invalid_grammar",
         "grammar"),
        ("a grammar and a schema", 400, "POST", "/v1/completions",
         dict(GOOD, grammar='root ::= "a"', json_schema={"type": "string"}),
         "invalid_request_error", "invalid_value", "response_format"),
        ("logit_bias on a token past the vocabulary", 400, "POST", "/v1/completions",
         dict(GOOD, logit_bias={"99999": 5}), "invalid_request_error", "invalid_value",
         "logit_bias"),
        ("logit_bias out of range", 400, "POST", "/v1/completions",
         dict(GOOD, logit_bias={"5": 500}), "invalid_request_error", "invalid_value", "logit_bias"),
        ("frequency_penalty out of range", 400, "POST", "/v1/completions",
         dict(GOOD, frequency_penalty=3), "invalid_request_error", "invalid_value",
         "frequency_penalty"),
        ("dry_base below 1", 400, "POST", "/v1/completions", dict(GOOD, dry_base=0.5),
         "invalid_request_error", "invalid_value", "dry_base"),
        ("typical_p 0", 400, "POST", "/v1/completions", dict(GOOD, typical_p=0),
         "invalid_request_error", "invalid_value", "typical_p"),
        ("dry_sequence_breakers not a list", 400, "POST", "/v1/completions",
         dict(GOOD, dry_sequence_breakers="\n"), "invalid_request_error", "invalid_type",
         "dry_sequence_breakers"),
        ("an unknown sampler", 400, "POST", "/v1/completions",
         dict(GOOD, samplers=["top_k", "top_q"]), "invalid_request_error", "invalid_value",
         "samplers"),
        ("an unknown sampler letter", 400, "POST", "/v1/completions", dict(GOOD, samplers="kq"),
         "invalid_request_error", "invalid_value", "samplers"),
        ("samplers not a list", 400, "POST", "/v1/completions", dict(GOOD, samplers=3),
         "invalid_request_error", "invalid_type", "samplers"),
        ("an empty DRY breaker", 400, "POST", "/v1/completions",
         dict(GOOD, dry_sequence_breakers=[""]), "invalid_request_error", "invalid_value",
         "dry_sequence_breakers"),
        ("prompt longer than the context", 400, "POST", "/v1/completions",
         dict(GOOD, prompt="Once upon a time " * 40), "invalid_request_error",
         "context_length_exceeded", "prompt"),
        ("max_tokens past the context", 400, "POST", "/v1/completions", dict(GOOD, max_tokens=60),
         "invalid_request_error", "context_length_exceeded", "max_tokens"),
        ("chat past the context", 400, "POST", "/v1/chat/completions",
         {"messages": [{"role": "user", "content": "Once upon a time " * 40}]},
         "invalid_request_error", "context_length_exceeded", "messages"),
        ("unknown route", 404, "GET", "/v2/everything", None, "invalid_request_error", "not_found", None),
        ("wrong method", 404, "GET", "/v1/completions", None, "invalid_request_error", "not_found",
         None),
        ("tokenize without content", 400, "POST", "/tokenize", {}, "invalid_request_error",
         "missing_required_parameter", "content"),
        ("detokenize a bad id", 400, "POST", "/detokenize", {"tokens": [1, -5]},
         "invalid_request_error", "invalid_value", "tokens"),
        ("budget without a schedule", 400, "POST", "/budget", {"vram": "1G"},
         "invalid_request_error", "no_schedule", "vram"),
    ]
    for name, status, method, path, body, type_, code, param in cases:
        expect(s, name, status, method, path, body, type_, code, param)
    _, _, data = s.request("POST", "/v1/completions", "x" * (17 << 20))
    body = json.loads(data)
    check("body over 16 MiB", body["error"]["code"] == "payload_too_large", body)
    still_serves(s, want, "the bad-input table")


def overload(want_long):
    """One slot, one queue place, twelve requests at once: two served whole, the rest 503."""
    with Server(build, stories, "-np", "1", "--queue", "1") as s:
        body = {"prompt": "Once upon a time", "max_tokens": 2000, "temperature": 0, "ignore_eos": True}
        results = [None] * 12
        barrier = threading.Barrier(12)

        def one(i):
            barrier.wait()
            results[i] = s.json("POST", "/v1/completions", body)

        threads = [threading.Thread(target=one, args=(i,)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        ok = [r for r in results if r[0] == 200]
        busy = [r for r in results if r[0] == 503]
        check("overload: only 200 and 503", len(ok) + len(busy) == 12, [r[0] for r in results])
        check("overload: some served, some refused", ok and busy, [r[0] for r in results])
        check("overload: 503 is the error object", all(
            is_error_object(b, 503) and b["error"]["type"] == "unavailable_error"
            and b["error"]["code"] == "server_busy" for _, b in busy), busy[:1])
        check("overload: the served are whole", all(
            b["choices"][0]["text"] == want_long and b["usage"]["completion_tokens"] == 2000
            for _, b in ok), [b["usage"] for _, b in ok])
        check("overload: refusals counted", s.metric("pshard_requests_refused_total") == len(busy), "")
        status, body = s.json("POST", "/v1/completions", GOOD)
        check("overload: serves again", status == 200, body)


def disconnect(s, want):
    """A streaming client that goes away: its sequence is cancelled, the others go on."""
    before = s.metric("pshard_requests_total", 'finish="cancelled"')
    other = {}
    t = threading.Thread(target=lambda: other.update(r=s.json("POST", "/v1/completions", dict(
        GOOD, max_tokens=40))))
    t.start()
    # Long enough that it cannot finish before the server sees the socket close (the
    # batched engine decodes this tiny model's 40 tokens in milliseconds).
    body = json.dumps({"prompt": "Once upon a time", "max_tokens": 2000, "temperature": 0,
                       "stream": True, "ignore_eos": True}).encode()
    sock = socket.create_connection(("127.0.0.1", s.port))
    sock.sendall(b"POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    got = b""
    while got.count(b"data: ") < 2:
        got += sock.recv(4096)
    sock.close()  # mid-stream
    t.join()
    deadline = time.time() + 20
    while time.time() < deadline and (s.metric("pshard_requests_total", 'finish="cancelled"') == before
                                      or s.metric("pshard_requests_running") != 0):
        time.sleep(0.05)
    check("disconnect cancels the sequence",
          s.metric("pshard_requests_total", 'finish="cancelled"') == before + 1, "")
    check("disconnect frees the slot", s.metric("pshard_requests_running") == 0 and
          s.metric("pshard_kv_pages_used") == 0, "")
    status, body = other["r"]
    want40 = run_text(build, stories, "Once upon a time", 40)
    check("the other request is whole", status == 200 and body["choices"][0]["text"] == want40, body)
    still_serves(s, want, "a disconnect")


def api_key(want):
    with Server(build, stories, api_key="s3cret") as s:
        no_key = {"Authorization": ""}
        expect(s, "no API key", 401, "POST", "/v1/completions", GOOD, "authentication_error",
               "invalid_api_key", headers=no_key)
        expect(s, "wrong API key", 401, "POST", "/v1/completions", GOOD, "authentication_error",
               "invalid_api_key", headers={"Authorization": "Bearer nope"})
        expect(s, "wrong API key on /metrics", 401, "GET", "/metrics", None, "authentication_error",
               "invalid_api_key", headers=no_key)
        expect(s, "a model without a chat template", 400, "POST", "/v1/chat/completions",
               {"messages": [{"role": "user", "content": "hi"}]}, "invalid_request_error",
               "chat_template_unavailable", "messages")
        status, body = s.json("GET", "/health", headers=no_key)
        check("health needs no key", status == 200, body)
        status, body = s.json("POST", "/v1/completions", GOOD)
        check("the right key", status == 200 and body["choices"][0]["text"] == want, body)
        status, body = s.json("POST", "/v1/completions", GOOD, headers={"Authorization": "",
                                                                       "X-Api-Key": "s3cret"})
        check("X-Api-Key", status == 200, body)


def main():
    if not os.path.exists(stories):
        print(f"skipped: {stories} is not present")
        return 77
    want = run_text(build, stories, "Once upon a time", 16)
    with Server(build, stories, "-np", "2", "-c", "64", "--chat-template", "chatml") as s:
        table(s, want)
    with Server(build, stories, "-np", "2", "-c", "2048") as s:  # room for a long stream
        disconnect(s, want)
    overload(run_text(build, stories, "Once upon a time", 2000, "--ignore-eos"))
    api_key(want)
    return checks.finish()


sys.exit(main())
