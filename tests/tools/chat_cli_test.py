#!/usr/bin/env python3
"""pshard-run -cnv as a user drives it, with piped stdin: one answer per line read, the
model's own template detected (a model carrying Phi-3's tokenizer and template) or one
forced with --chat-template, a clean end at EOF, and clear errors naming the flag.

usage: chat_cli_test.py BUILD_DIR SHARED_DIR
"""
import os
import shutil
import sys
import tempfile

from cli_util import Checks, run

build, shared = sys.argv[1], sys.argv[2]
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
stories = os.path.join(shared, "models/stories260K.gguf")
phi3_vocab = os.path.join(shared, "vocab/ggml-vocab-phi-3.gguf")
checks = Checks()
check = checks.check


def chat(model, stdin, *extra):
    return run(run_bin, "-m", model, "--temp", "0", "-n", "8", "-t", "2", *extra, stdin=stdin)



def forced_template():
    # stories260K has no template of its own: --chat-template names one.
    one = chat(stories, "Once upon a time\n", "-cnv", "--chat-template", "chatml")
    check("one turn", one.returncode == 0 and one.stdout.endswith("\n"), one.stderr)
    check("template named", "chat template chatml" in one.stderr, one.stderr)
    two = chat(stories, "Once upon a time\nThe dog ran\n", "-cnv", "--chat-template", "chatml",
               "-sys", "You tell stories.")
    check("two turns", two.returncode == 0, two.stderr)
    with_sys = chat(stories, "Once upon a time\n", "-cnv", "--chat-template", "chatml",
                    "-sys", "You tell stories.")
    # A turn's answer does not depend on what is said after it.
    check("later turns append", two.stdout.startswith(with_sys.stdout) and
          len(two.stdout) > len(with_sys.stdout), (two.stdout, with_sys.stdout))
    again = chat(stories, "Once upon a time\nThe dog ran\n", "--conversation", "--chat-template",
                 "chatml", "--system", "You tell stories.")
    check("long flags, same answers", again.stdout == two.stdout, (again.stdout, two.stdout))
    blank = chat(stories, "Once upon a time\n\n   \n", "-cnv", "--chat-template", "chatml")
    check("blank lines are skipped", blank.stdout == one.stdout, (blank.stdout, one.stdout))
    eof = chat(stories, "", "-cnv", "--chat-template", "chatml")
    check("EOF at once ends cleanly", eof.returncode == 0 and eof.stdout == "", eof.stderr)


def detected_template(tmp):
    if not os.path.exists(phi3_vocab):
        print(f"SKIP detected template: {phi3_vocab} is absent")
        return
    model = os.path.join(tmp, "phi3-chat.gguf")
    p = run(mk_bin, "-o", model, "--n-embd", "64", "--n-layer", "1", "--n-head", "4", "--n-ff",
            "128", "--tokenizer-from", phi3_vocab)
    check("mkmodel with a chat template", p.returncode == 0, p.stderr)
    p = chat(model, "Hello\nHow are you\n", "-cnv")
    check("detected template runs", p.returncode == 0, p.stderr)
    check("detected phi3", "chat template phi3" in p.stderr, p.stderr)


def errors():
    p = chat(stories, "Hi\n", "-cnv")
    check("no template: names the flag",
          p.returncode != 0 and "has no chat template" in p.stderr and "--chat-template" in p.stderr,
          p.stderr)
    p = chat(stories, "Hi\n", "-cnv", "--chat-template", "chatml9")
    check("unknown name lists the known ones",
          p.returncode != 0 and "chatml9" in p.stderr and "llama3" in p.stderr and
          "--chat-template" in p.stderr, p.stderr)
    p = chat(stories, "Hi\n", "-cnv", "--chat-template", "chatml", "-p", "x")
    check("-cnv excludes -p", p.returncode != 0, p.stderr)


def main():
    if not os.path.exists(stories):
        print(f"SKIP: {stories} is absent")
        return 0
    tmp = tempfile.mkdtemp(prefix="pshard_chat_cli_")
    try:
        forced_template()
        detected_template(tmp)
        errors()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.finish()


sys.exit(main())
