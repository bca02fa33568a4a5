#!/usr/bin/env python3
"""pshard-bench on a tiny generated model: JSON rows with llama-bench's fields,
the derived columns, a markdown table and a progress line on stderr; the same tests
under a compiled schedule on the emulated GPU (the backend and the plans each test used);
an encoder's pp test (its tg test skipped, saying so).

usage: bench_cli_test.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

build = sys.argv[1]
bench = os.path.join(build, "tools/pshard-bench/pshard-bench")
mkmodel = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
failures = []


def check(name, cond, detail=""):
    if not cond:
        failures.append(f"{name}: {detail}")


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300)


with tempfile.TemporaryDirectory() as tmp:
    model = os.path.join(tmp, "tiny-q4_0.gguf")
    p = run(mkmodel, "-o", model, "--type", "q4_0", "--n-embd", "64", "--n-ff", "128")
    check("mkmodel", p.returncode == 0, p.stderr)

    p = run(bench, "-m", model, "-p", "8", "-n", "4", "-r", "1", "-t", "1,2", "-o", "json",
            "--bw-mib", "16")
    check("json exit", p.returncode == 0, p.stderr)
    rows = json.loads(p.stdout) if p.returncode == 0 else []
    check("row count", len(rows) == 4, f"{len(rows)} rows")
    for r in rows:
        for field in ("model_filename", "model_type", "model_size", "model_n_params", "n_threads",
                      "n_prompt", "n_gen", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts",
                      "samples_ts", "isa", "mem_read_bw_bytes_per_s", "bw_ratio", "gflops"):
            check("field " + field, field in r, json.dumps(r))
        check("positive t/s", r.get("avg_ts", 0) > 0, json.dumps(r))
        check("one sample", len(r.get("samples_ts", [])) == 1, json.dumps(r))
        if r.get("n_gen", 0) > 0:
            check("tg bw ratio", r.get("bw_ratio", 0) > 0, json.dumps(r))
        else:
            check("pp gflops", r.get("gflops", 0) > 0, json.dumps(r))
    check("sweep", sorted((r["n_threads"], r["n_prompt"], r["n_gen"]) for r in rows) ==
          [(1, 0, 4), (1, 8, 0), (2, 0, 4), (2, 8, 0)], str(rows))
    check("progress on stderr", "[1/4]" in p.stderr, p.stderr)

    p = run(bench, "-m", model, "-p", "0", "-n", "2", "-r", "2", "-t", "1", "--bw-mib", "16",
            "--isa", "scalar")
    check("md exit", p.returncode == 0, p.stderr)
    check("md table", "| model |" in p.stdout and "tg2" in p.stdout and "pp" not in p.stdout
          and "scalar" in p.stdout, p.stdout)

    check("random ids by default", all(r.get("tokens") == "random" for r in rows), str(rows))
    # --text: the tests' tokens from a text (a MoE then routes as on that text); an empty
    # text and the batched mode are refused naming the fix.
    text = os.path.join(tmp, "story.txt")
    with open(text, "w") as f:
        f.write("Once upon a time, there was a little girl named Lily. " * 4)
    p = run(bench, "-m", model, "-p", "8", "-n", "4", "-r", "1", "-t", "1", "-o", "json",
            "--bw-mib", "16", "--text", text)
    rows = json.loads(p.stdout) if p.returncode == 0 else []
    check("--text rows", len(rows) == 2 and all(r.get("tokens", "").startswith("story.txt (")
                                                for r in rows), p.stderr + p.stdout)
    p = run(bench, "-m", model, "-p", "8", "-n", "0", "-r", "1", "-t", "1", "--bw-mib", "16",
            "--text", text)
    check("--text md", p.returncode == 0 and "tokens: from story.txt (" in p.stdout, p.stdout)
    empty = os.path.join(tmp, "empty.txt")
    open(empty, "w").close()
    p = run(bench, "-m", model, "-p", "8", "-n", "0", "--bw-mib", "16", "--text", empty)
    check("empty --text refused", p.returncode != 0 and "gives no tokens" in p.stderr, p.stderr)
    p = run(bench, "-m", model, "-npp", "8", "--text", text)
    check("--text in batched mode refused", p.returncode != 0 and "batched" in p.stderr, p.stderr)

    p = run(bench, "-m", model, "--isa", "sse9")
    check("bad isa refused", p.returncode != 0 and "sse9" in p.stderr, p.stderr)

    # Under a schedule: ppN and tgN run the schedule's plans on emu (the prompt at tier
    # 16, decode at tier 1), and say so; without -s a device backend is refused.
    sched = os.path.join(tmp, "tiny.pshard")
    p = run(compile_bin, "-m", model, "--profile", profile, "-o", sched, "--tiers", "1,16",
            "-c", "64", "-q", "--kernel-workspace", "0")
    check("compile", p.returncode == 0, p.stderr)
    p = run(bench, "-m", model, "-s", sched, "--backend", "emu", "--emu-pcie", "50", "-p", "16",
            "-n", "4", "-r", "2", "-t", "1", "-o", "json", "--bw-mib", "16")
    check("emu json exit", p.returncode == 0, p.stderr)
    rows = json.loads(p.stdout) if p.returncode == 0 else []
    check("emu rows", len(rows) == 2, p.stdout)
    for r in rows:
        check("emu backend", r.get("backends", "").startswith("emu "), json.dumps(r))
        tier = 16 if r.get("n_prompt", 0) > 0 else 1
        passes = 2 * (1 if tier == 16 else 4)  # two repetitions, the warm-up not counted
        check("plan of the test", f"tier {tier} ({passes} passes" in r.get("plans", ""),
              json.dumps(r))
    p = run(bench, "-m", model, "-s", sched, "-p", "16", "-n", "0", "-r", "1", "-t", "1",
            "--bw-mib", "16")
    check("emu md", p.returncode == 0 and "| backend |" in p.stdout and "pp16 on emu" in p.stdout,
          p.stdout + p.stderr)
    p = run(bench, "-m", model, "--backend", "emu", "-p", "8", "-n", "0", "--bw-mib", "16")
    check("device backend without a schedule refused",
          p.returncode != 0 and "give one with -s" in p.stderr, p.stderr)

    # An encoder embeds: its pp test embeds the prompt in one pass, its tg test is skipped.
    bert = os.path.join(tmp, "tiny-bert.gguf")
    p = run(mkmodel, "-o", bert, "--arch", "bert", "--n-embd", "64", "--n-ff", "128", "--ctx",
            "64")
    check("mkmodel bert", p.returncode == 0, p.stderr)
    p = run(bench, "-m", bert, "-p", "32", "-n", "4", "-r", "1", "-t", "1", "-o", "json",
            "--bw-mib", "16")
    rows = json.loads(p.stdout) if p.returncode == 0 else []
    check("bert: one pp row, no tg row", p.returncode == 0 and
          [(r["n_prompt"], r["n_gen"]) for r in rows] == [(32, 0)] and rows[0]["avg_ts"] > 0,
          p.stdout + p.stderr)
    check("bert: the skipped tg test is said", "tg tests are skipped" in p.stderr, p.stderr)

for f in failures:
    print("FAIL", f)
print(f"{'FAILED' if failures else 'ok'}: {len(failures)} failures")
sys.exit(1 if failures else 0)
