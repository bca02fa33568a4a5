#!/usr/bin/env python3
"""llama.cpp's K-quant mixes of stories260K-x4 through pshard-run, as a user runs them:
on the CPU (every ISA path this CPU has) against llama.cpp's known answers
(shared/models/README-architectures.md), and on the emulated GPU under schedules compiled
for a VRAM budget smaller than the model — resident and streamed — with the CPU's tokens
and log-probs bit for bit.

usage: kquant_cli_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import sys
import tempfile

from cli_util import Checks, run

checks = Checks()
check, skip = checks.check, checks.skip

build, shared = sys.argv[1], sys.argv[2]
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
FIRST16 = [432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338, 401, 396, 267, 337]
TEXT = (", there was a little girl named Lily. She loved to play with her toys and her friends. "
        "One day, Lily's")
# llama.cpp b6097's first-position top-3 (README-architectures.md).
TOP3 = {
    "stories260K-x4-Q4_K_M.gguf": [(432, -0.0960), (383, -2.4294), (322, -7.6160)],
    "stories260K-x4-Q6_K.gguf": [(432, -0.0403), (383, -3.3052), (322, -7.9673)],
}
BUDGET = "1600K"  # both files are larger (2.5 and 3.4 MB)




def generate(model, *extra, env=None):
    p = run(run_bin, "-m", model, "-p", "Once upon a time", "-n", "32", "--temp", "0", "-t", "2",
            "-c", "256", "--json", "--top-logprobs", "3", *extra, env=env)
    return p, (json.loads(p.stdout) if p.returncode == 0 else None)


def on_cpu(name, model):
    p, out = generate(model)
    check(f"{name} cpu runs", out is not None, p.stderr)
    if not out:
        return None
    check(f"{name} first 16 ids", out["generated_tokens"][:16] == FIRST16, out["generated_tokens"])
    check(f"{name} text of 32", out["text"] == TEXT, repr(out["text"]))
    first = out["top_logprobs"][0]
    ref = TOP3[name]
    check(f"{name} top-3 ids", [e["id"] for e in first] == [r[0] for r in ref], first)
    check(f"{name} top-3 log-probs within 0.3",
          all(abs(e["logprob"] - r[1]) < 0.3 for e, r in zip(first, ref)), first)
    # Other ISA paths round differently but must give the same tokens.
    for isa in ["avx2", "scalar"]:
        p, other = generate(model, env={"PSHARD_ISA": isa})
        check(f"{name} {isa} tokens", other and other["generated_tokens"] == out["generated_tokens"],
              p.stderr if not other else other["generated_tokens"])
    return out


def on_emu(name, model, cpu, tmp):
    for strategy in ["auto", "gpu-only"]:
        schedule = os.path.join(tmp, f"{name}-{strategy}.pshard")
        p = run(compile_bin, "-m", model, "--profile", profile, "-o", schedule, "--tiers", "1,4,16",
                "-c", "256", "-q", "--kernel-workspace", "0", "--budgets", BUDGET,
                "--strategy", strategy)
        check(f"{name} compile {strategy}", p.returncode == 0, p.stderr)
        if p.returncode != 0:
            continue
        p, out = generate(model, "-s", schedule, "--backend", "emu", "--vram", BUDGET)
        check(f"{name} emu {strategy} runs", out is not None, p.stderr)
        if not out:
            continue
        check(f"{name} emu {strategy} tokens", out["generated_tokens"] == cpu["generated_tokens"],
              out["generated_tokens"])
        check(f"{name} emu {strategy} log-probs bit for bit",
              out["top_logprobs"] == cpu["top_logprobs"], out["top_logprobs"][0])
        st = out["stats"]
        check(f"{name} emu {strategy} within budget", 0 < st["peak_vram_bytes"] <= 1600 * 1024, st)
        if strategy == "gpu-only":
            check(f"{name} weights streamed", st["bytes_streamed"] > 0, st)


def mkmodel_types(tmp):
    # Every new weight type and every mix: pshard-mkmodel writes it, pshard-run runs it.
    for kind in ["q4_1", "q5_0", "q5_1", "iq4_nl", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k",
                 "iq4_xs", "mxfp4", "q4_k_m", "q5_k_m", "q3_k_m", "q2_k", "mxfp4_moe"]:
        model = os.path.join(tmp, f"mk-{kind}.gguf")
        p = run(mk_bin, "-o", model, "--n-embd", "256", "--n-layer", "2", "--n-head", "4",
                "--n-head-kv", "2", "--n-ff", "512", "--type", kind)
        check(f"mkmodel --type {kind}", p.returncode == 0, p.stderr)
        if p.returncode != 0:
            continue
        p = run(run_bin, "-m", model, "-p", "Hello", "-n", "4", "--temp", "0", "--json")
        check(f"run {kind} model",
              p.returncode == 0 and len(json.loads(p.stdout)["generated_tokens"]) == 4, p.stderr)
    p = run(mk_bin, "-o", os.path.join(tmp, "bad.gguf"), "--n-embd", "64", "--type", "q4_k")
    check("mkmodel q4_k with rows of 64 fails", p.returncode != 0 and "q4_k" in p.stderr, p.stderr)
    p = run(mk_bin, "-o", os.path.join(tmp, "bad.gguf"), "--type", "q4_k_x")
    check("mkmodel unknown type lists the mixes", p.returncode != 0 and "q4_k_m" in p.stderr, p.stderr)


with tempfile.TemporaryDirectory() as tmp:
    mkmodel_types(tmp)
    for name in TOP3:
        model = os.path.join(shared, "models", name)
        if not os.path.exists(model):
            skip(f"{name}: {model} is not present")
            continue
        cpu = on_cpu(name, model)
        if cpu:
            on_emu(name, model, cpu, tmp)
sys.exit(checks.finish())
