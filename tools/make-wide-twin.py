#!/usr/bin/env python3
"""A K-times-wide twin of a small F32 Llama GGUF that computes exactly the same function
(the construction of shared/models' stories260K-x4-F32): the residual stream holds K
copies of the original's; attention heads, KV heads and FFN units are K block-diagonal
copies; embedding rows and norm weights repeat K times; the output matrix repeats K
times divided by K, so the logits are the original's. Its weights are K^2 times the
original's bytes, so the original drafts for it perfectly while costing a fraction:
what a family's small model drafting for its large one looks like, built from a file
here (benchmarks of speculative decoding: tools/bench-speculative*.py).

  /usr/bin/python3 tools/make-wide-twin.py shared/models/stories260K.gguf 32 /tmp/twin32.gguf
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_f32  # noqa: E402

WIDENED = {"embedding_length", "feed_forward_length", "attention.head_count",
           "attention.head_count_kv"}


def widen(name, w, k):
    if name.endswith("_norm.weight"):
        return np.tile(w, k)
    if name == "token_embd.weight":  # (n_vocab, n_embd): rows repeated
        return np.tile(w, (1, k))
    if name == "output.weight":  # logits: the sum of k copies / k
        return np.tile(w, (1, k)) / k
    return np.kron(np.eye(k, dtype=np.float32), w)  # block-diagonal copies


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, k, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    meta, tensors = gguf_f32.read(src)
    arch = next((raw for key, _, raw in meta if key == "general.architecture"), b"")
    if not arch.endswith(b"llama"):
        sys.exit(f"{src}: this builds twins of llama models")
    meta = [gguf_f32.with_int(e, gguf_f32.int_value(e) * k)
            if e[0].split(".", 1)[-1] in WIDENED and e[1] in (4, 5, 10) else e for e in meta]
    out = {name: widen(name, w, k).astype(np.float32) for name, w in tensors.items()}
    gguf_f32.write(dst, meta, out)
    print(f"{dst}: {k}x wide, {sum(w.nbytes for w in out.values()) / 2**20:.1f} MiB of weights")


if __name__ == "__main__":
    main()
