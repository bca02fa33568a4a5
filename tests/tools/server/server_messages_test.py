#!/usr/bin/env python3
"""POST /v1/messages: Anthropic's Messages API answered as the chat completion it asks
for — the text block equals /v1/chat/completions' answer for the same conversation
(system, text / tool_use / tool_result blocks as turns), streamed events add up to the same
blocks, a thought as a thinking block (thinking enabled), required calls as tool_use
blocks with their input as JSON, count_tokens the prompt's tokens; refusals in Anthropic's
error shape. Then Anthropic's JavaScript SDK reads the same answers (skipped, saying why,
without node, npm or the registry).

usage: server_messages_test.py BUILD_DIR SHARED_DIR   (exit 77: the shared model missing)
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_util import Checks, Server, named_events, npm_package, script_args  # noqa: E402

build, shared, stories = script_args()
c = Checks()
WEATHER = {"name": "get_weather", "description": "The weather in a city",
           "input_schema": {"type": "object", "required": ["city"],
                            "properties": {"city": {"type": "string", "maxLength": 12}}}}
CHAT_WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": WEATHER["input_schema"]}}
THINKING = 'root ::= "<think>\\n" [a-z]{2,6} " " [a-z]{2,6} "\\n</think>\\n\\n" [a-z ]{1,12}'


def stream(s, body):
    status, _, raw, _, _ = s.stream("/v1/messages", body)
    return status, named_events(raw)


def blocks_of(events):
    """The content blocks a stream adds up to."""
    blocks = {}
    for e in events:
        if e["type"] == "content_block_start":
            blocks[e["index"]] = dict(e["content_block"], _json="")
        elif e["type"] == "content_block_delta":
            b, d = blocks[e["index"]], e["delta"]
            if d["type"] == "text_delta":
                b["text"] += d["text"]
            elif d["type"] == "thinking_delta":
                b["thinking"] += d["thinking"]
            elif d["type"] == "input_json_delta":
                b["_json"] += d["partial_json"]
    out = []
    for i in sorted(blocks):
        b = blocks[i]
        if b["type"] == "tool_use":
            b["input"] = json.loads(b["_json"])
        del b["_json"]
        out.append(b)
    return out


def without_ids(blocks):
    """Blocks as two answers can agree on them (every answer's call ids are its own)."""
    return [{k: v for k, v in b.items() if k != "id"} for b in blocks]


def chat(s, body):
    status, answer = s.json("POST", "/v1/chat/completions", body)
    return (answer["choices"][0]["message"], answer) if status == 200 else ({}, answer)


def raw_http(s):
    req = {"system": "Be brief.", "max_tokens": 16, "temperature": 0,
           "messages": [{"role": "user", "content": "Tell me a story"}]}
    status, m = s.json("POST", "/v1/messages", req)
    want, answer = chat(s, {"messages": [{"role": "system", "content": "Be brief."},
                                         {"role": "user", "content": "Tell me a story"}],
                            "max_tokens": 16, "temperature": 0})
    c.check("the text block == the chat answer", status == 200 and m["type"] == "message" and
            m["id"].startswith("msg_") and m["content"] == [{"type": "text", "text": want["content"]}]
            and m["stop_reason"] == {"length": "max_tokens", "stop": "end_turn"}[
                answer["choices"][0]["finish_reason"]] and
            m["usage"]["input_tokens"] == answer["usage"]["prompt_tokens"] and
            m["usage"]["output_tokens"] == answer["usage"]["completion_tokens"], (m, want))
    status, events = stream(s, dict(req, stream=True))
    types = [e["type"] for e in events]
    c.check("streamed: named events adding up to the same blocks", status == 200 and
            all(e["_named"] for e in events) and types[0] == "message_start" and
            types[-2:] == ["message_delta", "message_stop"] and
            blocks_of(events) == m["content"] and
            events[-2]["delta"]["stop_reason"] == m["stop_reason"], types)
    status, m = s.json("POST", "/v1/messages", dict(req, stop_sequences=["never-said", " "]))
    c.check("a stop sequence: stop_reason stop_sequence, the sequence named", status == 200 and
            m["stop_reason"] == "stop_sequence" and m["stop_sequence"] == " " and
            " " not in m["content"][0]["text"], m)
    status, events = stream(s, dict(req, stop_sequences=["never-said", " "], stream=True))
    c.check("a stop sequence streamed", status == 200 and events[-2]["delta"] ==
            {"stop_reason": "stop_sequence", "stop_sequence": " "}, events[-2:])
    status, count = s.json("POST", "/v1/messages/count_tokens",
                           {"system": "Be brief.", "messages": req["messages"]})
    c.check("count_tokens", status == 200 and count == {"input_tokens": m["usage"]["input_tokens"]},
            count)

    # An earlier call and its result, in Anthropic's blocks and as chat turns.
    history = [{"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
               {"role": "assistant", "content": [
                   {"type": "thinking", "thinking": "they want weather", "signature": ""},
                   {"type": "text", "text": "Let me look."},
                   {"type": "tool_use", "id": "t1", "name": "get_weather",
                    "input": {"city": "Oslo"}}]},
               {"role": "user", "content": [
                   {"type": "tool_result", "tool_use_id": "t1",
                    "content": [{"type": "text", "text": "7 C, rain"}]},
                   {"type": "text", "text": "And tomorrow?"}]}]
    status, m = s.json("POST", "/v1/messages", {"messages": history, "tools": [WEATHER],
                                                "max_tokens": 12, "temperature": 0})
    want, answer = chat(s, {"messages": [
        {"role": "user", "content": "Weather in Oslo?"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "t1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city":"Oslo"}'}}]},
        {"role": "tool", "tool_call_id": "t1", "content": "7 C, rain"},
        {"role": "user", "content": "And tomorrow?"}],
        "tools": [CHAT_WEATHER], "max_tokens": 12, "temperature": 0})
    c.check("blocks as turns == the chat conversation", status == 200 and
            m["usage"]["input_tokens"] == answer["usage"]["prompt_tokens"], (m, answer))

    req = {"messages": [{"role": "user", "content": "Weather in Paris?"}], "tools": [WEATHER],
           "tool_choice": {"type": "any", "disable_parallel_tool_use": True}, "max_tokens": 100,
           "temperature": 0}
    status, m = s.json("POST", "/v1/messages", req)
    uses = [b for b in m.get("content", []) if b["type"] == "tool_use"]
    c.check("tool_choice any: a tool_use block", status == 200 and len(uses) == 1 and
            m["stop_reason"] == "tool_use" and uses[0]["name"] == "get_weather" and
            isinstance(uses[0]["input"]["city"], str) and uses[0]["id"].startswith("toolu_"), m)
    status, events = stream(s, dict(req, stream=True))
    pieces = [e for e in events if e["type"] == "content_block_delta" and
              e["delta"]["type"] == "input_json_delta"]
    c.check("the tool_use streamed, its input piece by piece", status == 200 and
            len(pieces) > 3 and
            without_ids(blocks_of(events)) == without_ids(m["content"]), blocks_of(events))

    # A thought (forced by a grammar: stories260K does not think) as a thinking block.
    req = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 60, "temperature": 0,
           "grammar": THINKING}
    status, m = s.json("POST", "/v1/messages", dict(req, thinking={"type": "enabled",
                                                                  "budget_tokens": 1024}))
    want, _ = chat(s, {"messages": req["messages"], "max_tokens": 60, "temperature": 0,
                       "grammar": THINKING})
    c.check("a thought: a thinking block, then the text", status == 200 and
            [b["type"] for b in m["content"]] == ["thinking", "text"] and
            m["content"][0]["thinking"] == want["reasoning_content"] and
            m["content"][1]["text"] == want["content"], (m, want))

    for name, body, status_want, param_type in [
            ("no max_tokens", {"messages": [{"role": "user", "content": "hi"}]}, 400,
             "invalid_request_error"),
            ("a server tool", {"max_tokens": 4, "messages": [{"role": "user", "content": "hi"}],
                               "tools": [{"type": "web_search_20250305", "name": "web_search"}]},
             400, "invalid_request_error"),
            ("a system role in messages", {"max_tokens": 4, "messages": [
                {"role": "system", "content": "hi"}]}, 400, "invalid_request_error"),
            ("an unknown model", {"model": "claude-x", "max_tokens": 4,
                                  "messages": [{"role": "user", "content": "hi"}]},
             404, "not_found_error")]:
        status, answer = s.json("POST", "/v1/messages", body)
        c.check(f"{status_want}: {name}", status == status_want and answer.get("type") == "error"
                and answer["error"]["type"] == param_type and answer["error"]["message"], answer)


def sdk(s):
    root = npm_package(build, "anthropic-js", "@anthropic-ai/sdk")
    if root is None:
        return
    script = os.path.join(root, "anthropic_client.mjs")
    shutil.copyfile(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                 "anthropic_client.mjs"), script)
    want, answer = chat(s, {"messages": [{"role": "user", "content": "Tell me a story"}],
                            "max_tokens": 24, "temperature": 0})
    p = subprocess.run(["node", script, f"http://127.0.0.1:{s.port}", "k3y", "stories260K",
                        "Tell me a story", "24"], capture_output=True, text=True, timeout=300)
    c.check("node runs the SDK", p.returncode == 0, p.stderr[-2000:])
    if p.returncode != 0:
        return
    got = json.loads(p.stdout)
    c.check("SDK: the text == the chat answer", got["text"] == want["content"] and
            got["usage"]["input_tokens"] == answer["usage"]["prompt_tokens"], (got, want))
    c.check("SDK: the stream's text deltas and final message == the chat answer",
            got["stream_deltas"] == want["content"] and got["stream_text"] == want["content"] and
            got["stream_stop_reason"] == got["stop_reason"], got)
    uses = got["tool_use"]
    c.check("SDK: a tool_use block, whole and streamed", len(uses) == 1 and
            got["tool_stop_reason"] == "tool_use" and uses[0]["name"] == "get_weather" and
            without_ids(got["tool_use_stream"]) == without_ids(uses), got)
    c.check("SDK: countTokens", got["count"] == answer["usage"]["prompt_tokens"], got["count"])
    c.check("SDK: a refusal is a BadRequestError", got["too_long"]["status"] == 400 and
            got["too_long"]["name"] == "BadRequestError", got["too_long"])


def main():
    with Server(build, stories, "-np", "2", "--chat-template", "chatml", api_key="k3y") as s:
        raw_http(s)
        c.check("counted under its own route in /metrics",
                (s.metric("pshard_http_responses_total", 'route="/v1/messages",status="200"') or 0)
                >= 5, "")
        sdk(s)
    return c.finish()


sys.exit(main())
