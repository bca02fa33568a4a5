#!/usr/bin/env python3
"""Embeddings (pshard-run --embedding) against an independent float64 forward pass.

For each case pshard-mkmodel writes a small F32 model of a family (some with the
pooling_type an embedding model has); pshard-run prints the prompt's embedding as JSON —
on the cpu in passes of 7 tokens (an encoder's text in one pass), and on the emulated GPU under a gpu-only schedule whose
budget is half the model's size (every sub-layer streamed; passes of at most 16 tokens)
— and reference/forward.py recomputes it from the GGUF file alone: every position's final
hidden state after the output norm, pooled (mean, cls, last, or every row), through the
model's sentence-transformers Dense modules when it has them, cut to --dimensions,
normalized. pshard's must agree to 1e-5 in every value, and emu's must be
the cpu's bit for bit. The KV cache is F32 (-ctk/-ctv f32) so only the arithmetic is
compared.

usage: embedding_reference_test.py BUILD_DIR [SHARED_DIR]   (exit 77: skipped, numpy missing)
"""
import json
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    print("SKIP: this python has no numpy (Debian: apt-get install python3-numpy)")
    sys.exit(77)

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "reference"))
from forward import Reference  # noqa: E402
from gguf_reader import GgufModel  # noqa: E402

build = sys.argv[1]
shared = sys.argv[2] if len(sys.argv) > 2 else ""
mkmodel = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
compile_bin = os.path.join(build, "tools/pshard-compile/pshard-compile")
tokenize_bin = os.path.join(build, "tools/pshard-tokenize/pshard-tokenize")
profile = os.path.join(build, "profiles/laptop-rtx4060-8gb.pshprof")
SHAPE = ["--n-embd", "64", "--n-layer", "3", "--n-head", "4", "--n-head-kv", "2",
         "--n-ff", "96", "--ctx", "256", "--type", "f32", "--seed", "11"]
PROMPT = ("Embeddings turn a text into one vector: the model reads every token, and the "
          "last layer's states are pooled into a point whose neighbours mean the same")
# name: (pshard-mkmodel arguments, pshard-run arguments, the pooling the reference applies)
CASES = {
    "qwen3-model-last": (["--arch", "qwen3", "--head-dim", "32", "--pooling-type", "3"], [],
                         "last"),
    "llama-model-mean": (["--pooling-type", "1"], [], "mean"),
    "qwen3moe-cls-cut": (["--arch", "qwen3moe", "--n-expert", "8", "--n-expert-used", "2",
                          "--head-dim", "16", "--tied-output"],
                         ["--pooling", "cls", "--dimensions", "24"], "cls"),
    "qwen2moe-none": (["--arch", "qwen2moe", "--n-expert", "8", "--n-expert-used", "2",
                       "--n-ff-shexp", "160"], ["--pooling", "none"], "none"),
    "qwen2-last-raw": (["--arch", "qwen2"], ["--pooling", "last", "--embd-normalize", "-1"],
                       "last"),
    # Encoders: every query sees the whole text, so it is one pass (-b holds it; the
    # schedule's largest tier is the context).
    "bert-model-mean": (["--arch", "bert"], [], "mean"),
    "bert-cls-cut": (["--arch", "bert", "--pooling-type", "2"],
                     ["--dimensions", "40"], "cls"),
    "bert-none": (["--arch", "bert"], ["--pooling", "none"], "none"),
    "nomic-bert-mean": (["--arch", "nomic-bert", "--rope-freq-base", "1000", "--pooling-type", "1"],
                        [], "mean"),
    # EmbeddingGemma's layout: Gemma 3's blocks attending both ways, five local layers of
    # six whose 16-position windows are centred on the query (8 either side), mean pooling
    # named by the file, then sentence-transformers' dense_2 / dense_3 (64 -> 96 -> 64).
    "gemma-embedding-mean": (["--arch", "gemma-embedding", "--n-layer", "6", "--head-dim", "16",
                              "--sliding-window", "16", "--rope-freq-base", "1000000",
                              "--dense-projection", "96"], ["--dimensions", "48"], "mean"),
    # ModernBERT's layout: pre-LayerNorms without biases, every third layer global from
    # layer 0, the others over 16-position windows centred on the query (8 either side),
    # fused q/k/v and GeGLU with GELU's exact form; cls pooling named by the file.
    "modern-bert-cls": (["--arch", "modern-bert", "--n-layer", "4", "--n-head-kv", "4",
                         "--sliding-window", "16", "--rope-freq-base", "160000",
                         "--pooling-type", "2"], [], "cls"),
}
# Families whose queries see the whole text: a text is one pass.
TWO_WAY = ("bert", "gemma-embedding")
# The passes pshard-run splits a prompt into (-b) and the schedule's tiers, per family.
CAUSAL_PASSES = (["-b", "7"], "1,4,16")
ENCODER_PASSES = (["-b", "256"], "1,4,256")
TOL = 1e-5
failures = 0


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=300)


def fail(msg):
    global failures
    failures += 1
    print("FAIL", msg)


def shape_with(make_args):
    """SHAPE without the options a case sets itself."""
    out = []
    for i in range(0, len(SHAPE), 2):
        if SHAPE[i] not in make_args:
            out += SHAPE[i:i + 2]
    return out


def embed(model, args, *extra, text=PROMPT):
    p = run(run_bin, "-m", model, "-p", text, "--embedding", "--json", "-t", "2",
            "-ctk", "f32", "-ctv", "f32", *args, *extra)
    if p.returncode != 0:
        fail(f"{model} {args} {extra}: pshard-run failed: {p.stderr}")
        return None
    return json.loads(p.stdout)


def reference(model, n_tokens, pooling, dims, normalize):
    g = GgufModel(model)
    ref = Reference(g)
    ids = tokenize(model)
    if len(ids) != n_tokens:
        fail(f"{model}: pshard read {n_tokens} tokens, the tokenizer gives {len(ids)}")
    rows = np.array(ref.final_states(ids))
    picked = {"mean": lambda r: [r.mean(axis=0)], "cls": lambda r: [r[0]],
              "last": lambda r: [r[-1]], "none": lambda r: list(r)}[pooling](rows)
    if pooling != "none" and g.has("dense_2.weight"):  # sentence-transformers' Dense modules
        picked = [g.tensor("dense_3.weight") @ (g.tensor("dense_2.weight") @ v) for v in picked]
    out = []
    for v in picked:
        v = v[:dims] if dims else v
        out.append(v / np.linalg.norm(v) if normalize else v)
    return out


def tokenize(model):
    p = run(tokenize_bin, "-m", model, "-p", PROMPT, "--ids")
    return json.loads(p.stdout)


def main(tmp):
    for name, (make_args, run_args, pooling) in CASES.items():
        model = os.path.join(tmp, name + ".gguf")
        p = run(mkmodel, "-o", model, *shape_with(make_args), *make_args)
        if p.returncode != 0:
            fail(f"{name}: pshard-mkmodel failed: {p.stderr}")
            continue
        batch, tiers = ENCODER_PASSES if any(f in name for f in TWO_WAY) else CAUSAL_PASSES
        cpu = embed(model, run_args, *batch)
        if cpu is None:
            continue
        if cpu["pooling"] != pooling:
            fail(f"{name}: pshard pooled by {cpu['pooling']}, expected {pooling}")
        dims = int(run_args[run_args.index("--dimensions") + 1]) if "--dimensions" in run_args else 0
        want = reference(model, cpu["n_tokens"], pooling, dims, "-1" not in run_args)
        got = cpu["embedding"] if pooling == "none" else [cpu["embedding"]]
        if len(got) != len(want) or any(len(g) != len(w) for g, w in zip(got, want)):
            fail(f"{name}: shape {[len(g) for g in got]} != reference {[len(w) for w in want]}")
            continue
        worst = max(float(np.max(np.abs(np.array(g) - w))) for g, w in zip(got, want))
        if worst > TOL:
            fail(f"{name}: differs from the float64 reference by up to {worst:.2e}")
        print(f"{name}: {cpu['n_tokens']} tokens, {len(got)} x {len(got[0])} values within "
              f"{worst:.1e} of the float64 reference")
        # An encoder's one pass of 126 tokens needs more activations than half this tiny
        # model: its budget holds them (the C++ encoder tests cover streaming).
        budget = str(os.path.getsize(model) // 2 if tiers == CAUSAL_PASSES[1] else 4 << 20)
        sched = os.path.join(tmp, name + ".pshard")
        p = run(compile_bin, "-m", model, "--profile", profile, "-o", sched, "--budgets", budget,
                "--tiers", tiers, "-c", "256", "-q", "--kernel-workspace", "0",
                "--strategy", "gpu-only", "--kv-type", "f32")
        if p.returncode != 0:
            fail(f"{name}: pshard-compile failed: {p.stderr}")
            continue
        emu = embed(model, run_args, "-s", sched, "--backend", "emu", "--vram", budget)
        if emu is not None and emu != cpu:
            fail(f"{name}: emu under a {budget} B budget differs from the cpu")
    several(os.path.join(tmp, "llama-model-mean.gguf"))
    encoder_defaults(tmp, os.path.join(tmp, "bert-model-mean.gguf"))
    encoder_rerank(tmp)


def encoder_rerank(tmp):
    """Encoder rerankers against the reference, the first row through W tanh(P h + p) + b:
    bge-reranker's layout (pshard-mkmodel --arch bert --rerank --token-types 1), the pair
    framed "<s> query </s></s> document </s>" as RoBERTa's tokenizer frames it (each text
    tokenized alone); and, given the shared bge vocabulary, a BERT cross-encoder of two
    token types (ms-marco-MiniLM's layout), framed "[CLS] query [SEP] document [SEP]" with
    the document and its [SEP] as token type 1, as BERT's tokenizer marks a pair."""
    def check(name, model, ids, types):
        query, document = "Which passage says how a model is pooled?", PROMPT
        got = embed(model, [], text=query + "\t" + document)
        if got is None:
            return
        want = ids(query, document)
        g = GgufModel(model)
        h = np.array(Reference(g).final_states(want, types=types(want)))[0]
        pooled = np.tanh(g.tensor("cls.weight") @ h + g.tensor("cls.bias"))
        score = float((g.tensor("cls.output.weight") @ pooled + g.tensor("cls.output.bias"))[0])
        worst = abs(got["embedding"][0] - score)
        if got["n_tokens"] != len(want) or got["pooling"] != "rank" or worst > TOL:
            fail(f"{name}: pshard {got['n_tokens']} tokens, score {got['embedding']}; the "
                 f"reference {len(want)} tokens, score {score:.7f}")
        else:
            print(f"{name}: {len(want)} tokens, score within {worst:.1e} of the float64 reference")
        # The head runs on the host after pooling: the model plans, and emu scores the same.
        sched = model + ".pshard"
        p = run(compile_bin, "-m", model, "--profile", profile, "-o", sched, "--budgets", "4M",
                "--tiers", ENCODER_PASSES[1], "-c", "256", "-q", "--kernel-workspace", "0",
                "--strategy", "gpu-only", "--kv-type", "f32")
        emu = embed(model, [], "-s", sched, "--backend", "emu", "--vram", "4M",
                    text=query + "\t" + document) if p.returncode == 0 else None
        if emu != got:
            fail(f"{name}: under a gpu-only schedule on emu: {p.stderr} {emu} != {got}")
        return score

    def alone(model, text):
        return json.loads(run(tokenize_bin, "-m", model, "-p", text, "--ids", "--no-bos",
                              "--no-parse-special").stdout)
    model = os.path.join(tmp, "bert-rerank.gguf")
    p = run(mkmodel, "-o", model, *SHAPE, "--arch", "bert", "--rerank", "--token-types", "1")
    if p.returncode != 0:
        fail(f"bert-rerank: pshard-mkmodel failed: {p.stderr}")
        return
    bos, eos = 1, 2  # the generated vocabulary's <s> and </s>
    check("bert-rerank (one token type)", model,
          lambda q, d: [bos] + alone(model, q) + [eos, eos] + alone(model, d) + [eos],
          lambda ids: None)
    vocab = os.path.join(shared, "vocab", "ggml-vocab-bert-bge.gguf") if shared else ""
    if not os.path.exists(vocab):
        print("SKIP the two-type cross-encoder: no shared bge vocabulary (SHARED_DIR)")
        return
    model = os.path.join(tmp, "bert-cross-encoder.gguf")
    p = run(mkmodel, "-o", model, *SHAPE, "--arch", "bert", "--rerank", "--tokenizer-from", vocab)
    if p.returncode != 0:
        fail(f"bert cross-encoder: pshard-mkmodel failed: {p.stderr}")
        return
    cls, sep = 101, 102
    state = {}

    def framed(q, d):
        state["first"] = len(alone(model, q)) + 2  # [CLS] query [SEP]: type 0
        return [cls] + alone(model, q) + [sep] + alone(model, d) + [sep]
    score = check("bert cross-encoder (two token types)", model, framed,
                  lambda ids: [0] * state["first"] + [1] * (len(ids) - state["first"]))
    # The types matter: with every token type 0 the reference scores the pair otherwise.
    g = GgufModel(model)
    ids = framed("Which passage says how a model is pooled?", PROMPT)
    h0 = np.array(Reference(g).final_states(ids))[0]
    untyped = float((g.tensor("cls.output.weight") @ np.tanh(g.tensor("cls.weight") @ h0 +
                                                             g.tensor("cls.bias")) +
                     g.tensor("cls.output.bias"))[0])
    if score is not None and abs(untyped - score) < 1e-4:
        fail(f"bert cross-encoder: type-0 scoring {untyped:.6f} is no different ({score:.6f})")


def encoder_defaults(tmp, model):
    """pshard-compile on an encoder without -c or --tiers plans its whole position table
    (256) as the context and as the largest tier, so any text it holds is one pass; the
    MLIR pipeline writes the same artifact byte for byte."""
    sched = os.path.join(tmp, "bert-defaults.pshard")
    p = run(compile_bin, "-m", model, "--profile", profile, "-o", sched, "--budgets", "0,4M",
            "--kernel-workspace", "0", "--kv-type", "f32")
    if p.returncode != 0 or "context 256" not in p.stdout or "\n                      256 " not in p.stdout:
        fail(f"encoder defaults: context and largest tier 256 expected: {p.stderr} {p.stdout[:600]}")
        return
    mlir = os.path.join(tmp, "bert-defaults-mlir.pshard")
    q = run(compile_bin, "-m", model, "--profile", profile, "-o", mlir, "--budgets", "0,4M",
            "--kernel-workspace", "0", "--kv-type", "f32", "--pipeline", "mlir")
    if q.returncode != 0 and "MLIR part" in q.stderr:
        print("SKIP --pipeline mlir: this build has no MLIR compiler")
    elif q.returncode != 0 or open(mlir, "rb").read() != open(sched, "rb").read():
        fail(f"encoder defaults: the MLIR pipeline's artifact differs from the direct one: {q.stderr}")
    cpu = embed(model, [])
    emu = embed(model, [], "-s", sched, "--backend", "emu", "--vram", "4M")
    if cpu is None or emu != cpu:
        fail("encoder defaults: emu under the default schedule differs from the cpu")
    # -b asks for passes of 16, but an encoder's pass holds its context: the same text, whole.
    if embed(model, ["-b", "16"]) != cpu:
        fail("encoder defaults: -b 16 did not embed the 126-token text in one pass")
    else:
        print(f"encoder defaults: context 256, tiers up to 256; {cpu['n_tokens']} tokens in one pass")


def several(model):
    """Texts one a line (llama-embedding's --embd-separator): a JSON array of the one-text
    answers, each equal to that text embedded alone."""
    texts = [PROMPT, "A second, shorter text.", "Third"]
    p = run(run_bin, "-m", model, "-p", "\n".join(texts) + "\n", "--embedding", "--json", "-t", "2",
            "-ctk", "f32", "-ctv", "f32")
    got = json.loads(p.stdout) if p.returncode == 0 else None
    alone = []
    for t in texts:
        q = run(run_bin, "-m", model, "-p", t, "--embedding", "--json", "-t", "2", "-ctk", "f32",
                "-ctv", "f32")
        alone.append(json.loads(q.stdout) if q.returncode == 0 else None)
    if got != alone:
        fail(f"several texts: {p.stderr} {str(got)[:200]} != {str(alone)[:200]}")
    else:
        print(f"several texts: {len(got)} answers, each the text's alone")
    whole = run(run_bin, "-m", model, "-p", "\n".join(texts), "--embedding", "--json", "-t", "2",
                "-ctk", "f32", "-ctv", "f32", "--embd-separator", "")
    if whole.returncode != 0 or not isinstance(json.loads(whole.stdout), dict):
        fail(f"--embd-separator '': one text expected: {whole.stderr} {whole.stdout[:200]}")


with tempfile.TemporaryDirectory() as d:
    main(d)
print("embedding reference:", "ok" if failures == 0 else f"{failures} failures")
sys.exit(1 if failures else 0)
