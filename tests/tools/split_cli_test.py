#!/usr/bin/env python3
"""Split GGUF models (llama.cpp's gguf-split layout) through the tools, as a user has them:
stories260K re-written as 3 shards runs with pshard-run and gives the unsplit file's greedy
tokens (mapped and --no-mmap), compiles with pshard-compile and runs its schedule on the
emulated GPU, merges back byte for byte; pshard-mkmodel writes split models; wrong files
are clear errors.

usage: split_cli_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import shutil
import sys
import tempfile

from cli_util import Checks, run

build, shared = sys.argv[1], sys.argv[2]
tools = os.path.join(build, "tools")
run_bin = os.path.join(tools, "pshard-run/pshard-run")
split_bin = os.path.join(tools, "pshard-gguf-split/pshard-gguf-split")
mk_bin = os.path.join(tools, "pshard-mkmodel/pshard-mkmodel")
compile_bin = os.path.join(tools, "pshard-compile/pshard-compile")
inspect_bin = os.path.join(tools, "pshard-inspect/pshard-inspect")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
stories = os.path.join(shared, "models/stories260K.gguf")
EXPECTED = [432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337]
checks = Checks()
check = checks.check




def tokens(model, *extra):
    p = run(run_bin, "-m", model, "-p", "Once upon a time", "-n", "16", "--temp", "0", "-t", "2",
            "--json", *extra)
    return p, (json.loads(p.stdout)["generated_tokens"] if p.returncode == 0 else None)


def shard(prefix, k, n):
    return f"{prefix}-{k:05d}-of-{n:05d}.gguf"


def split_stories(tmp):
    prefix = os.path.join(tmp, "stories")
    p = run(split_bin, "--split-max-tensors", "20", stories, prefix)  # 48 tensors: 3 files
    check("split exit", p.returncode == 0, p.stderr)
    names = [shard(prefix, k, 3) for k in (1, 2, 3)]
    check("split names", p.stdout.split() == names, p.stdout)
    first = names[0]
    for extra in [(), ("--no-mmap",)]:
        p, got = tokens(first, *extra)
        check(f"split runs {extra}", p.returncode == 0, p.stderr)
        check(f"split tokens {extra}", got == EXPECTED, got)

    # Merged back, the file is the original byte for byte.
    merged = os.path.join(tmp, "merged.gguf")
    p = run(split_bin, "--merge", first, merged)
    check("merge exit", p.returncode == 0, p.stderr)
    with open(merged, "rb") as a, open(stories, "rb") as b:
        check("merge is the original", a.read() == b.read())

    # Compiled for the split model, the schedule runs on the emulated GPU with every
    # sub-layer streamed, so weights come from all three files.
    sched = os.path.join(tmp, "split.pshard")
    p = run(compile_bin, "-m", first, "--profile", profile, "-o", sched, "--tiers", "1,4,16",
            "-c", "256", "-q", "--kernel-workspace", "0", "--budgets", "768K",
            "--strategy", "gpu-only")
    check("compile split", p.returncode == 0, p.stderr)
    p, got = tokens(first, "-s", sched, "--backend", "emu", "--vram", "768K")
    check("split schedule runs", p.returncode == 0, p.stderr)
    check("split schedule tokens", got == EXPECTED, got)
    if p.returncode == 0:
        check("weights streamed", json.loads(p.stdout)["stats"]["bytes_streamed"] > 0, p.stdout)
    p = run(inspect_bin, sched)
    check("inspect names the files", "in 3 files (a split GGUF)" in p.stdout, p.stdout)
    p = run(inspect_bin, sched, "--json")
    check("inspect json shards", p.returncode == 0 and '"shard": 2' in p.stdout, p.stderr)
    # A schedule belongs to one form of the model: the unsplit file refuses it.
    p, _ = tokens(stories, "-s", sched)
    check("unsplit refuses the split's schedule",
          p.returncode != 0 and "model fingerprint" in p.stderr, p.stderr)

    # Errors name the file and the fix.
    p, _ = tokens(names[1])
    check("second shard refused", p.returncode != 0 and f"open '{first}' instead" in p.stderr,
          p.stderr)
    hidden = os.path.join(tmp, "hidden.gguf")
    os.rename(names[2], hidden)
    p, _ = tokens(first)
    check("missing shard", p.returncode != 0 and names[2] in p.stderr and "is missing" in p.stderr,
          p.stderr)
    os.rename(hidden, names[2])


def mkmodel_split(tmp):
    whole = os.path.join(tmp, "gen.gguf")
    prefix = os.path.join(tmp, "gen-split")
    base = [mk_bin, "--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-ff", "128",
            "--seed", "7"]
    p = run(*base, "-o", whole)
    check("mkmodel whole", p.returncode == 0, p.stderr)
    p = run(*base, "-o", prefix + ".gguf", "--split-max-tensors", "8")  # 21 tensors: 3 files
    check("mkmodel split", p.returncode == 0, p.stderr)
    first = shard(prefix, 1, 3)
    check("mkmodel shard names",
          sorted(f for f in os.listdir(tmp) if f.startswith("gen-split")) ==
          [os.path.basename(shard(prefix, k, 3)) for k in (1, 2, 3)], os.listdir(tmp))
    pw, a = tokens(whole)
    ps, b = tokens(first)
    check("mkmodel split runs", pw.returncode == 0 and ps.returncode == 0, pw.stderr + ps.stderr)
    check("mkmodel split tokens", a is not None and a == b, (a, b))


def main():
    if not os.path.exists(stories):
        print(f"SKIP: {stories} is absent")
        return 0
    tmp = tempfile.mkdtemp(prefix="pshard_split_cli_")
    try:
        split_stories(tmp)
        mkmodel_split(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return checks.finish()


sys.exit(main())
