#!/usr/bin/env python3
"""pshard-tokenize on the shared vocabulary-only GGUFs (SentencePiece, byte-level BPE and
WordPiece), checked against the reference ids in NAME.gguf.out, plus its output formats and errors; and pshard-run's
--no-parse-special and byte-level streaming on a tiny model with GPT-2's vocabulary.

usage: tokenize_cli_test.py BUILD_DIR SHARED_DIR [--vectors NAME [STRIDE]]
With --vectors, only the reference vectors of ggml-vocab-NAME.gguf (ctest runs one
vocabulary a test), every one or every STRIDE-th; without, everything else.
Prints 'N passed, N failed' and exits non-zero on any failure (77 when the shared
vocabularies are absent, which ctest reports as skipped).
"""
import argparse
import json
import os
import sys
import tempfile

import cli_util
from cli_util import Checks

checks = Checks()
check = checks.check


def run(*args, stdin=None):  # bytes in and out: the tests compare raw UTF-8
    return cli_util.run(*args, stdin=stdin, text=False)

parser = argparse.ArgumentParser()
parser.add_argument("build")
parser.add_argument("shared")
parser.add_argument("--vectors", nargs="+", metavar=("NAME", "STRIDE"))
args = parser.parse_args()
build, shared = args.build, args.shared
only_vectors_of = args.vectors[0] if args.vectors else None
vector_stride = int(args.vectors[1]) if args.vectors and len(args.vectors) > 1 else 1
tok_bin = os.path.join(build, "tools/pshard-tokenize/pshard-tokenize")
run_bin = os.path.join(build, "tools/pshard-run/pshard-run")
mk_bin = os.path.join(build, "tools/pshard-mkmodel/pshard-mkmodel")
vocab_dir = os.path.join(shared, "vocab")
SEPARATOR = b"\n__ggml_vocab_test__\n"


def vocab(name):
    return os.path.join(vocab_dir, f"ggml-vocab-{name}.gguf")


def vectors(name):
    with open(vocab(name) + ".inp", "rb") as f:
        inputs = f.read().split(SEPARATOR)[:-1]  # the file ends with a separator
    with open(vocab(name) + ".out") as f:
        outputs = [[int(t) for t in line.split()] for line in f.read().split("\n")]
    return inputs, outputs[: len(inputs)]


def ids_of(stdout):
    return json.loads(stdout.decode())


def reference_ids(tmp, name):
    inputs, outputs = vectors(name)
    check(f"{name} has vectors", len(inputs) > 0 and len(outputs) == len(inputs),
          f"{len(inputs)} inputs, {len(outputs)} outputs")
    if vector_stride > 1:
        print(f"{name}: every {vector_stride}th of {len(inputs)} vectors (a sanitizer build)")
    # Every pair (every STRIDE-th under the sanitizers): the test of pshard-tokenize.
    for i in range(0, len(inputs), vector_stride):
        path = os.path.join(tmp, "input.txt")
        with open(path, "wb") as f:
            f.write(inputs[i])
        p = run(tok_bin, "-m", vocab(name), "-f", path, "--ids", "--no-bos")
        ok = p.returncode == 0 and ids_of(p.stdout) == outputs[i]
        check(f"{name} vector {i}", ok, p.stderr.decode() or p.stdout.decode())


def formats():
    p = run(tok_bin, "-m", vocab("llama-spm"), "-p", "Hello world", "--show-count")
    lines = p.stdout.decode().splitlines()
    check("lines exit", p.returncode == 0, p.stderr)
    check("lines", lines[:3] == ["     1 -> '<s>'", " 15043 -> ' Hello'", "  3186 -> ' world'"], lines)
    check("show-count", lines[-1] == "Total number of tokens: 3", lines)
    p = run(tok_bin, "-m", vocab("qwen2"), "-p", "Hi \U0001F999<|im_end|>", "--json")
    out = json.loads(p.stdout.decode())
    check("json count", out["count"] == len(out["ids"]) == len(out["tokens"]), out)
    check("json special", out["ids"][-1] == 151645 and out["tokens"][-1]["piece"] == "<|im_end|>", out)
    p = run(tok_bin, "-m", vocab("gpt-2"), "-p", "\U0001F999", "--json")
    out = json.loads(p.stdout.decode())
    parts = [bytes(t["bytes"]) for t in out["tokens"] if "bytes" in t]
    check("json bytes of a split character", b"".join(parts) == "\U0001F999".encode(), out)
    p = run(tok_bin, "-m", vocab("llama-bpe"), "--stdin", "--ids", stdin="a\nb".encode())
    check("stdin", p.returncode == 0 and ids_of(p.stdout)[0] == 128000, p.stdout)


def special_tokens_and_bos():
    text = "<|im_start|>user<|im_end|>"
    parsed = ids_of(run(tok_bin, "-m", vocab("qwen2"), "-p", text, "--ids").stdout)
    plain = ids_of(run(tok_bin, "-m", vocab("qwen2"), "-p", text, "--ids",
                       "--no-parse-special").stdout)
    check("parse special", parsed[0] == 151644 and parsed[-1] == 151645, parsed)
    check("no-parse-special", 151644 not in plain and len(plain) > len(parsed), plain)
    check("qwen2 adds no BOS", parsed[0] != 151643, parsed)
    spm = ids_of(run(tok_bin, "-m", vocab("llama-spm"), "-p", "<s> not special </s>", "--ids",
                     "--no-bos").stdout)
    check("spm <s> is BOS", spm[0] == 1 and spm[-1] == 2, spm)
    p = run(tok_bin, "-m", vocab("llama-spm"), "-p", "<s>x", "--ids")
    check("double BOS warned", ids_of(p.stdout)[:2] == [1, 1] and b"two" in p.stderr, p.stderr)


def bert_cls_and_sep():
    """WordPiece: [CLS] and [SEP] around the text by default, [MASK] parsed; decoding gives
    the words back lowercased, without accents."""
    ids = ids_of(run(tok_bin, "-m", vocab("bert-bge"), "-p", "Paris is the [MASK] of Fr\u00e4nce",
                     "--ids").stdout)
    check("bert [CLS] ... [SEP]", ids[0] == 101 and ids[-1] == 102 and 103 in ids, ids)
    plain = ids_of(run(tok_bin, "-m", vocab("bert-bge"), "-p", "[MASK]", "--ids", "--no-bos",
                       "--no-parse-special").stdout)
    check("bert --no-parse-special", 103 not in plain and len(plain) == 3, plain)
    p = run(tok_bin, "-m", vocab("bert-bge"), "--decode", ", ".join(str(i) for i in ids))
    check("bert decode", p.returncode == 0 and p.stdout == b"paris is the of france\n", p.stdout)


def decode_round_trip():
    text = "Hello, y'all! \U0001F999 \u6211\u60F3 \t\n  done"
    ids = run(tok_bin, "-m", vocab("qwen2"), "-p", text, "--ids").stdout.decode().strip()
    p = run(tok_bin, "-m", vocab("qwen2"), "--decode", ids)
    check("decode round trip", p.returncode == 0 and p.stdout == (text + "\n").encode(), p.stdout)
    p = run(tok_bin, "-m", vocab("qwen2"), "--decode", ids, "--json")
    check("decode json", json.loads(p.stdout.decode())["text"] == text, p.stdout)


def errors():
    p = run(tok_bin, "-m", "/nonexistent/vocab.gguf", "-p", "x")
    check("missing file", p.returncode != 0 and b"/nonexistent/vocab.gguf" in p.stderr, p.stderr)
    p = run(tok_bin, "-m", vocab("gpt-2"))
    check("no text", p.returncode != 0 and b"-p TEXT" in p.stderr, p.stderr)
    p = run(tok_bin, "-m", vocab("gpt-2"), "--decode", "1, 50257")
    check("id out of range", p.returncode != 0 and b"50257 is out of range" in p.stderr
          and b"ids 0..50256" in p.stderr, p.stderr)
    p = run(tok_bin, "-m", vocab("gpt-2"), "--decode", "1, x2")
    check("id not a number", p.returncode != 0 and b"'x2' is not a token id" in p.stderr, p.stderr)
    p = run(tok_bin, "-m", vocab("gpt-2"), "-p", "a", "-f", "b.txt")
    check("-p with -f", p.returncode != 0, p.stderr)


def unknown_pre_tokenizer_warns(tmp):
    """GPT-2's vocabulary with tokenizer.ggml.pre renamed (same length, patched in place)."""
    with open(vocab("gpt-2"), "rb") as f:
        data = f.read()
    key = b"tokenizer.ggml.pre"
    value = (8).to_bytes(4, "little") + (5).to_bytes(8, "little") + b"gpt-2"
    at = data.find(key + value)
    check("pre key found", at > 0, "tokenizer.ggml.pre = gpt-2 not found")
    if at <= 0:
        return
    patched = os.path.join(tmp, "unknown-pre.gguf")
    with open(patched, "wb") as f:
        f.write(data.replace(key + value, key + value[:-5] + b"gpt-9", 1))
    p = run(tok_bin, "-m", patched, "-p", "Hello world", "--ids")
    check("unknown pre still tokenizes", p.returncode == 0 and ids_of(p.stdout) == [15496, 995],
          p.stdout)
    check("unknown pre warns", b'warning: tokenizer.ggml.pre "gpt-9"' in p.stderr, p.stderr)


def pshard_run_with_byte_level_vocab(tmp):
    """A tiny model with GPT-2's vocabulary through pshard-run (the C API): the prompt's
    <|endoftext|> parses (or not), and what streams out is byte for byte the decode of the
    generated ids."""
    model = os.path.join(tmp, "gpt2-tiny.gguf")
    p = run(mk_bin, "-o", model, "--n-embd", "16", "--n-layer", "1", "--n-head", "2",
            "--n-ff", "32", "--tied-output", "--tokenizer-from", vocab("gpt-2"))
    check("mkmodel with gpt-2 vocab", p.returncode == 0, p.stderr)
    if p.returncode != 0:
        return
    prompt = "<|endoftext|>Hi \U0001F999"
    args = [run_bin, "-m", model, "-p", prompt, "-n", "24", "--temp", "0", "-t", "1"]
    out = json.loads(run(*args, "--json").stdout.decode())
    check("run parses special", out["prompt_tokens"][0] == 50256, out["prompt_tokens"])
    plain = json.loads(run(*args, "--json", "--no-parse-special").stdout.decode())
    check("run --no-parse-special", 50256 not in plain["prompt_tokens"], plain["prompt_tokens"])
    streamed = run(*args).stdout
    ids = ", ".join(str(i) for i in out["generated_tokens"])
    decoded = run(tok_bin, "-m", vocab("gpt-2"), "--decode", ids).stdout
    check("streamed bytes are the decode", streamed == prompt.encode() + decoded,
          (streamed, decoded))


def main():
    if not os.path.exists(vocab("gpt-2")):
        print(f"skipped: {vocab_dir} has no vocabularies")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as tmp:
        if only_vectors_of:
            reference_ids(tmp, only_vectors_of)
            sys.exit(checks.finish())
        formats()
        special_tokens_and_bos()
        bert_cls_and_sep()
        decode_round_trip()
        errors()
        unknown_pre_tokenizer_warns(tmp)
        pshard_run_with_byte_level_vocab(tmp)
    sys.exit(checks.finish())


main()
