#!/usr/bin/env python3
"""End-to-end checks of pshard-run and pshard-mkmodel as a user runs them.

usage: cli_test.py BUILD_DIR SHARED_DIR
Prints 'N passed, N failed' and exits non-zero on any failure.
"""
import json
import os
import re
import sys
import tempfile

from cli_util import Checks, run

checks = Checks()
check, skip = checks.check, checks.skip

build, shared = sys.argv[1], sys.argv[2]
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
stories = os.path.join(shared, "models/stories260K.gguf")
EXPECTED = [432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337,
            410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385, 328, 432, 358, 394]
EXPECTED_TEXT = (", there was a little girl named Lily. She loved to play outside in the park. "
                 "One day, she saw")




def known_answer_json():
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "32", "--temp", "0",
            "--json", "--top-logprobs", "3", "-t", "2", "-c", "1K")
    check("json exit", p.returncode == 0, p.stderr)
    out = json.loads(p.stdout)
    check("json prompt ids", out["prompt_tokens"] == [1, 403, 407, 261, 378], out["prompt_tokens"])
    check("json generated ids", out["generated_tokens"] == EXPECTED, out["generated_tokens"])
    check("json text", out["text"] == EXPECTED_TEXT, out["text"])
    first = out["top_logprobs"][0]
    ref = [(432, -0.0318), (383, -3.548), (322, -8.121)]
    check("logprob ids", [e["id"] for e in first] == [r[0] for r in ref], first)
    check("logprob values", all(abs(e["logprob"] - r[1]) < 0.01 for e, r in zip(first, ref)), first)
    check("timings", out["timings"]["predicted_n"] == 32 and out["timings"]["prompt_n"] == 5, out["timings"])
    check("peak memory", out["memory"]["peak_resident_bytes"] > 0, out["memory"])


def known_answer_streamed():
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "32", "--temp", "0")
    check("stream exit", p.returncode == 0, p.stderr)
    check("stream text", p.stdout == "Once upon a time" + EXPECTED_TEXT + "\n", repr(p.stdout))
    check("stream timings on stderr", "generation:" in p.stderr and "peak resident" in p.stderr, p.stderr)


def llama_cpp_flags():
    """llama-cli's flags that change nothing here are taken with a note (the same answer);
    those that would place weights by layer are refused, naming pshard's way."""
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "32", "--temp", "0",
            "--jinja", "-fa", "on", "--flash-attn")
    check("--jinja -fa on: the same answer", p.returncode == 0 and
          p.stdout == "Once upon a time" + EXPECTED_TEXT + "\n", p.stderr)
    check("--jinja noted", "--jinja ignored" in p.stderr and "-fa ignored" in p.stderr, p.stderr)
    for flags in (["-ngl", "99"], ["--n-gpu-layers=99"], ["--cpu-moe"], ["-ot", "exps=CPU"]):
        p = run(run_bin, "-m", stories, "-p", "Once", "-n", "4", *flags)
        check(f"{flags[0]} refused naming -s and --vram", p.returncode == 2 and
              "has no pshard counterpart" in p.stderr and "--vram" in p.stderr, p.stderr)


def known_answer_without_mmap():
    # --no-mmap reads the weights into RAM instead of using the mapping: same answer.
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "32", "--temp", "0",
            "--no-mmap")
    check("--no-mmap exit code", p.returncode == 0, p.stderr)
    check("--no-mmap text", p.stdout == "Once upon a time" + EXPECTED_TEXT + "\n", repr(p.stdout))


def speculative():
    # Prompt-lookup drafts change the passes, not the text; the report says how it went.
    for extra in (["--temp", "0"], ["--temp", "0.8", "--seed", "5"]):
        prompt = "Once upon a time, there was a little girl. Once upon a time"
        plain = run(run_bin, "-m", stories, "-p", prompt, "-n", "48", "--json", *extra)
        spec = run(run_bin, "-m", stories, "-p", prompt, "-n", "48", "--json",
                   "--draft-max", "5", "--draft-fixed", *extra)
        check(f"--draft-max exit {extra}", plain.returncode == 0 and spec.returncode == 0, spec.stderr)
        a, b = json.loads(plain.stdout), json.loads(spec.stdout)
        check(f"--draft-max same tokens {extra}", a["generated_tokens"] == b["generated_tokens"],
              (a["generated_tokens"], b["generated_tokens"]))
        t = b["timings"]
        check(f"--draft-max counts {extra}",
              t["decode_passes"] + t["draft_accepted_n"] == t["predicted_n"] - 1, t)
        if extra[1] == "0":  # greedy text that repeats its prompt drafts
            check("--draft-max drafted", t["draft_n"] > 0 and t["draft_accepted_n"] > 0, t)
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "32", "--temp", "0",
            "--draft-max", "4")
    check("--draft-max text", p.stdout == "Once upon a time" + EXPECTED_TEXT + "\n", repr(p.stdout))
    check("--draft-max report", "speculation:" in p.stderr and "drafted tokens accepted" in p.stderr,
          p.stderr)
    # -md: a draft model of the same vocabulary (stories260K drafting for its 4x-wide twin,
    # which computes the same function) drafts nearly every token; the text is plain
    # decoding's, greedy and sampled; another vocabulary is refused naming both sizes.
    wide = os.path.join(shared, "models/stories260K-x4-F32.gguf")
    tiny = os.path.join(shared, "models/llama-2-tiny-random.gguf")
    for extra in (["--temp", "0"], ["--temp", "0.8", "--seed", "7"]):
        plain = run(run_bin, "-m", wide, "-p", "Once upon a time", "-n", "48", "--json",
                    "--ignore-eos", *extra)
        # --draft-fixed: every drafted token checked, so the counts below do not depend on
        # the pass times the adaptive policy measures (a loaded machine would move them).
        spec = run(run_bin, "-m", wide, "-p", "Once upon a time", "-n", "48", "--json",
                   "--ignore-eos", "-md", stories, "--draft-p-min", "0", "--draft-fixed", *extra)
        ok = plain.returncode == 0 and spec.returncode == 0
        check(f"-md exit {extra}", ok, spec.stderr)
        if not ok:
            continue
        a, b = json.loads(plain.stdout), json.loads(spec.stdout)
        check(f"-md same tokens {extra}", a["generated_tokens"] == b["generated_tokens"],
              (a["generated_tokens"], b["generated_tokens"]))
        t = b["timings"]
        check(f"-md drafted and counted {extra}", t["draft_n"] > 0 and
              t["decode_passes"] + t["draft_accepted_n"] == t["predicted_n"] - 1, t)
        if extra[1] == "0":
            check("-md: the twin's drafts hold", t["draft_accepted_n"] * 10 >= t["draft_n"] * 9 and
                  t["decode_passes"] <= 6, t)
            # The default --draft-p-min 0.75 stops at the tiny draft model's unsure tokens.
            unsure = run(run_bin, "-m", wide, "-p", "Once upon a time", "-n", "48", "--json",
                         "--ignore-eos", "-md", stories, "--draft-fixed", *extra)
            u = json.loads(unsure.stdout)
            check("-md --draft-p-min 0.75: same tokens, shorter drafts",
                  u["generated_tokens"] == a["generated_tokens"] and
                  0 < u["timings"]["draft_n"] < t["draft_n"], (u["timings"], t))
    p = run(run_bin, "-m", stories, "-p", "hi", "-n", "2", "-md", tiny)
    check("-md of another vocabulary refused", p.returncode != 0 and "32000" in p.stderr and
          "512" in p.stderr, p.stderr)


def structured(tmp):
    # -j / --grammar: the text follows them, a file gives what the inline option gives,
    # the grammar ends generation; penalties and -l change the answer.
    schema = ('{"type": "object", "required": ["name", "age"], "properties": {"name": '
              '{"type": "string", "maxLength": 12}, "age": {"type": "integer", "minimum": 1, '
              '"maximum": 9}}}')
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "80", "--temp", "0",
            "--json", "-j", schema)
    check("-j exit", p.returncode == 0, p.stderr)
    out = json.loads(p.stdout)
    person = json.loads(out["text"])
    check("-j follows the schema", list(person) == ["name", "age"] and 1 <= person["age"] <= 9
          and len(person["name"]) <= 12, out["text"])
    check("-j ended by the grammar", out["timings"]["predicted_n"] < 80, out["timings"])
    schema_file = os.path.join(tmp, "person.schema.json")
    with open(schema_file, "w") as f:
        f.write(schema)
    q = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "80", "--temp", "0",
            "--json", "--json-schema-file", schema_file)
    check("--json-schema-file == -j", q.returncode == 0 and json.loads(q.stdout)["text"] == out["text"],
          q.stderr)
    grammar = 'root ::= ("yes" | "no") ", because " [a-z ]{5,30} "."'
    gfile = os.path.join(tmp, "answer.gbnf")
    with open(gfile, "w") as f:
        f.write(grammar + "\n")
    for args in (["--grammar", grammar], ["--grammar-file", gfile]):
        p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "60", "--temp", "0.8",
                "--seed", "3", *args)
        text = p.stdout[len("Once upon a time"):-1]
        check(f"{args[0]} follows it", p.returncode == 0 and
              re.fullmatch(r"(yes|no), because [a-z ]{5,30}\.", text), (p.stdout, p.stderr))
    p = run(run_bin, "-m", stories, "-p", "x", "--grammar", 'root ::= "a" | (')
    check("bad grammar names line and column", p.returncode != 0 and "line 1, column" in p.stderr,
          p.stderr)
    p = run(run_bin, "-m", stories, "-p", "x", "-j", '{"type": "number", "multipleOf": 2}')
    check("unenforceable schema named", p.returncode != 0 and "multipleOf" in p.stderr, p.stderr)
    p = run(run_bin, "-m", stories, "-p", "x", "--grammar", 'root ::= "a"', "-j", "{}")
    check("--grammar and -j exclude each other", p.returncode != 0 and "excludes" in p.stderr,
          p.stderr)
    p = run(run_bin, "-m", stories, "-p", "Once upon a time", "-n", "32", "--temp", "0",
            "--frequency-penalty", "0.8", "--presence-penalty", "0.4", "-l", "432-inf")
    check("penalties and -l change the answer", p.returncode == 0 and
          not p.stdout.startswith("Once upon a time" + EXPECTED_TEXT[:10]), p.stdout)
    p = run(run_bin, "-m", stories, "-p", "x", "-l", "432")
    check("a malformed -l is refused", p.returncode != 0 and "TOKEN_ID+BIAS" in p.stderr, p.stderr)
    # llama.cpp's other sampler flags: DRY changes the greedy answer with the defaults'
    # breakers and with none, an escaped breaker is taken, the stage flags run (the server
    # tests compare their answers with the server's), and bad values are refused.
    answers = {}
    looping = ("Once upon a time, there was a little girl named Lily. Once upon a time, there "
               "was a little girl named")  # greedy goes on " Lily.", extending the repeat
    for name, extra in [("plain", []), ("dry", ["--dry-multiplier", "100"]),
                        ("dry none", ["--dry-multiplier", "100", "--dry-sequence-breaker", "none"]),
                        ("dry \\n", ["--dry-multiplier", "100", "--dry-sequence-breaker",
                                     "\\n"])]:
        p = run(run_bin, "-m", stories, "-p", looping, "-n", "8", "--temp", "0", *extra)
        check(f"{name} runs", p.returncode == 0, p.stderr)
        answers[name] = p.stdout
    check("--dry-multiplier changes the answer", answers["dry"] != answers["plain"], answers)
    check("--dry-sequence-breaker none and \\n change it too",
          answers["dry none"] != answers["plain"] and answers["dry \\n"] != answers["plain"],
          answers)
    p = run(run_bin, "-m", stories, "-p", "x", "-n", "4", "--temp", "1", "--seed", "1",
            "--mirostat", "2", "--typical", "0.5", "--xtc-probability", "0.5", "--top-nsigma",
            "1", "--dynatemp-range", "0.5")
    check("the stage flags run", p.returncode == 0, p.stderr)
    # --samplers / --sampling-seq: without the temperature's stage the draws are those at
    # temperature 1, whichever spelling names the order.
    free = ["-p", "Once upon a time", "-n", "24", "--top-k", "0", "--top-p", "1", "--min-p", "0",
            "--seed", "3"]
    hot = run(run_bin, "-m", stories, *free, "--temp", "1.6")
    at_one = run(run_bin, "-m", stories, *free, "--temp", "1")
    untempered = run(run_bin, "-m", stories, *free, "--temp", "1.6", "--samplers", "top_k;top_p")
    by_letters = run(run_bin, "-m", stories, *free, "--temp", "1.6", "--sampling-seq", "kp")
    check("--samplers without temperature samples at 1",
          untempered.returncode == 0 and untempered.stdout == at_one.stdout and
          untempered.stdout != hot.stdout, (untempered.stderr, untempered.stdout, hot.stdout))
    check("--sampling-seq kp is --samplers top_k;top_p", by_letters.stdout == untempered.stdout,
          by_letters.stderr)
    for flags, says in [(["--samplers", "top_k;top_q"], "unknown sampler 'top_q'"),
                        (["--sampling-seq", "kz"], "'z'"),
                        (["--samplers", "temp;temperature"], "twice"),
                        (["--samplers", "top_k", "--sampler-seq", "k"], "excludes"),
                        (["--mirostat", "3"], "--mirostat"),
                        (["--dry-base", "0.5"], "--dry-base"),
                        (["--dry-sequence-breaker", "\\q"], "unknown escape"),
                        (["--dry-sequence-breaker", ""], "empty breaker"),
                        (["--typical", "0"], "typical_p")]:
        p = run(run_bin, "-m", stories, "-p", "x", "-n", "4", *flags)
        check(f"{flags} refused", p.returncode != 0 and says in p.stderr, p.stderr)


def errors():
    p = run(run_bin, "-m", "/nonexistent/model.gguf", "-p", "x")
    check("missing model fails", p.returncode != 0 and "/nonexistent/model.gguf" in p.stderr, p.stderr)
    p = run(run_bin, "-m", stories, "--no-such-flag")
    check("unknown flag fails", p.returncode != 0 and "no-such-flag" in (p.stderr + p.stdout), p.stderr)
    p = run(run_bin, "-m", stories, "-p", "x", "-c", "12Q")
    check("bad size fails", p.returncode != 0 and "12Q" in p.stderr, p.stderr)
    p = run(run_bin, "-m", stories, "-p", "x", "--top-p", "1.5")
    check("bad sampler param fails", p.returncode != 0 and "top" in p.stderr.lower(), p.stderr)
    # A directory where a file belongs: a message, not an uncaught exception.
    here = os.path.dirname(stories)
    for name, args in [("pshard-run", ["-m", here, "-p", "x"]), ("pshard-inspect", [here]),
                       ("pshard-diff", [here, here])]:
        p = run(os.path.join(build, "tools", name, name), *args)
        check(f"{name} given a directory", p.returncode in (1, 2) and "not a regular file" in p.stderr,
              f"exit {p.returncode}: {p.stderr[-300:]}")
    numeric_ranges()


# Every tool's numeric options: out of range is one short line naming the option and
# the allowed range (no 300-digit bounds).
RANGE_CASES = [
    ("pshard-run", ["-m", "m.gguf", "--emu-pcie", "0"], "--emu-pcie", "positive"),
    ("pshard-run", ["-m", "m.gguf", "-t", "-1"], "--threads", "between 0 and 1024"),
    ("pshard-run", ["-m", "m.gguf", "--temp", "-0.5"], "--temp", "at least 0"),
    ("pshard-run", ["-m", "m.gguf", "-n", "-2"], "--n-predict", "at least -1"),
    ("pshard-run", ["-m", "m.gguf", "--draft-max", "65"], "--draft-max", "between 0 and 64"),
    ("pshard-run", ["-m", "m.gguf", "--draft-p-min", "2"], "--draft-p-min", "between 0 and 1"),
    ("pshard-compile", ["-m", "m.gguf", "--profile", "p", "--tiers", "1,0"], "--tiers", "between 1"),
    ("pshard-compile", ["-m", "m.gguf", "--profile", "p", "-c", "0"], "--ctx", "between 1"),
    ("pshard-mkmodel", ["-o", "x.gguf", "--n-layer", "0"], "--n-layer", "between 1"),
    ("pshard-mkmodel", ["-o", "x.gguf", "--rope-scaling-factor", "0.5"], "--rope-scaling-factor",
     "between 1 and 1024"),
    ("pshard-bench", ["-m", "m.gguf", "-r", "0"], "--repetitions", "between 1 and 1000"),
    ("pshard-profile", ["-o", "x.pshprof", "--emu-pcie", "-3"], "--emu-pcie", "positive"),
    ("pshard-profile", ["-o", "x.pshprof", "--threads", "0"], "--threads", "between 1"),
    ("pshard-diff", ["a", "b", "--tolerance", "-1"], "--tolerance", "at least 0"),
    ("pshard-gguf-split", ["a", "b", "--split-max-tensors", "0"], "--split-max-tensors",
     "between 1"),
    ("pshard-mkmodel", ["-o", "x", "--split-max-tensors", "-1"], "--split-max-tensors",
     "between 0"),
]


def numeric_ranges():
    for tool, args, option, says in RANGE_CASES:
        p = run(os.path.join(build, "tools", tool, tool), *args)
        first = p.stderr.strip().splitlines()[0] if p.stderr.strip() else ""
        check(f"{tool} {' '.join(args)}: range error",
              p.returncode != 0 and option in first and says in first and len(first) < 120,
              p.stderr)


def mkmodel(tmp):
    dense = os.path.join(tmp, "dense.gguf")
    p = run(mk_bin, "-o", dense, "--n-embd", "64", "--n-layer", "2", "--n-head", "4",
            "--n-head-kv", "2", "--n-ff", "128", "--type", "q4_0", "--override", "token_embd=f16",
            "--tokenizer-from", os.path.join(shared, "vocab/ggml-vocab-llama-spm.gguf"))
    check("mkmodel dense", p.returncode == 0, p.stderr)
    p = run(run_bin, "-m", dense, "-p", "Hello world", "-n", "8", "--temp", "0", "--json")
    check("run generated model", p.returncode == 0 and len(json.loads(p.stdout)["generated_tokens"]) > 0,
          p.stderr)
    sparse = os.path.join(tmp, "sparse.gguf")
    p = run(mk_bin, "-o", sparse, "--sparse", "--n-embd", "4096", "--n-layer", "8", "--n-head", "64",
            "--n-head-kv", "4", "--n-ff", "1536", "--n-expert", "128", "--n-expert-used", "8",
            "--type", "q4_0")
    check("mkmodel sparse", p.returncode == 0, p.stderr)
    st = os.stat(sparse)
    check("sparse is big", st.st_size > 8 * 3 * 4096 * 1536 * 128 * 18 // 32, st.st_size)
    check("sparse is a hole", st.st_blocks * 512 < st.st_size // 100, (st.st_blocks, st.st_size))
    p = run(mk_bin, "-o", os.path.join(tmp, "bad.gguf"), "--n-ff", "172", "--type", "q8_0")
    check("mkmodel block mismatch fails", p.returncode != 0 and "ffn_down" in p.stderr, p.stderr)
    check("no half-written file", not os.path.exists(os.path.join(tmp, "bad.gguf")))


if os.path.exists(stories):
    known_answer_json()
    known_answer_streamed()
    known_answer_without_mmap()
    llama_cpp_flags()
    speculative()
    with tempfile.TemporaryDirectory() as tmp:
        structured(tmp)
    errors()
else:
    skip(f"known-answer tests: {stories} is not present")
with tempfile.TemporaryDirectory() as tmp:
    mkmodel(tmp)
sys.exit(checks.finish())
