"""A minimal GGUF reader for the float64 reference (F32 and F16 tensors only).

Layout (little-endian), as in runtime/gguf/gguf_file.h:
  "GGUF" | u32 version | u64 n_tensors | u64 n_kv
  n_kv x (string key, u32 type, value)        string = u64 length + bytes
  n_tensors x (string name, u32 n_dims, n_dims x u64 dims, u32 ggml type, u64 offset)
  padding to general.alignment (default 32), then the data section.
"""
import struct

import numpy as np

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
            10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_F32, _F16 = 0, 1


class GgufModel:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        self.pos = 0
        if self.data[:4] != b"GGUF":
            raise ValueError(f"{path}: not a GGUF file")
        self.pos = 4
        self.version = self._scalar("<I")
        n_tensors, n_kv = self._scalar("<Q"), self._scalar("<Q")
        self.meta = {}
        for _ in range(n_kv):
            key = self._string()
            self.meta[key] = self._value(self._scalar("<I"))
        infos = []
        for _ in range(n_tensors):
            name = self._string()
            dims = [self._scalar("<Q") for _ in range(self._scalar("<I"))]
            infos.append((name, dims, self._scalar("<I"), self._scalar("<Q")))
        align = self.meta.get("general.alignment", 32)
        start = (self.pos + align - 1) // align * align
        self.tensors = {name: (dims, t, start + off) for name, dims, t, off in infos}

    def _scalar(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def _string(self):
        n = self._scalar("<Q")
        s = self.data[self.pos:self.pos + n].decode("utf-8", errors="replace")
        self.pos += n
        return s

    def _value(self, t):
        if t == _STRING:
            return self._string()
        if t == _ARRAY:
            et, n = self._scalar("<I"), self._scalar("<Q")
            return [self._value(et) for _ in range(n)]
        return self._scalar(_SCALARS[t])

    def has(self, name):
        return name in self.tensors

    def tensor(self, name):
        """The tensor as float64, numpy shape reversed from GGUF dims (rows, cols)."""
        dims, t, off = self.tensors[name]
        count = int(np.prod(dims))
        if t == _F32:
            a = np.frombuffer(self.data, np.float32, count, off)
        elif t == _F16:
            a = np.frombuffer(self.data, np.float16, count, off)
        else:
            raise ValueError(f"{name}: ggml type {t}; the reference reads F32 and F16 only")
        return a.astype(np.float64).reshape(list(reversed(dims)))
