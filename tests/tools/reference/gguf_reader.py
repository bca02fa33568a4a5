"""A minimal GGUF reader for the float64 reference (F32, F16, Q8_0 and MXFP4 tensors).

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
_F32, _F16, _Q8_0, _MXFP4 = 0, 1, 8, 39
# MXFP4's codes: E2M1 values, doubled (so the block's scale is halved).
_MXFP4_VALUES = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12], np.float64)


def _q8_0(data, off, count):
    """Blocks of 32: f16 scale d, 32 int8 q; x = d * q."""
    blocks = np.frombuffer(data, np.uint8, count // 32 * 34, off).reshape(-1, 34)
    d = blocks[:, :2].copy().view(np.float16).astype(np.float64)
    q = blocks[:, 2:].copy().view(np.int8).astype(np.float64)
    return (d * q).reshape(-1)


def _mxfp4(data, off, count):
    """Blocks of 32: u8 exponent e, 16 bytes of nibbles (value j < 16 the low nibble of byte
    j, value j + 16 its high one); x = table[nibble] * 2^(e - 128)."""
    blocks = np.frombuffer(data, np.uint8, count // 32 * 17, off).reshape(-1, 17)
    scale = np.ldexp(1.0, blocks[:, 0].astype(np.int64) - 128)[:, None]
    qs = blocks[:, 1:]
    codes = np.concatenate([qs & 0x0F, qs >> 4], axis=1)
    return (_MXFP4_VALUES[codes] * scale).reshape(-1)


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
        elif t == _Q8_0:
            a = _q8_0(self.data, off, count)
        elif t == _MXFP4:
            a = _mxfp4(self.data, off, count)
        else:
            raise ValueError(f"{name}: ggml type {t}; the reference reads F32, F16, Q8_0 and MXFP4")
        return a.astype(np.float64).reshape(list(reversed(dims)))
