#!/usr/bin/env python3
"""llama.cpp's RoPE flags in pshard-run and pshard-server (--rope-scaling, --rope-scale,
--yarn-orig-ctx, ...): a model file without rope.scaling keys given the flags answers,
log-probabilities equal, as the same model converted with the keys, over a prompt well
past the original context; bad values are refused naming the flag. --override-kv
qwen3moe.expert_used_count=int:1 answers as the file converted with one expert per token,
in both tools; with a schedule (only rope.* keys there), a key of another architecture or
a spec that is no KEY=TYPE:VALUE it is refused naming why. The tokenizer's keys
(add_bos_token, eos_token_id) are read in place of the file's, with a schedule too.

usage: rope_flags_cli_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import sys
import tempfile

from cli_util import Checks, run

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "server"))
from server_util import Server  # noqa: E402

build, shared = sys.argv[1], sys.argv[2]
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
stories = os.path.join(shared, "models/stories260K.gguf")
checks = Checks()
check = checks.check
PROMPT = " ".join(["Once upon a time, there was a little girl named Lily."] * 8)
YARN = ["--rope-scaling", "yarn", "--rope-scale", "4", "--yarn-orig-ctx", "32"]


def top(model, *extra):
    p = run(run_bin, "-m", model, "-p", PROMPT, "-n", "6", "--temp", "0", "--ignore-eos",
            "-t", "2", "--json", "--top-logprobs", "1", "-c", "512", *extra)
    if p.returncode != 0:
        return p.stderr
    d = json.loads(p.stdout)
    return len(d["prompt_tokens"]), [t[0]["logprob"] for t in d["top_logprobs"]]


def served_logprobs(model, *flags):
    """pshard-server's log-probabilities of PROMPT's 6 greedy tokens (else its answer)."""
    with Server(build, model, "-np", "1", "-c", "512", *flags) as s:
        _, body = s.json("POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": 6,
                                                     "temperature": 0, "ignore_eos": True,
                                                     "logprobs": 1})
    return body["choices"][0]["logprobs"]["token_logprobs"] if "choices" in body else body


def main(tmp):
    shape = ["--arch", "qwen3", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2",
             "--n-layer", "2", "--ctx", "128", "--tokenizer-from", stories]
    plain, keyed = os.path.join(tmp, "plain.gguf"), os.path.join(tmp, "yarn.gguf")
    run(mk_bin, "-o", plain, *shape)
    run(mk_bin, "-o", keyed, *shape, "--rope-scaling", "yarn", "--rope-scaling-factor", "4",
        "--rope-orig-ctx", "32")
    want = top(keyed)
    got = top(plain, *YARN)
    check("pshard-run: the flags answer as the file's keys", isinstance(want, tuple) and
          want[0] > 32 and got == want, (got, want))
    check("and without them otherwise", top(plain) != want, "")
    served = served_logprobs(plain, *YARN)
    check("pshard-server: the flags answer as the file's keys",
          isinstance(want, tuple) and isinstance(served, list) and
          all(abs(a - b) < 1e-5 for a, b in zip(served, want[1])) and len(served) == 6,
          (served, want))
    for what, flags, says in [
            ("an unknown scaling", ["--rope-scaling", "llama3"], "--rope-scaling"),
            ("both scale forms", ["--rope-scale", "4", "--rope-freq-scale", "0.25"],
             "--rope-freq-scale"),
            ("a negative factor", ["--rope-scaling", "yarn", "--rope-scale", "-4"],
             "--rope-scale")]:
        p = run(run_bin, "-m", plain, "-p", "hi", "-n", "1", *flags)
        check(f"{what} refused, naming the flag", p.returncode != 0 and says in p.stderr,
              p.stderr)

    override_kv(tmp)
    tokenizer_keys(tmp)


def tokenizer_keys(tmp):
    """--override-kv of the tokenizer's keys: read in place of the file's by the tokenizer,
    in pshard-run (plain and under a schedule) and pshard-server."""
    def gen(*extra):
        p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "12", "--temp", "0",
                "--json", *extra)
        return json.loads(p.stdout) if p.returncode == 0 else p.stderr

    plain = gen()
    no_bos = gen("--override-kv", "tokenizer.ggml.add_bos_token=bool:false")
    check("tokenizer.ggml.add_bos_token=bool:false: the prompt without BOS",
          isinstance(no_bos, dict) and plain["prompt_tokens"][0] == 1 and
          no_bos["prompt_tokens"] == plain["prompt_tokens"][1:], no_bos)
    stop = plain["generated_tokens"][7]
    eos = ["--override-kv", f"tokenizer.ggml.eos_token_id=int:{stop}"]
    early = gen(*eos)
    check("tokenizer.ggml.eos_token_id: generation ends at that token",
          isinstance(early, dict) and early["generated_tokens"] == plain["generated_tokens"][:7],
          early)
    sched = os.path.join(tmp, "stories.pshard")
    p = run(os.path.join(build, "tools/pshard-compile/pshard-compile"), "-m", stories,
            "--profile", os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof"), "-o", sched,
            "-c", "256", "-q")
    scheduled = gen("-s", sched, *eos)
    check("a tokenizer key with a schedule runs, as without",
          p.returncode == 0 and isinstance(scheduled, dict) and
          scheduled["generated_tokens"] == early["generated_tokens"], scheduled)
    with Server(build, stories, "-np", "1", "-c", "128", *eos) as srv:
        _, body = srv.json("POST", "/v1/completions", {"prompt": "Once upon a time",
                                                       "max_tokens": 12, "temperature": 0})
    check("pshard-server: the same end", "choices" in body and
          body["choices"][0]["finish_reason"] == "stop" and
          body["usage"]["completion_tokens"] == 7, body)
    for what, spec, says in [
            ("an array", "tokenizer.ggml.tokens=str:x", "not overridable"),
            ("of the wrong type", "tokenizer.ggml.add_bos_token=int:0", "read as a bool"),
            ("past the vocabulary", "tokenizer.ggml.eos_token_id=int:99999", "out of range")]:
        p = run(run_bin, "-m", stories, "-p", "hi", "-n", "1", "--override-kv", spec)
        check(f"a tokenizer key {what} refused", p.returncode != 0 and says in p.stderr,
              p.stderr)


def override_kv(tmp):
    shape = ["--arch", "qwen3moe", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2",
             "--n-layer", "2", "--n-expert", "4", "--tokenizer-from", stories]
    two, one = os.path.join(tmp, "moe2.gguf"), os.path.join(tmp, "moe1.gguf")
    run(mk_bin, "-o", two, *shape, "--n-expert-used", "2")
    run(mk_bin, "-o", one, *shape, "--n-expert-used", "1")
    one_expert = ["--override-kv", "qwen3moe.expert_used_count=int:1"]
    want = top(one)
    check("--override-kv: one expert a token, as the file converted so",
          isinstance(want, tuple) and top(two, *one_expert) == want, (top(two, *one_expert), want))
    check("and without it otherwise", top(two) != want, "")
    served = served_logprobs(two, *one_expert)
    check("pshard-server --override-kv: as the converted file",
          isinstance(want, tuple) and isinstance(served, list) and len(served) == 6 and
          all(abs(a - b) < 1e-5 for a, b in zip(served, want[1])), (served, want))
    sched = os.path.join(tmp, "moe2.pshard")
    p = run(os.path.join(build, "tools/pshard-compile/pshard-compile"), "-m", two, "--profile",
            os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof"), "-o", sched, "-c", "256",
            "-q")
    check("compile a schedule", p.returncode == 0, p.stderr)
    for what, flags, says in [
            ("with a schedule", ["-s", sched, *one_expert], "schedule"),
            ("a key of another architecture", ["--override-kv", "llama.expert_used_count=int:1"],
             "qwen3moe.*"),
            ("a key the model never reads", ["--override-kv", "qwen3moe.nothing=int:1"],
             "never reads"),
            ("no KEY=TYPE:VALUE", ["--override-kv", "qwen3moe.expert_used_count=1"],
             "KEY=TYPE:VALUE")]:
        p = run(run_bin, "-m", two, "-p", "hi", "-n", "1", *flags)
        check(f"--override-kv {what} refused", p.returncode != 0 and says in p.stderr and
              "--override-kv" in p.stderr, p.stderr)
    p = run(run_bin, "-m", two, "-s", sched, "-p", "hi", "-n", "1", "--override-kv",
            "qwen3moe.rope.freq_base=float:20000")
    check("--override-kv of a rope key with a schedule runs", p.returncode == 0, p.stderr)


if not os.path.exists(stories):
    print(f"SKIP: {stories} is absent")
    sys.exit(77)
with tempfile.TemporaryDirectory() as d:
    main(d)
sys.exit(checks.finish())
