#!/usr/bin/env python3
"""LoRA adapters in pshard-run and pshard-server (--lora, --lora-scaled, llama.cpp's
flags): a model given an adapter answers, log-probabilities within float rounding, as the
same model file with W + scale·alpha/rank·B·A written into its weights by numpy here;
two half-scale adapters as one whole; otherwise than without; bad adapters are refused
naming the file.

usage: lora_cli_test.py BUILD_DIR SHARED_DIR
"""
import json
import os
import struct
import sys
import tempfile

from cli_util import Checks, run

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed (Debian's python3-numpy)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "server"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from server_util import Server  # noqa: E402
import gguf_f32  # noqa: E402

build, shared = sys.argv[1], sys.argv[2]
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
stories = os.path.join(shared, "models/stories260K.gguf")
checks = Checks()
check = checks.check
PROMPT = "Once upon a time, there was a little girl named Lily."
TARGETS = ["blk.0.attn_q.weight", "blk.1.ffn_down.weight", "blk.1.attn_output.weight"]
RANK, ALPHA = 4, 8.0


def top(model, *extra):
    p = run(run_bin, "-m", model, "-p", PROMPT, "-n", "8", "--temp", "0", "--ignore-eos",
            "-t", "2", "--json", "--top-logprobs", "1", *extra)
    if p.returncode != 0:
        return p.stderr
    d = json.loads(p.stdout)
    return d["generated_tokens"], [t[0]["logprob"] for t in d["top_logprobs"]]


def close(a, b, tol=2e-4):
    return (isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0] and
            all(abs(x - y) < tol for x, y in zip(a[1], b[1])))


def adapter(path, weights, arch="llama"):
    """A LoRA GGUF for `weights` ({name: (A (r, n_in), B (n_out, r))})."""
    meta = [("general.architecture", 8, gguf_f32.kv("general.architecture", 8,
                                                     gguf_f32.string(arch))),
            ("general.type", 8, gguf_f32.kv("general.type", 8, gguf_f32.string("adapter"))),
            ("adapter.type", 8, gguf_f32.kv("adapter.type", 8, gguf_f32.string("lora"))),
            ("adapter.lora.alpha", 6, gguf_f32.kv("adapter.lora.alpha", 6,
                                                  struct.pack("<f", ALPHA)))]
    tensors = {}
    for name, (a, b) in weights.items():
        tensors[name + ".lora_a"] = a
        tensors[name + ".lora_b"] = b
    gguf_f32.write(path, meta, tensors)


def main(tmp):
    base = os.path.join(tmp, "base.gguf")
    p = run(mk_bin, "-o", base, "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2",
            "--n-layer", "2", "--n-ff", "128", "--tokenizer-from", stories)
    check("mkmodel", p.returncode == 0, p.stderr)
    meta, tensors = gguf_f32.read(base)
    rng = np.random.default_rng(7)
    weights = {}
    for name in TARGETS:
        n_out, n_in = tensors[name].shape
        weights[name] = (rng.normal(0, 0.2, (RANK, n_in)).astype(np.float32),
                         rng.normal(0, 0.2, (n_out, RANK)).astype(np.float32))
    lora = os.path.join(tmp, "lora.gguf")
    adapter(lora, weights)
    merged = os.path.join(tmp, "merged.gguf")
    s = 0.8 * ALPHA / RANK
    for name, (a, b) in weights.items():
        tensors[name] = (tensors[name].astype(np.float64) +
                         s * (b.astype(np.float64) @ a.astype(np.float64))).astype(np.float32)
    gguf_f32.write(merged, meta, tensors)

    want = top(merged)
    got = top(base, "--lora-scaled", lora, "0.8")
    check("--lora-scaled: the merged file's answer", close(got, want), (got, want))
    check("and without it otherwise", not close(top(base), want), "")
    halves = top(base, "--lora-scaled", lora, "0.4", "--lora-scaled", lora, "0.4")
    check("two adapters at 0.4: as one at 0.8", close(halves, want), (halves, want))
    whole = top(base, "--lora", lora)
    check("--lora: scale 1, another answer", isinstance(whole, tuple) and not close(whole, want),
          whole)
    with Server(build, base, "-np", "1", "--lora-scaled", lora, "0.8") as srv:
        _, body = srv.json("POST", "/v1/completions", {"prompt": PROMPT, "max_tokens": 8,
                                                       "temperature": 0, "ignore_eos": True,
                                                       "logprobs": 1})
    served = body["choices"][0]["logprobs"]["token_logprobs"] if "choices" in body else body
    check("pshard-server --lora-scaled: the merged file's log-probabilities",
          isinstance(want, tuple) and isinstance(served, list) and len(served) == 8 and
          all(abs(x - y) < 2e-4 for x, y in zip(served, want[1])), (served, want))

    other = os.path.join(tmp, "qwen3_lora.gguf")
    adapter(other, weights, arch="qwen3")
    for what, flags, says in [
            ("a missing adapter", ["--lora", os.path.join(tmp, "none.gguf")], "none.gguf"),
            ("a model file as adapter", ["--lora", base], "not a LoRA adapter"),
            ("another architecture's", ["--lora", other], "qwen3"),
            ("a scale that is no number", ["--lora-scaled", lora, "x"], "--lora-scaled")]:
        p = run(run_bin, "-m", base, "-p", "hi", "-n", "1", *flags)
        check(f"{what} refused, naming it", p.returncode != 0 and says in p.stderr, p.stderr)


if not os.path.exists(stories):
    print(f"SKIP: {stories} is absent")
    sys.exit(77)
with tempfile.TemporaryDirectory() as d:
    main(d)
sys.exit(checks.finish())
