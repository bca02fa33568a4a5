#!/usr/bin/env python3
"""The official OpenAI JavaScript library (`openai` from the npm registry, installed into
the build tree at test time) against pshard-server: completions and chat, streamed and
not, greedy answers equal to pshard-run's for the same prompt, tool calls (whole and as
stream deltas the library assembles), and the library's view of
the error objects (404, 400, 401), and embeddings (base64 by the library's default, and
floats) equal to pshard-run --embedding's. Skips, saying why, without node/npm or without the
registry.

usage: server_openai_js_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import shutil
import subprocess
import sys

from server_util import Checks, Server, chat_text, f32, npm_package, run_embedding, run_text

build, shared = sys.argv[1], sys.argv[2]
stories = os.path.join(shared, "models/stories260K.gguf")
here = os.path.dirname(os.path.abspath(__file__))
checks = Checks()
check = checks.check


def main():
    if not os.path.exists(stories):
        print(f"skipped: {stories} is not present")
        return 77
    root = npm_package(build, "openai-js", "openai")
    if root is None:
        return 77
    with open(os.path.join(root, "node_modules", "openai", "package.json")) as f:
        print("openai JavaScript library", json.load(f)["version"])
    script = os.path.join(root, "openai_client.mjs")
    shutil.copyfile(os.path.join(here, "openai_client.mjs"), script)  # resolves `openai` there

    prompt, message, n = "Once upon a time", "Tell me a story", 24
    want = run_text(build, stories, prompt, n)
    want_chat = chat_text(build, stories, message, n)
    want_embeddings = [run_embedding(build, stories, t, "--pooling", "last")["embedding"]
                       for t in (prompt, message)]
    with Server(build, stories, "-np", "2", "--chat-template", "chatml", "--pooling", "last",
                api_key="k3y") as s:
        p = subprocess.run(["node", script, f"http://127.0.0.1:{s.port}/v1", "k3y", "stories260K",
                            prompt, message, str(n)], capture_output=True, text=True, timeout=300)
        check("node runs", p.returncode == 0, p.stderr[-2000:])
        if p.returncode != 0:
            return checks.finish()
        got = json.loads(p.stdout)
    check("completion == pshard-run", got["completion"] == want, (got["completion"], want))
    check("completion finish and usage", got["completion_finish"] == "length" and
          got["completion_usage"]["completion_tokens"] == n, got)
    check("streamed completion == pshard-run", got["completion_stream"] == want,
          (got["completion_stream"], want))
    check("chat == pshard-run -cnv", got["chat"] == want_chat and got["chat_role"] == "assistant"
          and got["chat_object"] == "chat.completion", (got["chat"], want_chat))
    check("streamed chat == pshard-run -cnv", got["chat_stream"] == want_chat,
          (got["chat_stream"], want_chat))
    calls = got["tool_calls"]
    check("tool call read by the library", got["tool_finish"] == "tool_calls" and len(calls) == 1
          and calls[0]["type"] == "function" and calls[0]["function"]["name"] == "get_weather"
          and isinstance(json.loads(calls[0]["function"]["arguments"])["city"], str), got)
    streamed = got["tool_calls_stream"]
    check("streamed tool call assembled by the library", got["tool_finish_stream"] == "tool_calls"
          and [c["function"] for c in streamed] == [c["function"] for c in calls], (streamed, calls))
    check("streamed chat finish and usage", got["chat_stream_finish"] in ("stop", "length") and
          got["chat_stream_usage"]["prompt_tokens"] > 0, got)
    check("embeddings (base64, decoded by the library) == pshard-run --embedding",
          [f32(e) for e in got["embeddings"]] == want_embeddings, got["embeddings"][0][:3])
    check("embeddings as floats == pshard-run --embedding",
          f32(got["embedding_float"]) == want_embeddings[0], got["embedding_float"][:3])
    check("responses: output_text == the chat answer", got["response_text"] == want_chat and
          got["response_status"] in ("completed", "incomplete") and
          got["response_usage"]["output_tokens"] > 0, (got["response_text"], want_chat))
    types = got["response_stream_types"]
    check("responses streamed: the deltas and the final response == the chat answer",
          got["response_stream"] == want_chat and got["response_stream_final"] == want_chat and
          types[0] == "response.created" and
          types[-1] in ("response.completed", "response.incomplete"), types)
    rcalls = got["response_call"]
    check("responses: a function_call item", len(rcalls) == 1 and
          rcalls[0]["name"] == "get_weather" and rcalls[0]["call_id"].startswith("call_") and
          isinstance(json.loads(rcalls[0]["arguments"])["city"], str), rcalls)
    check("embedding usage", got["embeddings_usage"]["prompt_tokens"] > 0, got["embeddings_usage"])
    check("models", got["models"] == ["stories260K"], got["models"])
    check("unknown model: NotFoundError", got["unknown_model"]["status"] == 404 and
          got["unknown_model"]["code"] == "model_not_found", got["unknown_model"])
    check("too long: BadRequestError", got["too_long"]["status"] == 400 and
          got["too_long"]["code"] == "context_length_exceeded" and
          got["too_long"]["param"] == "max_tokens", got["too_long"])
    check("wrong key: AuthenticationError", got["wrong_key"]["status"] == 401 and
          got["wrong_key"]["name"] == "AuthenticationError", got["wrong_key"])
    return checks.finish()


sys.exit(main())
