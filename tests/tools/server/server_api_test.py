#!/usr/bin/env python3
"""pshard-server's API as clients use it: OpenAI's response shapes, greedy answers equal
to pshard-run's (alone and in a busy batch), streaming as server-sent events, logprobs,
stop strings, structured output (response_format, json_schema, grammar), tool calls, penalties and
logit_bias, /tokenize, /detokenize, /v1/models, /health, /metrics, KV cache types (-ctk,
-ctv), and the VRAM
budget changed while serving (POST /budget and SIGHUP) without changing any answer.

usage: server_api_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time

from server_util import Checks, Server, chat_text, run, run_text, tool

build, shared = sys.argv[1], sys.argv[2]
stories = os.path.join(shared, "models/stories260K.gguf")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
checks = Checks()
check = checks.check

PROMPTS = ["Once upon a time", "The little dog", "Tom and Sue went to the park. They saw",
           "One day, a girl named Lily", "The sun was hot and", "Ben had a red ball",
           "There was a big tree", "Mom said"]


def shapes(s):
    status, body = s.json("GET", "/health")
    check("health", status == 200 and body == {"status": "ok"}, body)
    status, body = s.json("GET", "/v1/models")
    check("models list", status == 200 and body.get("object") == "list"
          and body["data"][0]["id"] == "stories260K" and body["data"][0]["object"] == "model"
          and body["data"][0]["meta"]["n_ctx"] == 2048, body)
    status, body = s.json("GET", "/props")
    check("props (llama-server's)", status == 200 and body["total_slots"] == 4 and
          body["default_generation_settings"]["n_ctx"] > 0 and
          body["chat_template"] == "chatml" and body["modalities"] == {"vision": False}, body)
    status, body = s.json("GET", "/v1/models/stories260K")
    check("one model", status == 200 and body["id"] == "stories260K", body)
    status, body = s.json("GET", "/v1/models/gpt-4")
    check("unknown model 404", status == 404 and body["error"]["code"] == "model_not_found", body)


def completions(s):
    want = run_text(build, stories, "Once upon a time", 32)
    check("known answer", want.startswith(", there was a little girl named Lily."), want)
    status, body = s.json("POST", "/v1/completions", {
        "model": "stories260K", "prompt": "Once upon a time", "max_tokens": 32, "temperature": 0})
    check("completion 200", status == 200, body)
    c = body["choices"][0]
    check("completion text == pshard-run", c["text"] == want, (c["text"], want))
    check("completion shape", body["object"] == "text_completion" and body["id"].startswith("cmpl-")
          and isinstance(body["created"], int) and body["model"] == "stories260K"
          and c["index"] == 0 and c["finish_reason"] == "length" and c["logprobs"] is None, body)
    check("usage", body["usage"] == {"prompt_tokens": 5, "completion_tokens": 32,
                                     "total_tokens": 37,
                                     "prompt_tokens_details": {"cached_tokens": 0}},
          body["usage"])
    status, body = s.json("POST", "/v1/completions", {"prompt": [1, 403, 407, 261, 378],
                                                      "max_tokens": 32, "temperature": 0})
    check("token prompt", status == 200 and body["choices"][0]["text"] == want, body)

    status, events, raw, done, hdrs = s.stream("/v1/completions", {
        "prompt": "Once upon a time", "max_tokens": 32, "temperature": 0, "stream": True,
        "stream_options": {"include_usage": True}})
    check("stream content type", hdrs.get("Content-Type", "").startswith("text/event-stream"), hdrs)
    text = "".join(e["choices"][0]["text"] for e in events if e["choices"])
    check("stream text == pshard-run", status == 200 and text == want, (text, want))
    check("stream ends with [DONE]", done and raw.rstrip().endswith("data: [DONE]"), raw[-200:])
    finishes = [e["choices"][0]["finish_reason"] for e in events if e["choices"]]
    check("stream finish last", finishes[-1] == "length" and all(f is None for f in finishes[:-1]),
          finishes)
    check("stream chunks", all(e["object"] == "text_completion" and e["id"] == events[0]["id"]
                               for e in events), events[0])
    check("stream usage chunk", events[-1]["choices"] == [] and
          events[-1]["usage"]["completion_tokens"] == 32, events[-1])

    status, body = s.json("POST", "/v1/completions", {
        "prompt": "Once upon a time", "max_tokens": 32, "temperature": 0, "stop": ["Lily", "zz"]})
    c = body["choices"][0]
    check("stop string", c["text"] == ", there was a little girl named " and
          c["finish_reason"] == "stop", c)

    # logprobs: N alternatives per token, the chosen one's equal to pshard-run's top-1.
    p = run(tool(build, "pshard-run"), "-m", stories, "-p", "Once upon a time", "-n", "8",
            "--temp", "0", "-t", "1", "--json", "--top-logprobs", "2")
    ref = json.loads(p.stdout)["top_logprobs"]
    status, body = s.json("POST", "/v1/completions", {
        "prompt": "Once upon a time", "max_tokens": 8, "temperature": 0, "logprobs": 2})
    lp = body["choices"][0]["logprobs"]
    check("logprobs lists", len(lp["tokens"]) == 8 and len(lp["token_logprobs"]) == 8
          and len(lp["top_logprobs"]) == 8 and lp["text_offset"][0] == 0, lp)
    check("logprobs == pshard-run", all(abs(lp["token_logprobs"][i] - ref[i][0]["logprob"]) < 1e-5
                                        for i in range(8)), (lp["token_logprobs"], ref))
    check("text_offset", lp["text_offset"][1] == len(lp["tokens"][0]), lp["text_offset"])
    check("top alternatives", all(len(t) == 2 for t in lp["top_logprobs"]), lp["top_logprobs"])


def choices(s):
    """n choices: each sampled with the request's seed plus its index (choice 0 is the n = 1
    answer, choice 1 the n = 1 answer of seed + 1), streamed interleaved by index to the
    same texts, usage counting the prompt once; a chat's choices each a message."""
    req = {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 1.0, "seed": 11}
    status, body = s.json("POST", "/v1/completions", dict(req, n=3))
    got = body.get("choices", [])
    _, one = s.json("POST", "/v1/completions", req)
    _, next_seed = s.json("POST", "/v1/completions", dict(req, seed=12))
    texts = [c["text"] for c in got]
    check("n = 3: three choices, each the n = 1 answer of its seed", status == 200 and
          [c["index"] for c in got] == [0, 1, 2] and texts[0] == one["choices"][0]["text"] and
          texts[1] == next_seed["choices"][0]["text"] and len(set(texts)) > 1, (texts, one))
    check("n = 3: usage counts the prompt once", body["usage"]["prompt_tokens"] ==
          one["usage"]["prompt_tokens"] and body["usage"]["completion_tokens"] ==
          sum(3 * [24]) == 72, body["usage"])
    status, events, _, done, _ = s.stream("/v1/completions", dict(
        req, n=3, stream=True, stream_options={"include_usage": True}))
    streamed = ["", "", ""]
    finishes = [[], [], []]
    for e in events:
        for c in e["choices"]:
            streamed[c["index"]] += c["text"]
            if c["finish_reason"]:
                finishes[c["index"]].append(c["finish_reason"])
    check("n = 3 streamed: the same texts, one finish each", status == 200 and done and
          streamed == texts and finishes == [["length"]] * 3 and
          events[-1]["usage"]["completion_tokens"] == 72, (streamed, finishes, events[-1]))
    chat_req = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8,
                "temperature": 0, "n": 2}
    status, body = s.json("POST", "/v1/chat/completions", chat_req)
    msgs = [c["message"] for c in body.get("choices", [])]
    check("chat n = 2, greedy: two equal messages", status == 200 and len(msgs) == 2 and
          msgs[0] == msgs[1] and msgs[0]["role"] == "assistant", body)
    status, events, _, done, _ = s.stream("/v1/chat/completions", dict(chat_req, stream=True))
    roles = [c["index"] for e in events for c in e["choices"] if c["delta"].get("role")]
    content = ["", ""]
    for e in events:
        for c in e["choices"]:
            content[c["index"]] += c["delta"].get("content", "")
    check("chat n = 2 streamed: a role opening and the message per choice", status == 200 and
          sorted(roles) == [0, 1] and content == [m["content"] for m in msgs], (roles, content))


def chat(s):
    want = chat_text(build, stories, "Tell me a story", 24)
    req = {"model": "stories260K", "messages": [{"role": "user", "content": "Tell me a story"}],
           "max_tokens": 24, "temperature": 0}
    status, body = s.json("POST", "/v1/chat/completions", req)
    check("chat 200", status == 200, body)
    c = body["choices"][0]
    check("chat == pshard-run -cnv", c["message"] == {"role": "assistant", "content": want},
          (c["message"], want))
    check("chat shape", body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
          and c["finish_reason"] in ("stop", "length") and "usage" in body, body)
    status, events, raw, done, _ = s.stream("/v1/chat/completions", dict(req, stream=True))
    check("chat stream opens with the role", events[0]["choices"][0]["delta"]["role"] == "assistant",
          events[0])
    text = "".join(e["choices"][0]["delta"].get("content", "") for e in events)
    check("chat stream == pshard-run -cnv", text == want, (text, want))
    check("chat stream chunk objects", all(e["object"] == "chat.completion.chunk" for e in events)
          and done, raw[-300:])
    check("chat stream finish", events[-1]["choices"][0]["finish_reason"] == c["finish_reason"]
          and events[-1]["choices"][0]["delta"] == {}, events[-1])
    parts = dict(req, messages=[{"role": "user", "content": [{"type": "text", "text": "Tell me a "},
                                                             {"type": "text", "text": "story"}]}])
    status, body = s.json("POST", "/v1/chat/completions", parts)
    check("content parts", status == 200 and body["choices"][0]["message"]["content"] == want, body)
    status, body = s.json("POST", "/v1/chat/completions", dict(req, logprobs=True, top_logprobs=2))
    content = body["choices"][0]["logprobs"]["content"]
    check("chat logprobs", len(content) == body["usage"]["completion_tokens"] and
          all(set(t) == {"token", "logprob", "bytes", "top_logprobs"} and len(t["top_logprobs"]) == 2
              and t["logprob"] <= 0 for t in content), content[:2])

    # POST /apply-template: the prompt the chat above ran, rendered, not run.
    status, body = s.json("POST", "/apply-template", {"messages": req["messages"]})
    check("apply-template: chatml's rendering",
          status == 200 and body == {"prompt": "<|im_start|>user\nTell me a story<|im_end|>\n"
                                               "<|im_start|>assistant\n"}, body)
    _, tok = s.json("POST", "/tokenize", {"content": body.get("prompt", ""), "add_special": True})
    _, ran = s.json("POST", "/v1/chat/completions", dict(req, max_tokens=1))
    check("apply-template: the prompt a chat completion reads",
          len(tok.get("tokens", [])) == ran["usage"]["prompt_tokens"], (tok, ran.get("usage")))
    status, body = s.json("POST", "/apply-template", {"prompt": "no messages"})
    check("apply-template without messages: 400 naming them",
          status == 400 and "messages" in body["error"]["message"], body)


def busy_batch(s):
    """Eight prompts at once: each answer is the prompt's answer alone."""
    want = {p: run_text(build, stories, p, 40) for p in PROMPTS}
    got = {}

    def one(p):
        got[p] = s.json("POST", "/v1/completions", {"prompt": p, "max_tokens": 40, "temperature": 0})

    threads = [threading.Thread(target=one, args=(p,)) for p in PROMPTS]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for p in PROMPTS:
        status, body = got[p]
        check("busy batch: " + p, status == 200 and body["choices"][0]["text"] == want[p],
              (body, want[p]))


def slots(s):
    """GET /slots: one entry per -np sequence; a request running shows in one of them, its
    prompt read and its tokens counted; idle again once it ends."""
    result = {}
    prompt = "Once upon a time"
    t = threading.Thread(target=lambda: result.update(r=s.json("POST", "/v1/completions", {
        "prompt": prompt, "max_tokens": 1500, "temperature": 0, "ignore_eos": True})))
    t.start()
    seen = None
    for _ in range(2000):
        status, body = s.json("GET", "/slots")
        busy = [x for x in body if x.get("is_processing")] if status == 200 else []
        if busy and busy[0]["state"] == "generating" and busy[0]["n_decoded"] > 0:
            seen = (body, busy[0])
            break
    t.join()
    check("slots: -np entries, a running request in one", seen is not None and
          len(seen[0]) == 4 and [x["id"] for x in seen[0]] == [0, 1, 2, 3], seen)
    if seen:
        slot = seen[1]
        check("slots: its prompt read and its tokens counted",
              slot["n_prompt_tokens"] == 5 and slot["n_prompt_tokens_processed"] == 5 and
              0 < slot["n_decoded"] <= 1500 and slot["n_ctx"] > 0, slot)
    status, body = s.json("GET", "/slots")
    check("slots: idle once it ended", status == 200 and
          not any(x["is_processing"] for x in body), body)


def tokenize(s):
    status, body = s.json("POST", "/tokenize", {"content": "Once upon a time", "add_special": True})
    check("tokenize", status == 200 and body["tokens"] == [1, 403, 407, 261, 378], body)
    status, body = s.json("POST", "/tokenize", {"content": "Once", "with_pieces": True})
    check("tokenize pieces", status == 200 and body["tokens"][0]["piece"].strip() == "Once", body)
    status, body = s.json("POST", "/detokenize", {"tokens": [1, 403, 407, 261, 378]})
    check("detokenize", status == 200 and body["content"] == "Once upon a time", body)


def prefix_cache(s):
    """A prompt that starts like an earlier prompt and its answer reads the KV pages of
    that start (usage.prompt_tokens_details.cached_tokens) and answers as pshard-run does
    with the whole prompt."""
    first = ("Lily and Ben went to the park to play. They saw a big tree with red apples. "
             "Ben wanted to climb the tree, but Lily said")
    status, body = s.json("POST", "/v1/completions", {"prompt": first, "max_tokens": 24,
                                                      "temperature": 0})
    check("prefix: first 200", status == 200, body)
    second = first + body["choices"][0]["text"] + " Then they"
    before = s.metric("pshard_prompt_tokens_cached_total")
    status, body = s.json("POST", "/v1/completions", {"prompt": second, "max_tokens": 24,
                                                      "temperature": 0})
    cached = body["usage"]["prompt_tokens_details"]["cached_tokens"]
    check("prefix: cached tokens", status == 200 and 32 <= cached < body["usage"]["prompt_tokens"]
          and cached % 16 == 0, body["usage"])
    want = run_text(build, stories, second, 24)
    check("prefix: answer == pshard-run", body["choices"][0]["text"] == want,
          (body["choices"][0]["text"], want))
    check("prefix: counted", s.metric("pshard_prompt_tokens_cached_total") - before == cached,
          cached)


def metrics(s):
    _, hdrs, data = s.request("GET", "/metrics")
    text = data.decode()
    check("metrics content type", hdrs.get("Content-Type", "").startswith("text/plain"), hdrs)
    for family in ["pshard_requests_total", "pshard_generated_tokens_total",
                   "pshard_draft_tokens_total", "pshard_draft_tokens_accepted_total", "pshard_draft_passes_total",
                   "pshard_generated_tokens_per_second", "pshard_requests_queued",
                   "pshard_kv_pages_used", "pshard_kv_pages_cached",
                   "pshard_kv_window_pages_total",
                   "pshard_prompt_tokens_cached_total", "pshard_vram_used_bytes",
                   "pshard_plan_passes_total",
                   "pshard_plan_experts_total",
                   "pshard_http_responses_total"]:
        check("metric " + family, "# TYPE " + family + " " in text, family)
    check("generated counted", s.metric("pshard_generated_tokens_total") >= 32 * 3, text[:400])
    check("http counted", s.metric("pshard_http_responses_total",
                                   'route="/v1/completions",status="200"') >= 3, text[-600:])


PERSON = {"type": "object", "required": ["name", "age"], "properties": {
    "name": {"type": "string", "maxLength": 12},
    "age": {"type": "integer", "minimum": 1, "maximum": 9}}}
ANSWER = 'root ::= ("yes" | "no") ", because " [a-z ]{5,30} "."'


def structured(s):
    """Structured output: answers that follow the schema or grammar, equal to pshard-run's
    with the same constraint, through every field that names one, streamed or not, alone
    or in a busy batch; penalties and logit biases equal to pshard-run's."""
    prompt = "Once upon a time"
    want = run_text(build, stories, prompt, 60, "-j", json.dumps(PERSON))
    person = json.loads(want)
    check("pshard-run -j follows the schema", set(person) == {"name", "age"}
          and isinstance(person["age"], int) and 1 <= person["age"] <= 9
          and len(person["name"]) <= 12, want)
    base = {"prompt": prompt, "max_tokens": 60, "temperature": 0}
    fmt = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
    status, body = s.json("POST", "/v1/completions", dict(base, response_format=fmt))
    check("response_format json_schema == pshard-run -j", status == 200 and
          body["choices"][0]["text"] == want and body["choices"][0]["finish_reason"] == "stop", body)
    status, body = s.json("POST", "/v1/completions", dict(base, json_schema=PERSON))
    check("json_schema == pshard-run -j", status == 200 and body["choices"][0]["text"] == want, body)
    status, events, _, _, _ = s.stream("/v1/completions", dict(base, response_format=fmt, stream=True))
    text = "".join(e["choices"][0]["text"] for e in events if e["choices"])
    check("json_schema streamed", status == 200 and text == want, (text, want))

    want_grammar = run_text(build, stories, prompt, 40, "--grammar", ANSWER)
    check("pshard-run --grammar follows it",
          re.fullmatch(r"(yes|no), because [a-z ]{5,30}\.", want_grammar), want_grammar)
    status, body = s.json("POST", "/v1/completions", dict(base, max_tokens=40, grammar=ANSWER))
    check("grammar == pshard-run --grammar", status == 200 and
          body["choices"][0]["text"] == want_grammar, body)

    status, body = s.json("POST", "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 80,
        "temperature": 0, "response_format": {"type": "json_object"}})
    content = body["choices"][0]["message"]["content"]
    # A story model's object may not close within max_tokens; one that did must parse.
    finish = body["choices"][0]["finish_reason"]
    check("json_object gives an object", status == 200 and content.startswith("{") and
          (finish == "length" or isinstance(json.loads(content), dict)), body)

    # Constrained and plain requests together: each answer is the one it gets alone.
    plain = run_text(build, stories, prompt, 40)
    reqs = [(dict(base, response_format=fmt), want), (dict(base, max_tokens=40, grammar=ANSWER),
            want_grammar), (dict(base, max_tokens=40), plain), (dict(base, json_schema=PERSON), want)]
    results = [None] * len(reqs)

    def one(i):
        results[i] = s.json("POST", "/v1/completions", reqs[i][0])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(reqs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check("constrained answers in a busy batch", all(
        r[0] == 200 and r[1]["choices"][0]["text"] == w for r, (_, w) in zip(results, reqs)),
        [r[1] for r in results])

    # OpenAI's penalties and logit_bias, as pshard-run's flags: a different answer, the same
    # on both. The banned token is one the plain answer uses.
    _, tok = s.json("POST", "/tokenize", {"content": " little"})
    banned = tok["tokens"][-1]
    want_pen = run_text(build, stories, prompt, 32, "--frequency-penalty", "0.8",
                        "--presence-penalty", "0.4", "-l", f"{banned}-100")
    check("penalties change the answer", want_pen != plain[:len(want_pen)], want_pen)
    status, body = s.json("POST", "/v1/completions", dict(
        base, max_tokens=32, frequency_penalty=0.8, presence_penalty=0.4,
        logit_bias={str(banned): -100}))
    check("penalties and logit_bias == pshard-run", status == 200 and
          body["choices"][0]["text"] == want_pen, (body, want_pen))

    # llama-server's other samplers, as pshard-run's flags: DRY on a greedy answer, and
    # seeded samples through Mirostat, XTC and typical; the same answers on both.
    looping = ("Once upon a time, there was a little girl named Lily. Once upon a time, there "
               "was a little girl named")  # greedy goes on " Lily.", extending the repeat
    want_dry = run_text(build, stories, looping, 16, "--dry-multiplier", "100",
                        "--dry-sequence-breaker", "\\n")
    check("DRY changes the answer", want_dry != run_text(build, stories, looping, 16), want_dry)
    status, body = s.json("POST", "/v1/completions", dict(
        base, prompt=looping, max_tokens=16, dry_multiplier=100, dry_sequence_breakers=["\n"]))
    check("DRY == pshard-run", status == 200 and body["choices"][0]["text"] == want_dry,
          (body, want_dry))
    # A breaker the vocabulary spells over several tokens stops a repeat too: right after
    # "girl named" no repeat runs, so the first token is greedy's; a breaker that does not
    # occur leaves DRY's.
    greedy_first = run_text(build, stories, looping, 1)
    for breakers, free in [(["girl named"], True), (["no such words"], False)]:
        status, body = s.json("POST", "/v1/completions", dict(
            base, prompt=looping, max_tokens=1, dry_multiplier=100,
            dry_sequence_breakers=breakers))
        check(f"DRY breakers {breakers}: the first token is greedy's: {free}", status == 200 and
              (body["choices"][0]["text"] == greedy_first) == free, (body, greedy_first))
    for fields, flags in [({"mirostat": 2, "mirostat_tau": 3}, ["--mirostat", "2",
                                                                "--mirostat-ent", "3"]),
                          ({"xtc_probability": 0.5, "typical_p": 0.9, "top_n_sigma": 1.5},
                           ["--xtc-probability", "0.5", "--typical", "0.9", "--top-nsigma",
                            "1.5"])]:
        p = run(tool(build, "pshard-run"), "-m", stories, "-p", prompt, "-n", "32", "-t", "1",
                "--temp", "1.2", "--seed", "7", *flags)
        want = p.stdout[len(prompt):-1]
        status, body = s.json("POST", "/v1/completions", dict(
            base, max_tokens=32, temperature=1.2, seed=7, **fields))
        check(f"{fields} == pshard-run", p.returncode == 0 and status == 200 and
              body["choices"][0]["text"] == want, (body, want, p.stderr))
    # `samplers`: an array of names or a string of letters, as pshard-run's --samplers; the
    # answer without the temperature's stage is pshard-run's at temperature 1.
    p = run(tool(build, "pshard-run"), "-m", stories, "-p", prompt, "-n", "32", "-t", "1",
            "--temp", "1", "--seed", "5", "--top-k", "0", "--top-p", "1", "--min-p", "0.02")
    want = p.stdout[len(prompt):-1]
    hot = dict(base, max_tokens=32, temperature=1.7, seed=5, top_k=0, top_p=1, min_p=0.02)
    for order in [["top_k", "min-p"], "km"]:
        status, body = s.json("POST", "/v1/completions", dict(hot, samplers=order))
        check(f"samplers {order!r} == pshard-run at temperature 1", p.returncode == 0 and
              status == 200 and body["choices"][0]["text"] == want, (body, want, p.stderr))
    status, body = s.json("POST", "/v1/completions", hot)
    check("... and the temperature's stage changes it", status == 200 and
          body["choices"][0]["text"] != want, body)
    status, body = s.json("POST", "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "mirostat": 3})
    check("mirostat 3 is refused", status == 400 and body["error"]["param"] == "mirostat", body)

    # llama-server's own /completion: the same answer in its form, streamed or not.
    native = {"prompt": looping, "n_predict": 16, "temperature": 0, "dry_multiplier": 100,
              "dry_sequence_breakers": ["\n"]}
    status, body = s.json("POST", "/completion", native)
    check("/completion == pshard-run, in llama-server's form", status == 200 and
          body.get("content") == want_dry and body["stop"] is True and
          body["stop_type"] == "limit" and body["tokens_predicted"] == 16, (body, want_dry))
    t = body.get("timings", {})
    check("/completion's timings", t.get("predicted_n") == 16 and t["predicted_ms"] > 0 and
          t["prompt_ms"] > 0 and t["prompt_n"] == body["tokens_evaluated"] - body["tokens_cached"]
          and abs(t["predicted_per_second"] - 16e3 / t["predicted_ms"]) < 1e-6 *
          t["predicted_per_second"], t)
    status, events, _, _, _ = s.stream("/completion", dict(native, stream=True))
    check("/completion streamed: the same content, then a stop object with timings",
          status == 200 and "".join(e["content"] for e in events) == want_dry and
          events[-1]["stop"] is True and events[-1]["timings"]["predicted_n"] == 16 and
          all(e["stop"] is False for e in events[:-1]), events[-2:])
    _, tok = s.json("POST", "/tokenize", {"content": looping, "add_special": True})
    status, body = s.json("POST", "/completion", {"prompt": tok["tokens"], "n_predict": 16,
                                                  "temperature": 0})
    check("/completion of token ids == of the text", status == 200 and
          body["content"] == run_text(build, stories, looping, 16), body)
    _, props = s.json("GET", "/props")
    n_ctx = props["default_generation_settings"]["n_ctx"]
    status, body = s.json("POST", "/completion", {"prompt": prompt, "temperature": 0,
                                                  "ignore_eos": True})
    check("/completion without n_predict runs until the context is full", status == 200 and
          body["stop_type"] == "limit" and
          body["tokens_evaluated"] + body["tokens_predicted"] == n_ctx, (body, n_ctx))
    # t_max_predict_ms (llama.vscode's): after the first newline the answer ends at the first
    # token past the time limit, a limit; the text up to there is the unlimited answer's.
    full = body
    status, cut = s.json("POST", "/completion", {"prompt": prompt, "temperature": 0,
                                                 "ignore_eos": True, "t_max_predict_ms": 1})
    check("t_max_predict_ms ends the answer after a newline", status == 200 and
          "\n" in full["content"] and cut["stop_type"] == "limit" and "\n" in cut["content"] and
          full["content"].startswith(cut["content"]) and
          cut["tokens_predicted"] < full["tokens_predicted"], (cut, full["content"]))
    status, body = s.json("POST", "/completion", {"prompt": prompt, "t_max_predict_ms": -1})
    check("a negative t_max_predict_ms is refused", status == 400 and
          body["error"]["param"] == "t_max_predict_ms", body)
    # return_tokens: the generated ids in "tokens", streamed one a chunk; empty without it.
    ask = {"prompt": prompt, "n_predict": 12, "temperature": 0}
    _, plain = s.json("POST", "/completion", ask)
    status, body = s.json("POST", "/completion", dict(ask, return_tokens=True))
    _, text = s.json("POST", "/detokenize", {"tokens": body.get("tokens", [])})
    _, events, _, _, _ = s.stream("/completion", dict(ask, return_tokens=True, stream=True))
    check("return_tokens: the ids of the content", status == 200 and plain["tokens"] == [] and
          len(body["tokens"]) == 12 and text["content"].strip() == body["content"].strip() and
          [t for e in events for t in e["tokens"]] == body["tokens"], (body, text, plain))
    # n_probs: llama-server's completion_probabilities, the log-probs /v1/completions gives.
    ask = {"prompt": prompt, "n_predict": 8, "temperature": 0, "n_probs": 3}
    status, body = s.json("POST", "/completion", ask)
    _, openai = s.json("POST", "/v1/completions", {"prompt": prompt, "max_tokens": 8,
                                                   "temperature": 0, "logprobs": 3})
    probs = body.get("completion_probabilities", [])
    check("/completion n_probs: each token's id, text, log-prob and 3 alternatives",
          status == 200 and len(probs) == 8 and
          [p["logprob"] for p in probs] == openai["choices"][0]["logprobs"]["token_logprobs"] and
          "".join(p["token"] for p in probs) == body["content"] and
          all(len(p["top_logprobs"]) == 3 and p["top_logprobs"][0]["id"] == p["id"]
              for p in probs), (probs[:2], openai))
    status, events, _, _, _ = s.stream("/completion", dict(ask, stream=True))
    streamed = [p for e in events for p in e.get("completion_probabilities", [])]
    check("/completion n_probs streamed: one entry a token, the same",
          status == 200 and streamed == probs, streamed[:2])
    # post_sampling_probs: the probabilities the token was drawn with, after the stages
    # (top-k 2: two alternatives summing to 1); the tokens drawn stay the same.
    ask = {"prompt": prompt, "n_predict": 8, "temperature": 1, "seed": 3, "top_k": 2,
           "top_p": 1, "min_p": 0, "n_probs": 3}
    status, body = s.json("POST", "/completion", dict(ask, post_sampling_probs=True))
    _, model_probs = s.json("POST", "/completion", ask)
    probs = body.get("completion_probabilities", [])
    check("post_sampling_probs: each token's prob and top_probs after top-k",
          status == 200 and body["content"] == model_probs["content"] and len(probs) == 8 and
          all(len(p["top_probs"]) == 2 and "logprob" not in p and
              abs(sum(a["prob"] for a in p["top_probs"]) - 1) < 1e-5 and
              p["prob"] in [a["prob"] for a in p["top_probs"]] for p in probs), probs[:2])
    status, body = s.json("POST", "/completion", dict(ask, temperature=0, post_sampling_probs=True))
    probs = body.get("completion_probabilities", [])
    check("post_sampling_probs greedy: the token alone, probability 1", status == 200 and
          all(p["prob"] == 1 and [a["id"] for a in p["top_probs"]] == [p["id"]] for p in probs),
          probs[:2])
    status, body = s.json("POST", "/completion", {"prompt": prompt, "image_data": [{"data": "x"}]})
    check("/completion image_data refused", status == 400 and
          body["error"]["param"] == "image_data", body)


WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "required": ["city"], "properties": {
        "city": {"type": "string", "maxLength": 20}, "unit": {"enum": ["c", "f"]}}}}}
CLOCK = {"type": "function", "function": {
    "name": "get_time", "parameters": {"type": "object", "required": ["tz"],
                                       "properties": {"tz": {"$ref": "#/$defs/zone"}},
                                       "$defs": {"zone": {"type": "string", "maxLength": 8}}}}}


def joined_calls(events):
    """A stream's tool calls as OpenAI's clients join them: per index, the id, type and name
    of its first delta and the arguments of all of them; and how many deltas there were."""
    calls, pieces = {}, 0
    for e in events:
        for d in e["choices"][0]["delta"].get("tool_calls", []):
            c = calls.setdefault(d["index"], {"id": d.get("id"), "type": d.get("type"),
                                              "function": {"name": d["function"].get("name"),
                                                           "arguments": ""}})
            c["function"]["arguments"] += d["function"].get("arguments", "")
            pieces += 1
    return [calls[i] for i in sorted(calls)], pieces


def same_calls(streamed, calls, ids=False):
    """The same functions with the same arguments (compared as JSON), and ids if asked."""
    def key(x):
        return ((x["id"] if ids else None), x["type"], x["function"]["name"],
                json.loads(x["function"]["arguments"]))
    try:
        return [key(x) for x in streamed] == [key(x) for x in calls]
    except ValueError:
        return False


def valid_call(call):
    """Whether a tool call names a listed function with arguments its schema takes."""
    args = json.loads(call["function"]["arguments"])
    if call["function"]["name"] == "get_weather":
        return (isinstance(args["city"], str) and len(args["city"]) <= 20
                and args.get("unit", "c") in ("c", "f") and set(args) <= {"city", "unit"})
    return (call["function"]["name"] == "get_time" and isinstance(args["tz"], str)
            and len(args["tz"]) <= 8 and set(args) == {"tz"})


def required_call(s, label, req, min_pieces):
    """A required call (`req`) well-formed, and streamed the same in at least `min_pieces`
    deltas; the call."""
    status, body = s.json("POST", "/v1/chat/completions", req)
    c = body["choices"][0] if status == 200 else {}
    calls = c.get("message", {}).get("tool_calls", [])
    check(label + ": a required call", c.get("finish_reason") == "tool_calls" and
          len(calls) == 1 and valid_call(calls[0]), body)
    status, events, _, done, _ = s.stream("/v1/chat/completions", dict(req, stream=True))
    streamed, pieces = joined_calls(events)
    check(label + ": the call streamed", status == 200 and done and len(streamed) == 1 and
          pieces >= min_pieces and same_calls(streamed, calls), events[-3:])
    return calls


def call_and_result(s, label, req):
    """A conversation holding an earlier call and its result (after `req`'s messages) is
    taken."""
    history = req["messages"] + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21}'}]
    status, body = s.json("POST", "/v1/chat/completions",
                          dict(req, messages=history, tool_choice="auto", max_tokens=16))
    check(label + ": a conversation with a call and its result", status == 200, body)


def tool_calling(s):
    """Function calling in the Hermes format: a required call is well-formed, streamed or
    not; a named function is the one called; "none" lists no tools and answers as if there
    were none; a conversation holding earlier calls and their results is taken."""
    ask = [{"role": "user", "content": "What is the weather in Paris?"}]
    req = {"messages": ask, "max_tokens": 200, "temperature": 0, "tools": [WEATHER, CLOCK],
           "tool_choice": "required", "parallel_tool_calls": False}
    status, body = s.json("POST", "/v1/chat/completions", req)
    c = body["choices"][0]
    calls = c["message"].get("tool_calls", [])
    check("a required call", status == 200 and c["finish_reason"] == "tool_calls" and
          c["message"]["content"] is None and len(calls) == 1 and calls[0]["type"] == "function"
          and calls[0]["id"].startswith("call_") and valid_call(calls[0]), body)
    status, events, _, done, _ = s.stream("/v1/chat/completions", dict(req, stream=True))
    streamed, pieces = joined_calls(events)
    finish = [e["choices"][0]["finish_reason"] for e in events if e["choices"][0]["finish_reason"]]
    check("the call streamed, its arguments piece by piece", status == 200 and done and
          finish == ["tool_calls"] and same_calls(streamed, calls) and pieces > 3 and
          streamed[0]["id"].startswith("call_") and
          not any(e["choices"][0]["delta"].get("content") for e in events), events[-3:])
    named = dict(req, tool_choice={"type": "function", "function": {"name": "get_time"}})
    status, body = s.json("POST", "/v1/chat/completions", named)
    calls = body["choices"][0]["message"].get("tool_calls", [])
    check("the named function", status == 200 and len(calls) == 1 and
          calls[0]["function"]["name"] == "get_time" and valid_call(calls[0]), body)

    plain = {"messages": ask, "max_tokens": 24, "temperature": 0}
    status, want = s.json("POST", "/v1/chat/completions", plain)
    status, body = s.json("POST", "/v1/chat/completions",
                          dict(plain, tools=[WEATHER], tool_choice="none"))
    check("tool_choice none: no tools listed, the plain answer", status == 200 and
          body["choices"][0]["message"] == want["choices"][0]["message"] and
          body["usage"]["prompt_tokens"] == want["usage"]["prompt_tokens"], (body, want))
    status, body = s.json("POST", "/v1/chat/completions", dict(plain, tools=[WEATHER]))
    check("tools listed in the prompt", status == 200 and
          body["usage"]["prompt_tokens"] > want["usage"]["prompt_tokens"] + 50, body["usage"])

    history = ask + [
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
            {"id": "call_2", "type": "function",
             "function": {"name": "get_time", "arguments": '{"tz": "CET"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21, "sky": "clear"}'},
        {"role": "tool", "tool_call_id": "call_2", "content": "14:05"}]
    status, body = s.json("POST", "/v1/chat/completions",
                          dict(plain, messages=history, tools=[WEATHER, CLOCK]))
    m = body["choices"][0]["message"] if status == 200 else {}
    check("a conversation with calls and results", status == 200 and
          (isinstance(m.get("content"), str) or all(valid_call(x) for x in m["tool_calls"])), body)


def reasoning(s):
    """A thinking answer (forced by a grammar: stories260K does not think): its reasoning in
    reasoning_content and the rest in content, whole and streamed alike; reasoning_format
    "none" leaves it in content; enable_thinking off is no change for a model without a
    <think> token."""
    grammar = 'root ::= "<think>\\n" [a-z]{2,6} " " [a-z]{2,6} "\\n</think>\\n\\n" [a-z ]{1,12}'
    req = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 60, "temperature": 0,
           "grammar": grammar}
    status, body = s.json("POST", "/v1/chat/completions", req)
    m = body["choices"][0]["message"] if status == 200 else {}
    status, raw = s.json("POST", "/v1/chat/completions", dict(req, reasoning_format="none"))
    text = raw["choices"][0]["message"]["content"] if status == 200 else ""
    thought, _, answer = text.partition("\n</think>\n\n")
    check("reasoning_content and content", text.startswith("<think>\n") and answer and
          "reasoning_content" not in raw["choices"][0]["message"] and
          m.get("reasoning_content") == thought[len("<think>\n"):] and
          m.get("content") == answer.lstrip(), (m, text))
    status, events, _, done, _ = s.stream("/v1/chat/completions", dict(req, stream=True))
    deltas = [e["choices"][0]["delta"] for e in events if e["choices"]]
    check("reasoning streamed", status == 200 and done and
          "".join(d.get("reasoning_content", "") for d in deltas) == m.get("reasoning_content")
          and "".join(d.get("content", "") for d in deltas) == m.get("content"), deltas)
    thought = body["usage"].get("completion_tokens_details", {}).get("reasoning_tokens", 0)
    check("the thought counted in usage", 0 < thought < body["usage"]["completion_tokens"] and
          "completion_tokens_details" not in raw["usage"], (body["usage"], raw["usage"]))
    _, events, _, _, _ = s.stream("/v1/chat/completions", dict(
        req, stream=True, stream_options={"include_usage": True}))
    check("the thought counted in a stream's usage",
          events[-1]["usage"]["completion_tokens_details"] == {"reasoning_tokens": thought},
          (events[-1], body["usage"]))
    plain = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4, "temperature": 0}
    _, want = s.json("POST", "/v1/chat/completions", plain)
    status, body = s.json("POST", "/v1/chat/completions",
                          dict(plain, chat_template_kwargs={"enable_thinking": False}))
    check("enable_thinking off without a <think> token: the same prompt", status == 200 and
          body["usage"]["prompt_tokens"] == want["usage"]["prompt_tokens"], (body, want))


def thinking_switch(tmp):
    """A model whose vocabulary holds <think> and </think> (pshard-mkmodel --user-tokens, as
    Qwen3's converter types them): enable_thinking off puts Qwen3's empty thought after the
    assistant's opening; on, or unset, is the plain prompt. With thinking on, a schema's
    grammar waits for the thought's end (forced at once here by a logit bias on </think>);
    with it off, it constrains from the first token."""
    model = os.path.join(tmp, "thinker.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--arch", "qwen3", "--n-embd", "64",
            "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "96",
            "--user-tokens", "<think>,</think>")
    check("mkmodel --user-tokens", p.returncode == 0, p.stderr)
    with Server(build, model, "-np", "1", "-c", "256", "--chat-template", "chatml") as s:
        plain = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
        n = {}
        for name, kwargs in (("unset", None), ("on", {"enable_thinking": True}),
                             ("off", {"enable_thinking": False})):
            _, body = s.json("POST", "/v1/chat/completions",
                             dict(plain, chat_template_kwargs=kwargs) if kwargs else plain)
            n[name] = body.get("usage", {}).get("prompt_tokens")
        _, empty = s.json("POST", "/tokenize", {"content": "<think>\n\n</think>\n\n"})
        ids = empty.get("tokens", [])
        _, vocab = s.json("GET", "/v1/models")
        n_vocab = vocab["data"][0]["meta"]["n_vocab"]
        check("enable_thinking off: the empty thought appended", n["unset"] == n["on"] and
              n["off"] == n["on"] + len(ids) and ids[0] == n_vocab - 2 and
              n_vocab - 1 in ids, (n, ids, n_vocab))
        schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
        ask = dict(plain, max_tokens=40, temperature=0, response_format={
            "type": "json_schema", "json_schema": {"name": "a", "schema": schema}})
        status, body = s.json("POST", "/v1/chat/completions",
                              dict(ask, logit_bias={str(n_vocab - 1): 100}))
        m = body["choices"][0]["message"] if status == 200 else {}
        check("thinking on: the schema after the thought", m.get("reasoning_content") == "" and
              isinstance(json.loads(m.get("content") or "null"), dict) and
              isinstance(json.loads(m["content"])["a"], int), body)
        status, body = s.json("POST", "/v1/chat/completions",
                              dict(ask, chat_template_kwargs={"enable_thinking": False}))
        m = body["choices"][0]["message"] if status == 200 else {}
        check("thinking off: the schema from the first token", "reasoning_content" not in m and
              isinstance(json.loads(m.get("content") or "null"), dict), body)


def thinking_opened(tmp):
    """--chat-template chatml-thinking (QwQ, Qwen3 Thinking-2507: the generation prompt
    opens the thought): every answer starts inside the thought, so a text the model never
    closes is all reasoning, streamed or not, and counted as reasoning tokens; thinking off
    closes the opened thought empty; a tool call under "auto" is free inside it."""
    model = os.path.join(tmp, "thinker.gguf")
    with Server(build, model, "-np", "1", "-c", "1024", "--chat-template", "chatml-thinking") as s:
        ask = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 8,
               "temperature": 0, "logit_bias": {}}
        _, vocab = s.json("GET", "/v1/models")
        n_vocab = vocab["data"][0]["meta"]["n_vocab"]
        ask["logit_bias"] = {str(n_vocab - 1): -100}  # never </think>: all of it thought
        status, body = s.json("POST", "/v1/chat/completions", ask)
        m = body["choices"][0]["message"] if status == 200 else {}
        usage = body.get("usage", {})
        check("opened: the answer is the thought", status == 200 and
              m.get("reasoning_content") and not m.get("content") and
              usage["completion_tokens_details"]["reasoning_tokens"] ==
              usage["completion_tokens"], body)
        status, events, _, done, _ = s.stream("/v1/chat/completions", dict(ask, stream=True))
        streamed = "".join(e["choices"][0]["delta"].get("reasoning_content", "")
                           for e in events if e.get("choices"))
        check("opened: streamed the same", status == 200 and done and
              streamed == m.get("reasoning_content"), (streamed, m))
        _, on = s.json("POST", "/v1/chat/completions", dict(ask, max_tokens=1))
        _, off = s.json("POST", "/v1/chat/completions",
                        dict(ask, max_tokens=1, chat_template_kwargs={"enable_thinking": False}))
        turn = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n"
        n = [len(s.json("POST", "/tokenize", {"content": text})[1].get("tokens", []))
             for text in (turn, turn + "\n</think>\n\n")]
        check("opened: thinking off closes it empty", "reasoning_content" not in
              off["choices"][0]["message"] and off["usage"]["prompt_tokens"] -
              on["usage"]["prompt_tokens"] == n[1] - n[0] > 0, (on, off, n))
        status, body = s.json("POST", "/v1/chat/completions",
                              dict(ask, tools=[WEATHER], tool_choice="auto"))
        check("opened: tools under auto", status == 200 and
              body["choices"][0]["message"].get("reasoning_content"), body)


def mistral_thinking(tmp):
    """A Tekken vocabulary with Mistral's [THINK] and [/THINK] (Magistral): the thought is
    read by those tags. A schema's grammar waits for [/THINK] (forced at once by a logit
    bias), and thinking off appends the empty [THINK][/THINK]."""
    model = os.path.join(tmp, "magistral.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--n-embd", "64", "--n-layer", "2",
            "--n-head", "4", "--n-head-kv", "2", "--n-ff", "96", "--control-tokens",
            "[INST],[/INST],[SYSTEM_PROMPT],[/SYSTEM_PROMPT],[THINK],[/THINK]")
    check("mkmodel [THINK]", p.returncode == 0, p.stderr)
    with Server(build, model, "-np", "1", "-c", "512", "--chat-template",
                "mistral-v7-tekken") as s:
        close = s.json("POST", "/tokenize", {"content": "[/THINK]"})[1].get("tokens", [])
        schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
        ask = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 40,
               "temperature": 0, "response_format": {
                   "type": "json_schema", "json_schema": {"name": "a", "schema": schema}}}
        status, body = s.json("POST", "/v1/chat/completions",
                              dict(ask, logit_bias={str(close[0]): 100} if close else {}))
        m = body["choices"][0]["message"] if status == 200 else {}
        check("[THINK]: the schema after [/THINK]", len(close) == 1 and
              m.get("reasoning_content") == "" and
              isinstance(json.loads(m.get("content") or "null"), dict), (close, body))
        one = dict(ask, max_tokens=1)
        del one["response_format"]
        _, on = s.json("POST", "/v1/chat/completions", one)
        _, off = s.json("POST", "/v1/chat/completions",
                        dict(one, chat_template_kwargs={"enable_thinking": False}))
        check("[THINK]: thinking off appends the empty thought",
              off["usage"]["prompt_tokens"] == on["usage"]["prompt_tokens"] + 2, (on, off))


def harmony(tmp):
    """gpt-oss's harmony (--chat-template gpt-oss on a vocabulary with its markers as
    control tokens): thinking off appends an empty analysis and opens the final channel, so
    a schema constrains from the first token and the answer is content; reasoning_effort
    sets the system message's level, a bad one is refused by name."""
    model = os.path.join(tmp, "gpt-oss.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--arch", "gpt-oss", "--n-embd", "64",
            "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "96",
            "--n-expert", "4", "--n-expert-used", "2", "--control-tokens",
            "<|start|>,<|end|>,<|message|>,<|channel|>,<|return|>,<|call|>,<|constrain|>")
    check("mkmodel gpt-oss", p.returncode == 0, p.stderr)
    with Server(build, model, "-np", "1", "-c", "2048", "--chat-template", "gpt-oss") as s:
        one = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 1}
        _, on = s.json("POST", "/v1/chat/completions", one)
        _, off = s.json("POST", "/v1/chat/completions",
                        dict(one, chat_template_kwargs={"enable_thinking": False}))
        _, empty = s.json("POST", "/tokenize", {
            "content": "<|channel|>analysis<|message|><|end|><|start|>assistant<|channel|>final"
                       "<|message|>"})
        ids = empty.get("tokens", [])
        n_empty = len(ids)
        # The markers are single tokens: <|channel|> opens both channels' headers.
        check("harmony: thinking off opens the final channel", n_empty > 8 and
              ids.count(ids[0]) == 2 and
              off["usage"]["prompt_tokens"] == on["usage"]["prompt_tokens"] + n_empty,
              (on, off, empty))
        schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}
        status, body = s.json("POST", "/v1/chat/completions", dict(
            one, max_tokens=40, temperature=0, chat_template_kwargs={"enable_thinking": False},
            response_format={"type": "json_schema", "json_schema": {"name": "a", "schema": schema}}))
        m = body["choices"][0]["message"] if status == 200 else {}
        check("harmony: the final channel's answer is content", "reasoning_content" not in m and
              isinstance(json.loads(m.get("content") or "null"), dict), body)
        lengths = {w: len(s.json("POST", "/tokenize", {"content": w})[1].get("tokens", []))
                   for w in ("medium", "high")}
        _, high = s.json("POST", "/v1/chat/completions", dict(one, reasoning_effort="high"))
        check("harmony: reasoning_effort high", high["usage"]["prompt_tokens"] ==
              on["usage"]["prompt_tokens"] - lengths["medium"] + lengths["high"], (on, high))
        status, body = s.json("POST", "/v1/chat/completions", dict(one, reasoning_effort="max"))
        check("harmony: a bad reasoning_effort is named", status == 400 and
              body["error"]["param"] == "reasoning_effort", body)
        # Function calling: with thinking off the analysis closes empty and the grammar
        # writes the call's header from the commentary channel; the call streams whole; the
        # tools are declared in the prompt; an earlier call and its result are taken.
        req = dict(one, max_tokens=80, temperature=0, tools=[WEATHER, CLOCK],
                   tool_choice="required", chat_template_kwargs={"enable_thinking": False})
        status, body = s.json("POST", "/v1/chat/completions", req)
        c = body["choices"][0] if status == 200 else {}
        calls = c.get("message", {}).get("tool_calls", [])
        check("harmony: a required call", c.get("finish_reason") == "tool_calls" and
              len(calls) == 1 and valid_call(calls[0]) and c["message"]["content"] is None, body)
        check("harmony: the tools declared", status == 200 and
              body["usage"]["prompt_tokens"] > off["usage"]["prompt_tokens"] + 40, body)
        status, events, _, done, _ = s.stream("/v1/chat/completions", dict(req, stream=True))
        streamed, pieces = joined_calls(events)
        check("harmony: the call streamed piece by piece", status == 200 and done and
              same_calls(streamed, calls) and pieces > 3 and
              not any(e["choices"][0]["delta"].get("content") for e in events), events[-3:])
        history = [{"role": "user", "content": "Weather in Oslo?"},
                   {"role": "assistant", "content": None, "tool_calls": [
                       {"id": "c1", "type": "function", "function": {
                           "name": "get_weather", "arguments": "{\"city\": \"Oslo\"}"}}]},
                   {"role": "tool", "tool_call_id": "c1", "content": "7 C"}]
        status, body = s.json("POST", "/v1/chat/completions", dict(
            one, messages=history, tools=[WEATHER], max_tokens=8))
        check("harmony: an earlier call and its result", status == 200, body)
        # As gpt-oss's template: a call's analysis stays until a final answer follows it.
        def prompt_tokens(messages):
            status, b = s.json("POST", "/v1/chat/completions",
                               dict(one, messages=messages, tools=[WEATHER]))
            return b["usage"]["prompt_tokens"] if status == 200 else b
        thought = [dict(m, content="I should look it up.") if m.get("tool_calls") else m
                   for m in history]
        later = [{"role": "assistant", "content": "It is 7 C."},
                 {"role": "user", "content": "Thanks!"}]
        pending, kept = prompt_tokens(history), prompt_tokens(thought)
        answered, dropped = prompt_tokens(history + later), prompt_tokens(thought + later)
        check("harmony: an answered call's analysis is dropped",
              isinstance(kept, int) and kept > pending and dropped == answered,
              (pending, kept, answered, dropped))
        # gpt-oss's windows of 128: those layers' own pool, a few windows long.
        window, total = s.metric("pshard_kv_window_pages_total"), s.metric("pshard_kv_pages_total")
        check("harmony: sliding-window pages", 0 < window < total and
              s.metric("pshard_kv_window_pages_used") == 0, (window, total))
    with Server(build, model, "-np", "1", "-c", "2048", "--swa-full") as s:
        status, _ = s.json("POST", "/v1/completions", {"prompt": "Hi", "max_tokens": 2})
        check("--swa-full: no window pool", status == 200 and
              s.metric("pshard_kv_window_pages_total") == 0 and
              s.metric("pshard_kv_pages_used") == 0 and s.metric("pshard_kv_pages_total") > 0)


def glm(tmp):
    """GLM-4.5 (a glm4moe model with --chat-template glm-4.5): a chat is its template's prompt
    (the answer opened by a bare <|assistant|>); function calling in its XML form: a required
    call is well-formed (string arguments raw, enums among their strings), streamed or not,
    and a conversation holding earlier calls and their results is taken."""
    model = os.path.join(tmp, "glm.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--arch", "glm4moe", "--n-embd", "64",
            "--n-layer", "3", "--n-head", "4", "--n-head-kv", "2", "--head-dim", "32",
            "--rope-dim", "16", "--n-ff", "64", "--n-expert", "4", "--n-expert-used", "2",
            "--n-dense-lead", "1", "--nextn-layers", "1", "--qkv-bias",
            "--control-tokens", "<think>,</think>")
    check("mkmodel glm4moe", p.returncode == 0, p.stderr)
    with Server(build, model, "-np", "1", "-c", "2048", "--chat-template", "glm-4.5") as s:
        one = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 2, "temperature": 0}
        status, body = s.json("POST", "/v1/chat/completions", one)
        _, prompt = s.json("POST", "/tokenize", {"content": "[gMASK]<sop><|user|>\nHi<|assistant|>",
                                                 "add_special": True})
        check("glm-4.5: the template's prompt", status == 200 and
              body["usage"]["prompt_tokens"] == len(prompt.get("tokens", [])), (body, prompt))
        _, off = s.json("POST", "/v1/chat/completions",
                        dict(one, chat_template_kwargs={"enable_thinking": False}))
        _, closed = s.json("POST", "/tokenize", {
            "content": "[gMASK]<sop><|user|>\nHi/nothink<|assistant|>\n<think></think>",
            "add_special": True})
        check("glm-4.5: thinking off closes an empty thought as its template does",
              off["usage"]["prompt_tokens"] == len(closed.get("tokens", [])) >
              body["usage"]["prompt_tokens"], (body, off, closed))
        # Thinking off: a random model would think on past the budget.
        req = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}],
               "max_tokens": 200, "temperature": 0, "tools": [WEATHER, CLOCK],
               "tool_choice": "required", "parallel_tool_calls": False,
               "chat_template_kwargs": {"enable_thinking": False}}
        required_call(s, "glm-4.5", req, 2)
        call_and_result(s, "glm-4.5", req)


def qwen35(tmp):
    """Qwen3.5 (a qwen35 model, its recurrent layers' states one per sequence slot, with
    --chat-template qwen3.5): a chat is its template's prompt (the thought opened; thinking
    off closes it empty); function calling in Qwen's XML form: a required call is well-formed
    (string arguments raw, enums among their strings), streamed or not, and a conversation
    holding earlier calls and their results is taken."""
    model = os.path.join(tmp, "qwen35.gguf")
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--arch", "qwen35", "--n-layer", "4",
            "--head-dim", "16", "--rope-dim", "8", "--ssm-state", "16", "--ssm-groups", "2",
            "--ssm-v-heads", "6", "--control-tokens", "<think>,</think>")
    check("mkmodel qwen35", p.returncode == 0, p.stderr)
    with Server(build, model, "-np", "2", "-c", "2048", "--chat-template", "qwen3.5") as s:
        one = {"messages": [{"role": "user", "content": " Hi "}], "max_tokens": 2,
               "temperature": 0}
        status, body = s.json("POST", "/v1/chat/completions", one)
        _, prompt = s.json("POST", "/tokenize", {
            "content": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n",
            "add_special": True})
        check("qwen3.5: the template's prompt", status == 200 and
              body["usage"]["prompt_tokens"] == len(prompt.get("tokens", [])), (body, prompt))
        _, off = s.json("POST", "/v1/chat/completions",
                        dict(one, chat_template_kwargs={"enable_thinking": False}))
        _, closed = s.json("POST", "/tokenize", {
            "content": "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n"
                       "</think>\n\n", "add_special": True})
        check("qwen3.5: thinking off closes an empty thought as its template does",
              off["usage"]["prompt_tokens"] == len(closed.get("tokens", [])), (off, closed))
        req = {"messages": [{"role": "user", "content": "What is the weather in Paris?"}],
               "max_tokens": 200, "temperature": 0, "tools": [WEATHER, CLOCK],
               "tool_choice": "required", "parallel_tool_calls": False,
               "chat_template_kwargs": {"enable_thinking": False}}
        calls = required_call(s, "qwen3.5", req, 2)
        args = json.loads(calls[0]["function"]["arguments"]) if calls else {}
        check("qwen3.5: string arguments come back as strings",
              all(isinstance(v, str) for v in args.values()), calls)
        call_and_result(s, "qwen3.5", req)
        # As Qwen3.5's template: the reasoning of an answer after the last user message is
        # written back as its thought, "<think>\nR\n</think>\n\n" before its text; an
        # earlier answer's is not.
        def prompt_tokens(messages):
            status, b = s.json("POST", "/v1/chat/completions",
                               dict(one, messages=messages, max_tokens=1))
            return b["usage"]["prompt_tokens"] if status == 200 else b
        _, thought = s.json("POST", "/tokenize", {"content": "<think>\nNo.\n</think>\n\n"})
        reply = {"role": "assistant", "content": "Hello.", "reasoning_content": " No. "}
        bare = dict(reply, reasoning_content=None)
        later = [{"role": "user", "content": "Bye"}]
        kept, plain = prompt_tokens(one["messages"] + [reply]), prompt_tokens(one["messages"] + [bare])
        check("qwen3.5: a recent answer keeps its thought",
              isinstance(kept, int) and kept == plain + len(thought.get("tokens", [])),
              (kept, plain, thought))
        check("qwen3.5: an answered turn's thought is dropped",
              prompt_tokens(one["messages"] + [reply] + later) ==
              prompt_tokens(one["messages"] + [bare] + later))


def llama3_tool_calling():
    """--chat-template llama3: Meta's JSON calls. A required call is well-formed, streamed or
    not, and one a turn; tools are listed; earlier calls and ipython results are taken."""
    with Server(build, stories, "-np", "2", "--chat-template", "llama3") as s:
        ask = [{"role": "user", "content": "What is the weather in Paris?"}]
        req = {"messages": ask, "max_tokens": 200, "temperature": 0, "tools": [WEATHER, CLOCK],
               "tool_choice": "required"}
        required_call(s, "llama3", req, 4)
        plain = {"messages": ask, "max_tokens": 8, "temperature": 0}
        _, want = s.json("POST", "/v1/chat/completions", plain)
        status, body = s.json("POST", "/v1/chat/completions", dict(plain, tools=[WEATHER]))
        check("llama3: tools listed in the prompt", status == 200 and
              body["usage"]["prompt_tokens"] > want["usage"]["prompt_tokens"] + 50, body["usage"])
        history = ask + [
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "call_1", "type": "function",
                 "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21}'}]
        status, body = s.json("POST", "/v1/chat/completions",
                              dict(plain, messages=history, tools=[WEATHER]))
        check("llama3: a conversation with a call and its result", status == 200, body)


MISTRAL_TOKENS = ("[INST],[/INST],[TOOL_CALLS],[AVAILABLE_TOOLS],[/AVAILABLE_TOOLS],"
                  "[TOOL_RESULTS],[/TOOL_RESULTS]")


def mistral_tool_calling(tmp, template="mistral-v3", extra_tokens=""):
    """A chat template of Mistral's on a vocabulary with Mistral's control tokens (as its
    converters type them). Without [ARGS] (mistral-v3): a required call is [TOOL_CALLS] and
    one JSON array whose calls carry ids of 9 letters and digits. With [ARGS] (Small 3.2
    and later, mistral-v7-tekken): each call [TOOL_CALLS]NAME[ARGS]{...}. Either is read
    back the same streamed or not; a conversation with that call and its result is taken,
    the tools listed before the last user turn."""
    args_form = "[ARGS]" in extra_tokens
    model = os.path.join(tmp, "mistral-%s.gguf" % template)
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--n-embd", "64", "--n-layer", "2",
            "--n-head", "4", "--n-head-kv", "2", "--n-ff", "96", "--control-tokens",
            MISTRAL_TOKENS + extra_tokens)
    check("mkmodel --control-tokens", p.returncode == 0, p.stderr)
    with Server(build, model, "-np", "1", "-c", "1024", "--chat-template", template) as s:
        want_format = "mistral-args" if args_form else "mistral-v3"
        check("%s: the format the vocabulary calls for" % template,
              any("tool calls %s)" % want_format in line for line in s.log), s.log[:3])
        ask = [{"role": "user", "content": "What is the weather in Paris?"}]
        req = {"messages": ask, "max_tokens": 200, "temperature": 0, "tools": [WEATHER, CLOCK],
               "tool_choice": "required", "parallel_tool_calls": False}
        status, body = s.json("POST", "/v1/chat/completions", req)
        c = body["choices"][0] if status == 200 else {}
        calls = c.get("message", {}).get("tool_calls", [])
        mistral_ids = args_form or all(len(x["id"]) == 9 and x["id"].isalnum() for x in calls)
        check("%s: a required call in its form" % template, c.get("finish_reason") ==
              "tool_calls" and len(calls) == 1 and all(valid_call(x) for x in calls) and
              mistral_ids, body)
        status, events, _, done, _ = s.stream("/v1/chat/completions", dict(req, stream=True))
        streamed, pieces = joined_calls(events)
        # The model's own ids (the array form's) are the same both ways; ours differ. The
        # array form's calls come whole at the end (their ids follow their arguments); the
        # [ARGS] form's piece by piece.
        check("%s: the calls streamed" % template, status == 200 and done and
              same_calls(streamed, calls, ids=not args_form) and
              (pieces > len(calls) if args_form else pieces == len(calls)), events[-3:])
        plain = {"messages": ask, "max_tokens": 4, "temperature": 0}
        _, want = s.json("POST", "/v1/chat/completions", plain)
        history = ask + [{"role": "assistant", "content": None, "tool_calls": calls[:1]},
                         {"role": "tool", "tool_call_id": calls[0]["id"] if calls else "x",
                          "content": '{"temp": 21}'},
                         {"role": "user", "content": "And in Rome?"}]
        status, body = s.json("POST", "/v1/chat/completions",
                              dict(plain, messages=history, tools=[WEATHER]))
        check("%s: a conversation with a call, its result and the tools" % template,
              status == 200 and
              body["usage"]["prompt_tokens"] > want["usage"]["prompt_tokens"] + 40, body)


def llama_server_flags():
    """llama-server's flags for what pshard-server always does are taken with a note; -ngl
    is refused at start, naming pshard's way."""
    with Server(build, stories, "-np", "1", "--jinja", "--embeddings", "-cb", "--metrics",
                "-fa", "auto") as s:
        status, _ = s.json("GET", "/health")
        check("llama-server's flags taken", status == 200 and
              any("--embeddings ignored" in line for line in s.log) and
              any("-fa ignored" in line for line in s.log), s.log[:6])
    p = run(tool(build, "pshard-server"), "-m", stories, "-ngl", "99", "--port", "0")
    check("-ngl refused at start", p.returncode == 2 and "--vram" in p.stderr, p.stderr)
    p = run(tool(build, "pshard-server"), "-m", stories, "--context-shift", "--port", "0")
    check("--context-shift refused at start", p.returncode == 2 and "-c" in p.stderr, p.stderr)
    # A model card's command line (Qwen3's: ... -sm row ... -n 32768 --no-context-shift):
    # -n caps every request and is the default of one that asks no number.
    with Server(build, stories, "-np", "1", "-sm", "row", "--no-context-shift", "-n", "5") as s:
        status, body = s.json("POST", "/v1/completions", {"prompt": "Once", "max_tokens": 50,
                                                          "temperature": 0})
        check("-n caps max_tokens", status == 200 and body["usage"]["completion_tokens"] == 5 and
              body["choices"][0]["finish_reason"] == "length", body)
        status, body = s.json("POST", "/completion", {"prompt": "Once", "temperature": 0,
                                                      "ignore_eos": True})
        check("-n is /completion's default", status == 200 and body["tokens_predicted"] == 5,
              body)
        check("-sm and --no-context-shift taken with a note",
              any("--no-context-shift ignored" in line for line in s.log) and
              any("-sm ignored" in line for line in s.log), s.log[:8])


def sampling_flags():
    """llama-server's sampling flags (what model cards give: --temp, --top-k, ...) are what a
    request does not say: DRY's greedy answer with no sampling field sent, a request's
    fields over them, /props showing them; a bad one is refused at start."""
    looping = ("Once upon a time, there was a little girl named Lily. Once upon a time, there "
               "was a little girl named")  # greedy goes on " Lily.", extending the repeat
    want_dry = run_text(build, stories, looping, 16, "--dry-multiplier", "100",
                        "--dry-sequence-breaker", "\\n")
    hot = {"prompt": "Once upon a time", "max_tokens": 24, "temperature": 1.5, "top_k": 0,
           "top_p": 1, "min_p": 0}
    with Server(build, stories, "-np", "1") as s:
        answers = [s.json("POST", "/v1/completions", dict(hot, **seed))[1]["choices"][0]["text"]
                   for seed in [{}, {}, {"seed": -1}, {"seed": 5}, {"seed": 5}]]
        check("a request without a seed (or -1) is sampled anew each time, a seeded one repeats",
              len(set(answers[:3])) == 3 and answers[3] == answers[4], answers)
    with Server(build, stories, "-np", "1", "--temp", "0", "--dry-multiplier", "100",
                "--dry-sequence-breaker", "\\n", "--samplers",
                "penalties;dry;top_k;temperature", "--seed", "7") as s:
        answers = [s.json("POST", "/v1/completions", dict(hot, **seed))[1]["choices"][0]["text"]
                   for seed in [{}, {}, {"seed": 7}]]
        check("--seed seeds the requests that give none", len(set(answers)) == 1, answers)
        status, body = s.json("POST", "/v1/completions", {"prompt": looping, "max_tokens": 16})
        check("the server's flags sample a request that says nothing", status == 200 and
              body["choices"][0]["text"] == want_dry, (body, want_dry))
        status, body = s.json("POST", "/v1/completions", {"prompt": looping, "max_tokens": 16,
                                                          "dry_multiplier": 0})
        check("a request's field over the flag", status == 200 and
              body["choices"][0]["text"] == run_text(build, stories, looping, 16), body)
        _, props = s.json("GET", "/props")
        params = props["default_generation_settings"]["params"]
        check("/props shows the flags", params["temperature"] == 0 and
              params["dry_multiplier"] == 100 and params["dry_sequence_breakers"] == ["\n"] and
              params["samplers"] == ["penalties", "dry", "top_k", "temperature"] and
              abs(params["top_p"] - 0.95) < 1e-6, params)
    for flags, says in [(["--samplers", "top_q"], "top_q"), (["--top-p", "2"], "--top-p"),
                        (["--dry-sequence-breaker", "\\q"], "unknown escape")]:
        p = run(tool(build, "pshard-server"), "-m", stories, "--port", "0", *flags)
        check(f"{flags} refused at start", p.returncode != 0 and says in p.stderr, p.stderr)


def aliases():
    """--alias names the model more than once (repeated or comma-separated): /v1/models lists
    every name, a request may use any and is answered under the first, others are 404s that
    list the names."""
    with Server(build, stories, "-np", "1", "-c", "256", "--chat-template", "chatml",
                "--alias", "story", "-a", "claude-sonnet-4-5,claude-haiku-4-5") as s:
        _, body = s.json("GET", "/v1/models")
        check("every alias listed", [m["id"] for m in body.get("data", [])] ==
              ["story", "claude-sonnet-4-5", "claude-haiku-4-5"], body)
        status, body = s.json("GET", "/v1/models/claude-haiku-4-5")
        check("one alias", status == 200 and body["id"] == "claude-haiku-4-5", body)
        ask = {"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 4}
        status, body = s.json("POST", "/v1/chat/completions", dict(ask, model="claude-haiku-4-5"))
        check("a request by another alias, answered under the first",
              status == 200 and body["model"] == "story", body)
        status, body = s.json("POST", "/v1/messages", dict(ask, model="claude-sonnet-4-5"))
        check("an Anthropic request by an alias", status == 200 and body["type"] == "message", body)
        status, body = s.json("POST", "/v1/chat/completions", dict(ask, model="stories260K"))
        check("the file's stem is no name once aliases are given", status == 404 and
              "'story', 'claude-sonnet-4-5', 'claude-haiku-4-5'" in body["error"]["message"], body)


def kv_cache_types(tmp):
    """-ctk / -ctv (llama-server's --cache-type-k/-v): a Q8_0 KV cache gives pshard-run's
    answer under the same flags, in a busy batch, and log-probabilities that differ from
    F16's; heads that are no whole Q8_0 block, and a type pshard has no cache of, are
    refused at start, naming why."""
    model = os.path.join(tmp, "heads32.gguf")  # heads 32 wide: whole Q8_0 blocks
    p = run(tool(build, "pshard-mkmodel"), "-o", model, "--n-embd", "128", "--n-head", "4",
            "--n-head-kv", "2", "--n-layer", "2", "--tokenizer-from", stories)
    check("mkmodel, 32-wide heads", p.returncode == 0, p.stderr)

    def reference(*flags):
        p = run(tool(build, "pshard-run"), "-m", model, "-p", "Once upon a time", "-n", "12",
                "--temp", "0", "--ignore-eos", "-t", "1", "--json", "--top-logprobs", "1", *flags)
        return [t[0]["logprob"] for t in json.loads(p.stdout)["top_logprobs"]]

    def served(s):
        body = {"prompt": "Once upon a time", "max_tokens": 12, "temperature": 0,
                "ignore_eos": True, "logprobs": 1}
        s.json("POST", "/v1/completions", dict(body, prompt="The little dog"))  # the batch busy
        status, answer = s.json("POST", "/v1/completions", body)
        return answer["choices"][0]["logprobs"]["token_logprobs"] if status == 200 else answer

    q8 = reference("-ctk", "q8_0", "-ctv", "q8_0")
    f16 = reference()
    with Server(build, model, "-np", "2", "-ctk", "q8_0", "--cache-type-v", "q8_0") as s:
        got = served(s)
    check("-ctk q8_0 -ctv q8_0: pshard-run's log-probabilities under the same flags",
          isinstance(got, list) and len(got) == 12 and
          all(abs(a - b) < 1e-5 for a, b in zip(got, q8)), (got, q8))
    check("the Q8_0 cache is in force", q8 != f16, (q8, f16))
    p = run(tool(build, "pshard-server"), "-m", stories, "-ctk", "q8_0", "--port", "0")
    check("q8_0 with 8-wide heads refused at start",
          p.returncode != 0 and "multiple of 32" in p.stderr, p.stderr)
    p = run(tool(build, "pshard-server"), "-m", stories, "-ctv", "q4_0", "--port", "0")
    check("a type with no KV cache refused, listing the types",
          p.returncode != 0 and "q8_0" in p.stderr, p.stderr)


def speculative():
    """--draft-max: the same answers (a busy batch, a prompt read from the prefix cache
    that the drafting first answer wrote), drafted tokens counted in /metrics."""
    with Server(build, stories, "-np", "4", "--draft-max", "6") as s:
        busy_batch(s)
        prefix_cache(s)
        drafted = s.metric("pshard_draft_tokens_total")
        accepted = s.metric("pshard_draft_tokens_accepted_total")
        check("speculation counted", 0 < accepted < drafted, (accepted, drafted))
    # -md: a draft model (the noisy MoE upcycle, nearly the model's function) drafting for
    # every request in shared passes; every draft whole (--draft-p-min 0), so its
    # misses are checked and rejected too. Another vocabulary is refused at start.
    models = os.path.dirname(stories)
    noisy = os.path.join(models, "stories260K-moe4x2-noise10.gguf")
    with Server(build, stories, "-np", "4", "-md", noisy, "--draft-p-min", "0") as s:
        busy_batch(s)
        prefix_cache(s)
        drafted = s.metric("pshard_draft_tokens_total")
        accepted = s.metric("pshard_draft_tokens_accepted_total")
        check("-md: drafted and counted", 0 < accepted < drafted, (accepted, drafted))
        passes = s.metric("pshard_draft_passes_total")
        check("-md: by the draft model, its passes shared by the requests",
              0 < passes < drafted, (passes, drafted))
    p = run(tool(build, "pshard-server"), "-m", stories, "--port", "0", "-md",
            os.path.join(models, "llama-2-tiny-random.gguf"))
    check("-md of another vocabulary refused at start",
          p.returncode != 0 and "32000" in p.stderr, p.stderr)
    p = run(tool(build, "pshard-server"), "-m", stories, "--port", "0", "-md", noisy,
            "--draft-p-min", "2")
    check("--draft-p-min past 1 refused", p.returncode != 0 and "--draft-p-min" in p.stderr,
          p.stderr)


def budgets(tmp):
    sched = os.path.join(tmp, "stories.pshard")
    p = run(tool(build, "pshard-compile"), "-m", stories, "--profile", profile, "-o", sched,
            "--tiers", "1,4,16", "-c", "256", "-q", "--kernel-workspace", "0",
            "--budgets", "512K,768K,2M", "--strategy", "gpu-only",
            "-np", "4")  # the server's 4 slots: resident KV pages for each  # auto keeps so tiny a model on the CPU
    check("compile", p.returncode == 0, p.stderr)
    budget_file = os.path.join(tmp, "budget")
    want = run_text(build, stories, "Once upon a time", 48)
    with Server(build, stories, "-s", sched, "--backend", "emu", "-c", "256", "--emu-pcie", "50",
                "--budget-file", budget_file) as s:
        status, body = s.json("GET", "/budget")
        ladder = body["budgets"]
        check("budget ladder", status == 200 and len(ladder) >= 2 and
              body["vram_budget"] == ladder[-1] and body["backend"] == "emu", body)
        # Change the budget while a stream runs: the answer does not change.
        result = {}
        t = threading.Thread(target=lambda: result.update(r=s.stream("/v1/completions", {
            "prompt": "Once upon a time", "max_tokens": 48, "temperature": 0, "stream": True})))
        t.start()
        for b in [ladder[0], ladder[-1], ladder[0]]:
            status, body = s.json("POST", "/budget", {"vram": b})
            check("POST /budget", status == 200 and body["vram_budget"] == b, body)
        t.join()
        _, events, _, _, _ = result["r"]
        text = "".join(e["choices"][0]["text"] for e in events if e["choices"])
        check("same answer across budget changes", text == want, (text, want))
        status, body = s.json("POST", "/budget", {"vram": ladder[0] // 2})
        check("below the smallest budget", status == 400 and
              body["error"]["code"] == "budget_too_small", body)
        status, body = s.json("POST", "/budget", {"vram": "lots"})
        check("bad size", status == 400 and body["error"]["param"] == "vram", body)
        with open(budget_file, "w") as f:
            f.write(f"{ladder[-1]}\n")
        s.proc.send_signal(signal.SIGHUP)
        deadline = time.time() + 10
        while time.time() < deadline and s.json("GET", "/budget")[1]["vram_budget"] != ladder[-1]:
            time.sleep(0.05)
        check("SIGHUP reads --budget-file", s.json("GET", "/budget")[1]["vram_budget"] == ladder[-1],
              "".join(s.log[-5:]))
        status, body = s.json("POST", "/v1/completions", {"prompt": "Once upon a time",
                                                          "max_tokens": 48, "temperature": 0})
        check("emu answer == cpu pshard-run", body["choices"][0]["text"] == want, body)
        tiers = [line for line in s.request("GET", "/metrics")[2].decode().splitlines()
                 if line.startswith("pshard_plan_passes_total{")]
        check("passes per plan and tier", len(tiers) >= 2 and all('tier="' in t for t in tiers), tiers)
        peak = s.metric("pshard_vram_peak_bytes")
        check("vram peak", 0 < peak <= ladder[-1], (peak, ladder))
        check("stops on SIGTERM", s.stop() == 0, "".join(s.log[-5:]))


def main():
    if not os.path.exists(stories):
        print(f"skipped: {stories} is not present")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        with Server(build, stories, "-np", "4", "--chat-template", "chatml") as s:
            shapes(s)
            completions(s)
            chat(s)
            choices(s)
            busy_batch(s)
            slots(s)
            tokenize(s)
            prefix_cache(s)
            metrics(s)
            structured(s)
            tool_calling(s)
            reasoning(s)
            status, body = s.json("POST", "/budget", {"vram": "1G"})
            check("no schedule, no budget", status == 400 and
                  body["error"]["code"] == "no_schedule", body)
        llama3_tool_calling()
        thinking_switch(tmp)
        thinking_opened(tmp)
        mistral_thinking(tmp)
        harmony(tmp)
        glm(tmp)
        qwen35(tmp)
        mistral_tool_calling(tmp)
        mistral_tool_calling(tmp, "mistral-v7-tekken",
                             ",[SYSTEM_PROMPT],[/SYSTEM_PROMPT],[ARGS],[CALL_ID]")
        aliases()
        llama_server_flags()
        sampling_flags()
        speculative()
        kv_cache_types(tmp)
        budgets(tmp)
    return checks.finish()


sys.exit(main())
