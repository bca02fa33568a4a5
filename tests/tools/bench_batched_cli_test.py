#!/usr/bin/env python3
"""pshard-bench's batched mode (llama-batched-bench's -npp/-ntg/-npl) on a tiny generated
model: the table's columns and their arithmetic, the jsonl keys, one row per (PP, TG, B);
on the emulated GPU under a compiled schedule, the passes per plan and tier; bad flags
refused with a message.

usage: bench_batched_cli_test.py BUILD_DIR
"""
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cli_util import Checks, run  # noqa: E402

build = sys.argv[1]
bench = os.path.join(build, "tools/pshard-bench/pshard-bench")
mkmodel = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
checks = Checks()
check = checks.check
HEADER = ("|    PP |     TG |    B |   N_KV |   T_PP s | S_PP t/s |   T_TG s | S_TG t/s |      T s |"
          "    S t/s |")


def table_rows(text):
    rows = []
    for line in text.splitlines():
        if re.match(r"^\|\s+\d", line):
            rows.append([float(c) for c in line.strip("|").split("|")])
    return rows


def main(tmp):
    model = os.path.join(tmp, "tiny.gguf")
    p = run(mkmodel, "-o", model, "--n-embd", "64", "--n-ff", "128", "--n-layer", "2")
    check("mkmodel", p.returncode == 0, p.stderr)

    p = run(bench, "-m", model, "-npp", "16,32", "-ntg", "8", "-npl", "1,2,4", "-t", "1")
    check("cpu exit", p.returncode == 0, p.stderr)
    check("header", HEADER in p.stdout, p.stdout)
    rows = table_rows(p.stdout)
    check("one row per (PP, TG, B)", [(r[0], r[1], r[2]) for r in rows] ==
          [(pp, 8, b) for pp in (16, 32) for b in (1, 2, 4)], rows)
    for pp, tg, b, n_kv, t_pp, s_pp, t_tg, s_tg, t, s in rows:
        check("N_KV = B (PP + TG)", n_kv == b * (pp + tg), n_kv)
        check("T = T_PP + T_TG", abs(t - (t_pp + t_tg)) <= 0.0015, (t, t_pp, t_tg))
        check("positive speeds", s_pp > 0 and s_tg > 0 and s > 0, (s_pp, s_tg, s))
    check("progress on stderr", "PP 32 TG 8 B 4" in p.stderr, p.stderr)

    p = run(bench, "-m", model, "-npp", "16", "-ntg", "4", "-npl", "2", "-t", "1", "-o", "jsonl")
    lines = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    check("jsonl", p.returncode == 0 and len(lines) == 1, p.stdout + p.stderr)
    if lines:
        keys = {"pp", "tg", "pl", "n_kv", "t_pp", "speed_pp", "t_tg", "speed_tg", "t", "speed",
                "n_kv_max", "n_batch", "n_threads", "backend"}
        check("jsonl keys", keys <= set(lines[0]), lines[0])
        r = lines[0]
        check("jsonl values", r["n_kv"] == 2 * 20 and r["backend"] == "cpu", r)
        close = lambda a, b: abs(a - b) <= 1e-6 * abs(b)  # noqa: E731
        check("S_PP = B PP / T_PP", close(r["speed_pp"], 2 * 16 / r["t_pp"]), r)
        check("S_TG = B TG / T_TG", close(r["speed_tg"], 2 * 4 / r["t_tg"]), r)
        check("S = N_KV / T", close(r["t"], r["t_pp"] + r["t_tg"]) and close(r["speed"], 40 / r["t"]), r)

    # The emulated GPU under a schedule below the model's size: passes per plan and tier.
    sched = os.path.join(tmp, "tiny.pshard")
    p = run(compile_bin, "-m", model, "--profile", profile, "-o", sched, "--tiers", "1,4,16",
            "-c", "64", "-q", "--kernel-workspace", "0", "-np", "4")
    check("compile", p.returncode == 0, p.stderr)
    p = run(bench, "-m", model, "-s", sched, "--backend", "emu", "--emu-pcie", "50", "-c", "64",
            "-npp", "16", "-ntg", "4", "-npl", "1,4", "-t", "1")
    check("emu exit", p.returncode == 0, p.stderr)
    check("emu backend named", "backend = emu" in p.stdout, p.stdout)
    tiers = set(int(m) for m in re.findall(r"^plan: .* tier\s+(\d+)", p.stdout, re.M))
    check("prompt and decode tiers", {1, 16} <= tiers, p.stdout)
    check("emu rows", len(table_rows(p.stdout)) == 2, p.stdout)

    for args, message in [
        (["-npl", "0"], "positive"),
        (["-npl", "2", "-t", "1,2"], "one -t"),
        (["-npp", "60", "-ntg", "10", "-npl", "1", "-s", sched, "-c", "64"], "PP + TG"),
        (["-npl", "2", "--backend", "tpu"], "tpu"),
    ]:
        p = run(bench, "-m", model, *args)
        check("refused: " + " ".join(args), p.returncode != 0 and message in p.stderr, p.stderr)


with tempfile.TemporaryDirectory() as tmp:
    main(tmp)
sys.exit(checks.finish())
