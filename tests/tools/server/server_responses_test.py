#!/usr/bin/env python3
"""POST /v1/responses: OpenAI's Responses API answered as the chat completion it asks for —
the message item's text equals /v1/chat/completions' answer for the same conversation
(instructions as the system message; message, function_call and function_call_output
items as turns), streamed events numbered in order and adding up to the same items, a
thought as a reasoning item, required calls as function_call items, text.format as a
schema, max_output_tokens as an incomplete status; refusals name the Responses field.

usage: server_responses_test.py BUILD_DIR SHARED_DIR   (exit 77: the shared model missing)
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from server_util import Checks, Server, named_events, script_args  # noqa: E402

build, shared, stories = script_args()
c = Checks()
WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city",
           "parameters": {"type": "object", "required": ["city"],
                          "properties": {"city": {"type": "string", "maxLength": 12}}}}
THINKING = 'root ::= "<think>\\n" [a-z]{2,6} " " [a-z]{2,6} "\\n</think>\\n\\n" [a-z ]{1,12}'


def stream(s, body):
    status, _, raw, _, _ = s.stream("/v1/responses", body)
    return status, named_events(raw)


def chat_answer(s, body):
    status, answer = s.json("POST", "/v1/chat/completions", body)
    return answer["choices"][0]["message"] if status == 200 else {"status": status}, answer


def texts(output, kind):
    if kind == "message":
        return [part["text"] for item in output if item["type"] == "message"
                for part in item["content"]]
    return [part["text"] for item in output if item["type"] == "reasoning"
            for part in item["content"]]


def plain(s):
    req = {"instructions": "Be brief.", "input": "Tell me a story", "max_output_tokens": 16,
           "temperature": 0}
    status, r = s.json("POST", "/v1/responses", req)
    want, chat = chat_answer(s, {"messages": [{"role": "system", "content": "Be brief."},
                                              {"role": "user", "content": "Tell me a story"}],
                                 "max_tokens": 16, "temperature": 0})
    c.check("the message == the chat answer", status == 200 and r["object"] == "response" and
            r["id"].startswith("resp_") and texts(r["output"], "message") == [want["content"]] and
            r["output"][0]["role"] == "assistant", (r, want))
    c.check("usage and status", r["usage"]["input_tokens"] == chat["usage"]["prompt_tokens"] and
            r["usage"]["output_tokens"] == chat["usage"]["completion_tokens"] and
            r["status"] == ("incomplete" if chat["choices"][0]["finish_reason"] == "length"
                            else "completed") and r["store"] is False and
            r["instructions"] == "Be brief.", r)
    status, events = stream(s, dict(req, stream=True))
    types = [e["type"] for e in events]
    deltas = "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta")
    final = events[-1].get("response", {})
    c.check("streamed: numbered, named events, the same text, the same items", status == 200 and
            all(e["_named"] for e in events) and
            [e["sequence_number"] for e in events] == list(range(len(events))) and
            types[:2] == ["response.created", "response.in_progress"] and
            types[-1] in ("response.completed", "response.incomplete") and
            deltas == want["content"] and texts(final.get("output", []), "message") ==
            [want["content"]] and all(final.get("usage", {}).get(k) == r["usage"][k]
                                      for k in ("input_tokens", "output_tokens")), (types, final))


def conversation(s):
    """Items of an earlier turn: a call and its output, then a question."""
    items = [{"role": "user", "content": [{"type": "input_text", "text": "Weather in Oslo?"}]},
             {"type": "function_call", "call_id": "c1", "name": "get_weather",
              "arguments": '{"city": "Oslo"}'},
             {"type": "function_call_output", "call_id": "c1", "output": "7 C, rain"},
             {"type": "reasoning", "id": "rs_1", "summary": []},
             {"role": "assistant", "content": [{"type": "output_text", "text": "Rainy."}]},
             {"role": "developer", "content": "Answer in one word."},
             {"type": "message", "role": "user", "content": "And tomorrow?"}]
    status, r = s.json("POST", "/v1/responses", {"input": items, "tools": [WEATHER],
                                                 "max_output_tokens": 12, "temperature": 0})
    messages = [{"role": "user", "content": "Weather in Oslo?"},
                {"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function",
                     "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "7 C, rain"},
                {"role": "assistant", "content": "Rainy."},
                {"role": "system", "content": "Answer in one word."},
                {"role": "user", "content": "And tomorrow?"}]
    want, chat = chat_answer(s, {"messages": messages, "max_tokens": 12, "temperature": 0,
                                 "tools": [{"type": "function", "function": {
                                     k: WEATHER[k] for k in ("name", "description", "parameters")}}]})
    c.check("items as turns == the chat conversation", status == 200 and
            r["usage"]["input_tokens"] == chat["usage"]["prompt_tokens"] and
            texts(r["output"], "message") == [want["content"] or ""], (r, want))


def calls_and_formats(s):
    status, r = s.json("POST", "/v1/responses", {
        "input": "Weather in Paris?", "tools": [WEATHER], "tool_choice": "required",
        "parallel_tool_calls": False, "max_output_tokens": 100, "temperature": 0})
    calls = [i for i in r.get("output", []) if i["type"] == "function_call"]
    c.check("a required call: a function_call item", status == 200 and len(calls) == 1 and
            calls[0]["name"] == "get_weather" and calls[0]["status"] == "completed" and
            len(json.loads(calls[0]["arguments"])["city"]) <= 12, r)
    status, events = stream(s, {
        "input": "Weather in Paris?", "tools": [WEATHER], "tool_choice": "required",
        "parallel_tool_calls": False, "max_output_tokens": 100, "temperature": 0, "stream": True})
    args = [e["arguments"] for e in events if e["type"] == "response.function_call_arguments.done"]
    pieces = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    c.check("the call streamed, its arguments piece by piece", status == 200 and len(args) == 1
            and len(pieces) > 3 and "".join(pieces) == args[0] and
            json.loads(args[0]) == json.loads(calls[0]["arguments"]) if calls else False,
            events[-2:])
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    status, r = s.json("POST", "/v1/responses", {
        "input": "A number", "max_output_tokens": 30, "temperature": 0,
        "text": {"format": {"type": "json_schema", "name": "n", "schema": schema}}})
    out = texts(r.get("output", []), "message")
    c.check("text.format json_schema", status == 200 and len(out) == 1 and
            isinstance(json.loads(out[0])["n"], int) and r["text"]["format"]["name"] == "n", r)
    # A thought (forced by a grammar: stories260K does not think) as a reasoning item.
    req = {"input": "Hi", "max_output_tokens": 60, "temperature": 0, "grammar": THINKING}
    status, r = s.json("POST", "/v1/responses", req)
    want, _ = chat_answer(s, {"messages": [{"role": "user", "content": "Hi"}],
                              "max_tokens": 60, "temperature": 0, "grammar": THINKING})
    _, chat_body = s.json("POST", "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 60, "temperature": 0,
        "grammar": THINKING})
    c.check("the thought's tokens as the chat's", r["usage"]["output_tokens_details"] ==
            chat_body["usage"]["completion_tokens_details"], (r["usage"], chat_body["usage"]))
    c.check("a thought: a reasoning item before the message", status == 200 and
            [i["type"] for i in r["output"]] == ["reasoning", "message"] and
            texts(r["output"], "reasoning") == [want["reasoning_content"]] and
            texts(r["output"], "message") == [want["content"]], (r, want))
    status, events = stream(s, dict(req, stream=True))
    thought = "".join(e["delta"] for e in events if e["type"] == "response.reasoning_text.delta")
    c.check("a thought streamed", status == 200 and thought == want["reasoning_content"] and
            [i["type"] for i in events[-1]["response"]["output"]] == ["reasoning", "message"],
            [e["type"] for e in events])


def refusals(s):
    for name, body, code, param in [
            ("previous_response_id", {"input": "hi", "previous_response_id": "resp_1"},
             "unsupported_parameter", "previous_response_id"),
            ("no input", {"instructions": "x"}, "missing_required_parameter", "input"),
            ("a built-in tool", {"input": "hi", "tools": [{"type": "web_search"}]},
             "invalid_value", "tools[0]"),
            ("an unknown item", {"input": [{"type": "file_search_call"}]}, "invalid_value",
             "input[0].type"),
            ("max_output_tokens negative", {"input": "hi", "max_output_tokens": -1},
             "invalid_value", "max_output_tokens")]:
        status, answer = s.json("POST", "/v1/responses", body)
        err = answer.get("error", {})
        c.check("400: " + name, status == 400 and err.get("code") == code and
                err.get("param") == param, answer)


def main():
    with Server(build, stories, "-np", "2", "--chat-template", "chatml") as s:
        plain(s)
        conversation(s)
        calls_and_formats(s)
        refusals(s)
        c.check("counted under its own route in /metrics",
                (s.metric("pshard_http_responses_total", 'route="/v1/responses",status="200"') or 0)
                >= 5, "")
    return c.finish()


sys.exit(main())
