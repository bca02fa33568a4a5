"""A float64 reference of the Qwen2-VL / Qwen2.5-VL / Qwen3-VL vision tower and its preprocessing,
written from the projector format's definition (runtime/vision/projector_layout.h,
runtime/vision/image.h, runtime/vision/vision_encoder.h), for tests.

  hp = VisionHParams(GgufModel("mmproj.gguf"))
  w, h = input_size(hp, 640, 480)                # the preprocessed size
  chw = preprocess(hp, rgb_uint8_hwc)            # 3 x h x w, normalised
  emb = encode(hp, model, chw)                   # (h/28 * w/28) x projection_dim
                                                 # (x (1 + DeepStack mergers) for Qwen3-VL)

Qwen3-VL's tower is written from HF's Qwen3VLVisionModel: the position table resized by
bilinear sampling at torch.linspace(0, side - 1, n) (corner-aligned), GELU's tanh form in
the blocks, the exact GELU in the mergers, DeepStack mergers over a block's output after
its FFN residual (LayerNorm over the four patches of a token together).

Windows are decided from each patch's coordinates (a mask), not by reordering tokens as
the runtime does, so the two meet only in the result.
"""
import math

import numpy as np


class VisionHParams:
    def __init__(self, model):
        m = model.meta
        self.type = m["clip.projector_type"]
        self.qwen25 = self.type == "qwen2.5vl_merger"
        self.qwen3 = self.type == "qwen3vl_merger"
        self.n_embd = m["clip.vision.embedding_length"]
        self.n_ff = m["clip.vision.feed_forward_length"]
        self.n_layer = m["clip.vision.block_count"]
        self.n_head = m["clip.vision.attention.head_count"]
        self.eps = m["clip.vision.attention.layer_norm_epsilon"]
        self.patch = m["clip.vision.patch_size"]
        self.image_size = m["clip.vision.image_size"]
        self.proj_dim = m["clip.vision.projection_dim"]
        self.mean = np.array(m["clip.vision.image_mean"], np.float64)
        self.std = np.array(m["clip.vision.image_std"], np.float64)
        self.wa = m.get("clip.vision.n_wa_pattern", 0)
        self.window = m.get("clip.vision.window_size", 112)
        self.act = "silu" if m.get("clip.use_silu") else "gelu" if m.get("clip.use_gelu") else "quick_gelu"
        if self.qwen3:
            self.act = "gelu_tanh"


def smart_resize(hp, width, height, min_tokens, max_tokens):
    """Hugging Face's smart_resize (Qwen2-VL's image processor) with factor = the merged
    patch, min_pixels / max_pixels = the token limits' pixels; a sliver (which Hugging
    Face refuses) keeps one token across and its long side is cut to the limit."""
    f = 2 * hp.patch
    h_bar = max(f, round(height / f) * f)
    w_bar = max(f, round(width / f) * f)
    most, least = max_tokens * f * f, max(1, min_tokens) * f * f
    if h_bar * w_bar > most:
        beta = math.sqrt((height * width) / most)
        h_bar = max(f, math.floor(height / beta / f) * f)
        w_bar = max(f, math.floor(width / beta / f) * f)
    elif h_bar * w_bar < least:
        beta = math.sqrt(least / (height * width))
        h_bar = math.ceil(height * beta / f) * f
        w_bar = math.ceil(width * beta / f) * f
    if (h_bar // f) * (w_bar // f) > max_tokens:
        if w_bar >= h_bar:
            w_bar = max(1, max_tokens // (h_bar // f)) * f
        else:
            h_bar = max(1, max_tokens // (w_bar // f)) * f
    return w_bar, h_bar


def input_size(hp, width, height, min_tokens=0, max_tokens=0):
    """Longer side capped (scale in float32, as the format's tools compute it), each side
    truncated, then rounded up to a multiple of the merged patch; with a token limit,
    smart_resize's size."""
    if max_tokens:
        return smart_resize(hp, width, height, min_tokens, max_tokens)
    cap = np.float32(hp.image_size)
    scale = min(np.float32(1.0), cap / np.float32(width), cap / np.float32(height))
    m = 2 * hp.patch

    def side(v):
        t = int(np.float32(v) * np.float32(scale))
        return max(m, (t + m - 1) // m * m)
    return side(width), side(height)


def _cubic(pm, p0, p1, p2, t):
    d0, d2, d3 = pm - p0, p1 - p0, p2 - p0
    a1 = -d0 / 3 + d2 - d3 / 6
    a2 = d0 / 2 + d2 / 2
    a3 = -d0 / 6 - d2 / 2 + d3 / 6
    return p0 + a1 * t + a2 * t * t + a3 * t * t * t


def resize_bicubic(img, tw, th):
    """img: h x w x 3 uint8. The cubic through the samples at -1, 0, 1, 2 (edges clamped),
    along x then y; sample positions (source/target) * index in float32."""
    ny, nx = img.shape[:2]
    src = img.astype(np.float64)
    tx, ty = np.float32(nx) / np.float32(tw), np.float32(ny) / np.float32(th)
    fx = np.array([np.float32(tx) * np.float32(j) for j in range(tw)], np.float32)
    fy = np.array([np.float32(ty) * np.float32(i) for i in range(th)], np.float32)
    x0, y0 = fx.astype(np.int64), fy.astype(np.int64)
    dx, dy = (fx - x0).astype(np.float64), (fy - y0).astype(np.float64)
    cols = [np.clip(x0 + o, 0, nx - 1) for o in (-1, 0, 1, 2)]
    rows = [np.clip(y0 + o, 0, ny - 1) for o in (-1, 0, 1, 2)]
    horiz = [_cubic(*[src[r][:, c] for c in cols], dx[None, :, None]) for r in rows]
    v = _cubic(*horiz, dy[:, None, None])
    return np.clip(np.floor(v + 0.5), 0, 255)  # round half away from zero (values >= -0.5)


def preprocess(hp, img, min_tokens=0, max_tokens=0):
    h, w = img.shape[:2]
    tw, th = input_size(hp, w, h, min_tokens, max_tokens)
    px = resize_bicubic(img, tw, th)
    return ((px / 255.0 - hp.mean) / hp.std).transpose(2, 0, 1)


def _norm(hp, x, w, b):
    if hp.qwen25:
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + hp.eps) * w
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + hp.eps) * w + b


_erf = np.vectorize(math.erf)


def _gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def _act(hp, x):
    if hp.act == "silu":
        return x / (1.0 + np.exp(-x))
    if hp.act == "gelu":
        return _gelu(x)
    if hp.act == "gelu_tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    return x / (1.0 + np.exp(-1.702 * x))


def _rope2d(x, py, px, n_head):
    """x: n x C. Pairs (j, j + D/2); the first D/4 pairs rotate by the row, the others by
    the column, frequencies 10000^(-2k/(D/2)) with k counted inside each quarter."""
    n, c = x.shape
    d = c // n_head
    q = d // 4
    k = np.arange(d // 2) % q
    freq = 10000.0 ** (-2.0 * k / (d / 2))
    pos = np.where(np.arange(d // 2)[None, :] < q, py[:, None], px[:, None])
    ang = pos * freq[None, :]
    cos, sin = np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    h = x.reshape(n, n_head, d)
    a, b = h[..., :d // 2], h[..., d // 2:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], -1).reshape(n, c)


def _positions(table, py, px, gy, gx):
    """Qwen3-VL: the side x side table sampled bilinearly at linspace(0, side - 1, n)."""
    side = int(round(math.sqrt(table.shape[0])))
    grid = table.reshape(side, side, -1)

    def sample(i, n):
        f = np.float64(i) * (side - 1) / (n - 1) if n > 1 else np.zeros_like(i)
        lo = np.floor(f).astype(np.int64)
        return lo, np.minimum(lo + 1, side - 1), f - lo
    y0, y1, dy = sample(py, gy)
    x0, x1, dx = sample(px, gx)
    dy, dx = dy[:, None], dx[:, None]
    return ((1 - dy) * (1 - dx) * grid[y0, x0] + (1 - dy) * dx * grid[y0, x1] +
            dy * (1 - dx) * grid[y1, x0] + dy * dx * grid[y1, x1])


def encode(hp, model, chw):
    t = model.tensor
    p, c = hp.patch, hp.n_embd
    _, height, width = chw.shape
    gx, gy = width // p, height // p
    # Patches in 2x2-block order: blocks in raster order, the block's four inside.
    coords = [(2 * by + q // 2, 2 * bx + q % 2)
              for by in range(gy // 2) for bx in range(gx // 2) for q in range(4)]
    py = np.array([a for a, _ in coords], np.float64)
    px = np.array([b for _, b in coords], np.float64)
    kernel = (t("v.patch_embd.weight") + t("v.patch_embd.weight.1")).reshape(c, 3 * p * p)
    rows = np.stack([chw[:, int(y) * p:(int(y) + 1) * p, int(x) * p:(int(x) + 1) * p].reshape(-1)
                     for y, x in zip(py, px)])
    h = rows @ kernel.T
    if hp.qwen3:
        h = h + t("v.patch_embd.bias") + _positions(t("v.position_embd.weight").reshape(-1, c),
                                                    py, px, gy, gx)
    deepstack = []
    g = hp.window // (2 * p)
    win = (py // 2 // g) * 100000 + (px // 2 // g) if hp.wa > 0 else np.zeros_like(py)
    same_window = win[:, None] == win[None, :]
    d = c // hp.n_head

    def lin(name, x):
        return x @ t(name + ".weight").T + t(name + ".bias")

    def norm(name, x):
        return _norm(hp, x, t(name + ".weight"), t(name + ".bias") if not hp.qwen25 else None)

    for il in range(hp.n_layer):
        b = f"v.blk.{il}."
        x = norm(b + "ln1", h)
        if hp.qwen3:
            q, k, v = np.split(lin(b + "attn_qkv", x), 3, axis=1)
        else:
            q, k, v = (lin(b + m, x) for m in ("attn_q", "attn_k", "attn_v"))
        q, k = _rope2d(q, py, px, hp.n_head), _rope2d(k, py, px, hp.n_head)
        full = hp.wa <= 0 or (il + 1) % hp.wa == 0
        out = np.empty_like(q)
        for head in range(hp.n_head):
            sl = slice(head * d, (head + 1) * d)
            s = q[:, sl] @ k[:, sl].T / math.sqrt(d)
            if not full:
                s = np.where(same_window, s, -np.inf)
            s = np.exp(s - s.max(-1, keepdims=True))
            out[:, sl] = (s / s.sum(-1, keepdims=True)) @ v[:, sl]
        h = h + lin(b + "attn_out", out)
        x = norm(b + "ln2", h)
        if hp.qwen25:
            f = _act(hp, lin(b + "ffn_gate", x)) * lin(b + "ffn_up", x)
        else:
            f = _act(hp, lin(b + "ffn_up", x))
        h = h + lin(b + "ffn_down", f)
        ds = f"v.deepstack.{il}."
        if model.has(ds + "fc1.weight"):
            x = norm(ds + "norm", h.reshape(-1, 4 * c))
            deepstack.append(lin(ds + "fc2", _gelu(lin(ds + "fc1", x))))
    merged = norm("v.post_ln", h).reshape(-1, 4 * c)
    return np.concatenate([lin("mm.2", _gelu(lin("mm.0", merged)))] + deepstack, axis=1)
