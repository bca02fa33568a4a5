#!/usr/bin/env python3
"""pshard-run --prompt-cache FILE as a user runs it (llama-cli's flag): the first run
writes the prompt's state, later runs whose prompts start the same read it and decode only
the rest, and every answer is the one without a cache — penalties included, which see
the tokens read from the file; --prompt-cache-all saves the answer too; --prompt-cache-ro
never writes; a file of another model,
or no state file at all, is refused naming it.

usage: prompt_cache_cli_test.py BUILD_DIR SHARED_DIR
"""
import os
import re
import sys
import tempfile

from cli_util import Checks, run

build, shared = sys.argv[1], sys.argv[2]
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
stories = os.path.join(shared, "models/stories260K.gguf")
checks = Checks()
check = checks.check
PROMPT = "Once upon a time, there was a little girl named Lily. She loved to play outside"


def generate(prompt, *extra, model=stories):
    return run(run_bin, "-m", model, "-p", prompt, "-n", "16", "--temp", "0", "-t", "2",
               "--ignore-eos", *extra)


def read_from(p):
    """(tokens read from the file, prompt tokens) from the run's stderr line."""
    m = re.search(r"prompt cache .*: (\d+) of (\d+) prompt tokens read", p.stderr)
    return (int(m.group(1)), int(m.group(2))) if m else None


def main(tmp):
    cache = os.path.join(tmp, "prompt.state")
    plain = generate(PROMPT)
    first = generate(PROMPT, "--prompt-cache", cache)
    got = read_from(first)
    check("first run: nothing read, the file written",
          first.returncode == 0 and got is not None and got[0] == 0 and os.path.exists(cache),
          first.stderr)
    check("first run: the answer without a cache", first.stdout == plain.stdout,
          (first.stdout, plain.stdout))
    n = got[1] if got else 0
    again = generate(PROMPT, "--prompt-cache", cache)
    check("second run: all but the last prompt token read",
          read_from(again) == (n - 1, n), again.stderr)
    check("second run: the same answer", again.stdout == plain.stdout, (again.stdout, plain.stdout))

    longer = PROMPT + " in the sun with her dog"
    want = generate(longer)
    got = generate(longer, "--prompt-cache", cache)
    check("a longer prompt reads the saved start and answers as without a cache",
          read_from(got) is not None and read_from(got)[0] == n - 1 and got.stdout == want.stdout,
          (got.stderr, got.stdout, want.stdout))
    other = "The dog ran to the park and"
    want = generate(other)
    before = open(cache, "rb").read()
    got = generate(other, "--prompt-cache", cache, "--prompt-cache-ro")
    check("another prompt reads only the start they share, the same answer",
          read_from(got) is not None and read_from(got)[0] <= 1 and got.stdout == want.stdout,
          (got.stderr, got.stdout, want.stdout))
    check("--prompt-cache-ro leaves the file as it was", open(cache, "rb").read() == before, "")

    # Penalties see the tokens read from the file, as they see a prompt decoded now.
    pen = ("--repeat-penalty", "1.5", "--presence-penalty", "0.5")
    want = generate(PROMPT, *pen)
    generate(PROMPT, "--prompt-cache", cache)  # the file holds PROMPT's state again
    got = generate(PROMPT, "--prompt-cache", cache, *pen)
    check("penalties after the cache: the answer without one",
          read_from(got) == (n - 1, n) and got.stdout == want.stdout, (got.stdout, want.stdout))
    check("the penalties change the answer (else the check above is empty)",
          want.stdout != plain.stdout, want.stdout)

    # --prompt-cache-all: the answer's state saved too, so a prompt that goes on from the
    # prompt and its answer reads both and answers as without a cache.
    saved_all = os.path.join(tmp, "all.state")
    first = generate(PROMPT, "--prompt-cache", saved_all, "--prompt-cache-all")
    check("--prompt-cache-all: the answer without a cache", first.returncode == 0 and
          first.stdout == plain.stdout, (first.stderr, first.stdout))
    go_on = first.stdout.rstrip("\n") + " and"
    want = generate(go_on)
    got = generate(go_on, "--prompt-cache", saved_all)
    read = read_from(got)
    check("--prompt-cache-all: the next prompt reads the prompt and most of the answer",
          read is not None and read[0] >= n + 12 and got.stdout == want.stdout,
          (got.stderr, got.stdout, want.stdout))
    p = generate(PROMPT, "--prompt-cache", saved_all, "--prompt-cache-all", "--prompt-cache-ro")
    check("--prompt-cache-all with --prompt-cache-ro refused", p.returncode != 0 and
          "--prompt-cache-ro" in p.stderr, p.stderr)
    p = generate(PROMPT, "--prompt-cache-all")
    check("--prompt-cache-all alone refused", p.returncode != 0 and "--prompt-cache" in p.stderr,
          p.stderr)

    # Refusals.
    model = os.path.join(tmp, "other.gguf")
    run(mk_bin, "-o", model, "--n-embd", "64", "--n-layer", "1", "--n-head", "4", "--n-ff", "128",
        "--tokenizer-from", stories)
    p = generate(PROMPT, "--prompt-cache", cache, model=model)
    check("another model's file refused, naming it",
          p.returncode != 0 and "another model" in p.stderr and "--prompt-cache" in p.stderr,
          p.stderr)
    p = generate(PROMPT, "--prompt-cache", stories)
    check("no state file refused", p.returncode != 0 and "not a pshard state file" in p.stderr,
          p.stderr)
    p = generate(PROMPT, "--prompt-cache-ro")
    check("--prompt-cache-ro alone refused", p.returncode != 0 and "--prompt-cache" in p.stderr,
          p.stderr)
    p = run(run_bin, "-m", stories, "-cnv", "--chat-template", "chatml", "--prompt-cache", cache,
            stdin="Hi\n")
    check("-cnv with --prompt-cache refused", p.returncode != 0, p.stderr)


if not os.path.exists(stories):
    print(f"SKIP: {stories} is absent")
    sys.exit(77)
with tempfile.TemporaryDirectory() as d:
    main(d)
sys.exit(checks.finish())
