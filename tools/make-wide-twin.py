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
import struct
import sys

import numpy as np

ALIGN = 32
WIDENED = {"embedding_length", "feed_forward_length", "attention.head_count",
           "attention.head_count_kv"}


class Reader:
    def __init__(self, data):
        self.d, self.o = data, 0

    def u(self, fmt):
        v = struct.unpack_from("<" + fmt, self.d, self.o)
        self.o += struct.calcsize("<" + fmt)
        return v[0]

    def s(self):
        n = self.u("Q")
        v = self.d[self.o:self.o + n].decode()
        self.o += n
        return v

    def skip_value(self, t):
        sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
        if t == 8:
            self.s()
        elif t == 9:
            et, n = self.u("I"), self.u("Q")
            if et in sizes:
                self.o += sizes[et] * n
            else:
                for _ in range(n):
                    self.skip_value(et)
        else:
            self.o += sizes[t]


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, k, dst = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    data = open(src, "rb").read()
    r = Reader(data)
    if r.d[:4] != b"GGUF":
        sys.exit(f"{src}: not a GGUF file")
    r.o = 4
    version, n_tensors, n_kv = r.u("I"), r.u("Q"), r.u("Q")
    arch, kvs = None, []
    for _ in range(n_kv):
        start = r.o
        key = r.s()
        t = r.u("I")
        vstart = r.o
        r.skip_value(t)
        raw = data[start:r.o]
        if key == "general.architecture":
            arch = data[vstart + 8:r.o].decode()
        if key.split(".", 1)[-1] in WIDENED and t in (4, 5, 10):  # an integer: times k
            fmt = {4: "I", 5: "i", 10: "Q"}[t]
            v = struct.unpack_from("<" + fmt, data, vstart)[0]
            raw = gguf_string(key) + struct.pack("<I", t) + struct.pack("<" + fmt, v * k)
        kvs.append(raw)
    if arch != "llama":
        sys.exit(f"{src}: a {arch} model; this builds twins of llama models")
    infos = []
    for _ in range(n_tensors):
        name = r.s()
        nd = r.u("I")
        dims = [r.u("Q") for _ in range(nd)]
        t, off = r.u("I"), r.u("Q")
        if t != 0:
            sys.exit(f"{src}: tensor {name} is not F32")
        infos.append((name, dims, off))
    base = (r.o + ALIGN - 1) // ALIGN * ALIGN

    def widen(name, dims, off):
        n = int(np.prod(dims))
        w = np.frombuffer(data, np.float32, n, base + off).reshape(list(reversed(dims)))
        if name.endswith("_norm.weight"):
            return np.tile(w, k)
        if name == "token_embd.weight":  # (n_vocab, n_embd): rows repeated
            return np.tile(w, (1, k))
        if name == "output.weight":  # logits: the sum of k copies / k
            return np.tile(w, (1, k)) / k
        return np.kron(np.eye(k, dtype=np.float32), w)  # block-diagonal copies

    out = [(name, widen(name, dims, off).astype(np.float32)) for name, dims, off in infos]
    header = b"GGUF" + struct.pack("<IQQ", version, len(out), len(kvs)) + b"".join(kvs)
    offset, tinfo = 0, b""
    for name, w in out:
        tinfo += gguf_string(name) + struct.pack("<I", w.ndim)
        tinfo += b"".join(struct.pack("<Q", d) for d in reversed(w.shape))
        tinfo += struct.pack("<IQ", 0, offset)
        offset += (w.nbytes + ALIGN - 1) // ALIGN * ALIGN
    head = header + tinfo
    tmp = dst + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head + b"\0" * ((-len(head)) % ALIGN))
        for _, w in out:
            f.write(w.tobytes())
            f.write(b"\0" * ((-w.nbytes) % ALIGN))
    import os
    os.replace(tmp, dst)
    print(f"{dst}: {k}x wide, {sum(w.nbytes for _, w in out) / 2**20:.1f} MiB of weights")


if __name__ == "__main__":
    main()
