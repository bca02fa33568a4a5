"""Reading and writing small all-F32 GGUF files with numpy, for the tools and tests that
build model variants (tools/make-wide-twin.py, tests/tools/lora_cli_test.py): the
metadata kept as raw key-value bytes (so every key survives untouched), integer keys
replaceable, the tensors as float32 arrays.

    meta, tensors = read("model.gguf")           # meta: [(key, type, raw bytes)]
    tensors["blk.0.attn_q.weight"] += delta       # shape (n_out, n_in)
    write("out.gguf", meta, tensors)
"""
import os
import struct

import numpy as np

ALIGN = 32
_SIZES = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


class _Reader:
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
        if t == 8:
            self.s()
        elif t == 9:
            et, n = self.u("I"), self.u("Q")
            if et in _SIZES:
                self.o += _SIZES[et] * n
            else:
                for _ in range(n):
                    self.skip_value(et)
        else:
            self.o += _SIZES[t]


def string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value_bytes):
    """One metadata entry as raw bytes: key, GGUF value type id, encoded value."""
    return string(key) + struct.pack("<I", vtype) + value_bytes


def read(path):
    """(metadata [(key, type, raw entry bytes)], {name: float32 array (rows, row length)});
    every tensor must be F32."""
    data = open(path, "rb").read()
    r = _Reader(data)
    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    r.o = 4
    r.u("I")
    n_tensors, n_kv = r.u("Q"), r.u("Q")
    meta = []
    for _ in range(n_kv):
        start = r.o
        key = r.s()
        t = r.u("I")
        r.skip_value(t)
        meta.append((key, t, data[start:r.o]))
    infos = []
    for _ in range(n_tensors):
        name = r.s()
        dims = [r.u("Q") for _ in range(r.u("I"))]
        t, off = r.u("I"), r.u("Q")
        if t != 0:
            raise ValueError(f"{path}: tensor {name} is not F32")
        infos.append((name, dims, off))
    base = (r.o + ALIGN - 1) // ALIGN * ALIGN
    tensors = {}
    for name, dims, off in infos:
        n = int(np.prod(dims))
        tensors[name] = np.frombuffer(data, np.float32, n, base + off).reshape(
            list(reversed(dims))).copy()
    return meta, tensors


def int_value(entry):
    """An integer metadata entry's value."""
    key, t, raw = entry
    fmt = {4: "I", 5: "i", 10: "Q", 11: "q"}[t]
    return struct.unpack_from("<" + fmt, raw, len(string(key)) + 4)[0]


def with_int(entry, value):
    """The entry with another integer value, its type kept."""
    key, t, _ = entry
    fmt = {4: "I", 5: "i", 10: "Q", 11: "q"}[t]
    return key, t, kv(key, t, struct.pack("<" + fmt, value))


def write(path, meta, tensors):
    """GGUF v3 of `meta`'s entries and the F32 `tensors` (name -> array), written to a
    temporary name and renamed."""
    header = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(meta))
    header += b"".join(raw for _, _, raw in meta)
    offset, info = 0, b""
    for name, w in tensors.items():
        info += string(name) + struct.pack("<I", w.ndim)
        info += b"".join(struct.pack("<Q", d) for d in reversed(w.shape))
        info += struct.pack("<IQ", 0, offset)
        offset += (w.nbytes + ALIGN - 1) // ALIGN * ALIGN
    head = header + info
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(head + b"\0" * ((-len(head)) % ALIGN))
        for w in tensors.values():
            b = np.ascontiguousarray(w, dtype=np.float32).tobytes()
            f.write(b + b"\0" * ((-len(b)) % ALIGN))
    os.replace(tmp, path)
