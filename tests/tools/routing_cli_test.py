#!/usr/bin/env python3
"""Routing profiles as a user makes and uses them: pshard-profile --routing runs a MoE
model over a text and writes each layer's expert counts; pshard-compile --routing plans
with them (the MLIR pipeline writing the same artifact as the direct planner); a dense
model, a profile of another shape and a malformed file are refused naming the fix.

usage: routing_cli_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import sys
import tempfile

from cli_util import Checks, run

checks = Checks()
check, skip = checks.check, checks.skip

build, shared = sys.argv[1], sys.argv[2]
profile_bin = os.path.join(build, "tools/pshard-profile/pshard-profile")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
machine = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
moe = os.path.join(shared, "models/stories260K-moe4x2-noise10.gguf")
dense = os.path.join(shared, "models/stories260K.gguf")
TEXT = ("Once upon a time, there was a little girl named Lily. She loved to play outside in "
        "the park with her dog. One day, she saw a big red ball under a tree.\n") * 12




if not os.path.exists(moe):
    print(f"SKIP: {moe} is not present")
    sys.exit(77)

with tempfile.TemporaryDirectory() as tmp:
    text = os.path.join(tmp, "text.txt")
    with open(text, "w") as f:
        f.write(TEXT)
    routing = os.path.join(tmp, "moe.routing.json")
    p = run(profile_bin, "--routing", "-m", moe, "-f", text, "-c", "64", "-o", routing)
    check("profile --routing", p.returncode == 0 and "busiest quarter" in p.stdout, p.stderr)
    r = json.load(open(routing))
    check("five MoE layers, 2 of 4 experts", len(r["layers"]) == 5 and r["n_expert"] == 4 and
          r["n_expert_used"] == 2, r)
    check("every token counted twice per layer",
          all(sum(l["counts"]) == 2 * l["tokens"] == 2 * r["text_tokens"] for l in r["layers"]), r)
    check("noisy experts are not routed uniformly",
          any(max(l["counts"]) > 1.2 * min(l["counts"]) for l in r["layers"]), r["layers"])

    p = run(profile_bin, "--routing", "-m", dense, "-f", text, "-o", os.path.join(tmp, "d.json"))
    check("dense model refused", p.returncode != 0 and "dense" in p.stderr, p.stderr)
    p = run(profile_bin, "--routing", "-m", moe, "-o", os.path.join(tmp, "x.json"))
    check("--routing without -f", p.returncode != 0 and "-f" in p.stderr, p.stderr)

    args = ["-m", moe, "--profile", machine, "--tiers", "1,4,16", "-c", "256",
            "--kernel-workspace", "0", "--budgets", "600K,1M", "-q", "--routing", routing]
    direct = os.path.join(tmp, "direct.pshard")
    p = run(compile_bin, *args, "-o", direct)
    check("compile --routing", p.returncode == 0, p.stderr)
    mlir = os.path.join(tmp, "mlir.pshard")
    p = run(compile_bin, *args, "-o", mlir, "--pipeline", "mlir")
    if "MLIR part" in p.stderr:
        print("SKIP --pipeline mlir: this build has no MLIR compiler")
    else:
        check("compile --routing --pipeline mlir", p.returncode == 0, p.stderr)
        check("MLIR and direct artifacts identical",
              open(direct, "rb").read() == open(mlir, "rb").read())

    other = os.path.join(tmp, "moe8.gguf")
    p = run(mk_bin, "-o", other, "--arch", "qwen3moe", "--n-layer", "5", "--n-expert", "8",
            "--n-expert-used", "2")
    check("mkmodel 8 experts", p.returncode == 0, p.stderr)
    p = run(compile_bin, "-m", other, "--profile", machine, "-o", os.path.join(tmp, "o.pshard"),
            "-q", "--routing", routing)
    check("a profile of another shape is refused", p.returncode != 0 and "2 of 4" in p.stderr and
          "pshard-profile --routing" in p.stderr, p.stderr)
    bad = os.path.join(tmp, "bad.json")
    with open(bad, "w") as f:
        f.write('{"format": "pshard-routing", "version": 1, "n_expert": 4}')
    p = run(compile_bin, *args[:-1], bad, "-o", os.path.join(tmp, "b.pshard"))
    check("a malformed profile is refused", p.returncode != 0 and "malformed" in p.stderr, p.stderr)

sys.exit(checks.finish())
