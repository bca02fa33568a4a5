#!/usr/bin/env python3
"""Writes tokenizer_fuzz's seed corpus: every distinct test input of the shared
vocabularies (NAME.gguf.inp, inputs separated by lines __ggml_vocab_test__), one file
each, after a first byte that the target reads as flags.

usage: tokenizer_fuzz_seeds.py SEED_DIR SHARED_DIR
"""
import glob
import hashlib
import os
import sys

seed_dir, shared = sys.argv[1], sys.argv[2]
os.makedirs(seed_dir, exist_ok=True)
inputs = set()
for path in glob.glob(os.path.join(shared, "vocab", "*.inp")):
    with open(path, "rb") as f:
        inputs.update(f.read().split(b"\n__ggml_vocab_test__\n"))
for text in inputs:
    for flags in (b"\x00", b"\x01"):
        seed = flags + text
        name = hashlib.sha1(seed).hexdigest()
        with open(os.path.join(seed_dir, name), "wb") as f:
            f.write(seed)
print(f"{2 * len(inputs)} seeds in {seed_dir}")
