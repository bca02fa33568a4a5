"""An independent float64 forward pass of the BERT encoder (Devlin et al. 2018; Hugging
Face's BertModel), of Nomic Embed's NomicBert (BERT with rotary positions and a SwiGLU
FFN, Nussbaum et al. 2024) and of ModernBERT (Warner et al. 2024; Hugging Face's
ModernBertModel), written from their published definitions over the tensors llama.cpp's
converter names, for checking pshard's embeddings.

The embedding is the token's row plus token type 0's plus the position's, LayerNormed;
each layer runs attention over the whole text (no mask: a query sees later tokens too),
adds it to its input and LayerNorms the sum, then the FFN (up, exact GELU, down, biases
throughout) added and LayerNormed likewise. No final norm and no head: the last layer's
rows are what pooling reads. NomicBert: no position table; q and k rotated by NeoX RoPE
(pairs i and i + d/2, base rope.freq_base); q/k/v from one matrix; FFN
down(silu(gate x) * up x), no biases.
"""
import math

import numpy as np

_erf = np.vectorize(math.erf)


def layer_norm(x, w, b, eps):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


def softmax_rows(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def rope_neox(x, rotary):
    """x (positions, heads, hd) rotated in halves: (x[i], x[i + hd/2]) by position * theta_i."""
    cos, sin = rotary
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def bert_states(m, ids, types=None):
    """The last layer's hidden state of every position of `ids` (a GgufModel `m`); `types`
    each position's token type (all 0 when not given)."""
    meta = m.meta
    a = meta["general.architecture"] + "."
    eps = meta.get(a + "attention.layer_norm_epsilon", 1e-12)
    n_head = meta[a + "attention.head_count"]
    n_head_kv = meta.get(a + "attention.head_count_kv", n_head)
    n_embd = meta[a + "embedding_length"]
    hd = meta.get(a + "attention.key_length", n_embd // n_head)
    t = m.tensor
    n = len(ids)
    h = t("token_embd.weight")[ids]
    if m.has("token_types.weight"):
        h = h + t("token_types.weight")[types if types is not None else [0] * n]
    if m.has("position_embd.weight"):
        h = h + t("position_embd.weight")[:n]
    rotary = None
    if not m.has("position_embd.weight"):  # NomicBert: RoPE on q and k
        base = meta.get(a + "rope.freq_base", 10000.0)
        inv = base ** (-np.arange(0, hd, 2) / hd)
        ang = np.arange(n)[:, None] * inv[None, :]
        rotary = (np.cos(ang)[:, None, :], np.sin(ang)[:, None, :])
    h = layer_norm(h, t("token_embd_norm.weight"), t("token_embd_norm.bias"), eps)
    group = n_head // n_head_kv
    for il in range(meta[a + "block_count"]):
        p = f"blk.{il}."
        def lin(x, name):
            y = x @ t(p + name + ".weight").T
            return y + t(p + name + ".bias") if m.has(p + name + ".bias") else y
        if m.has(p + "attn_qkv.weight"):
            qkv = lin(h, "attn_qkv")
            nq, nkv = n_head * hd, n_head_kv * hd
            q, k, v = qkv[:, :nq], qkv[:, nq:nq + nkv], qkv[:, nq + nkv:]
        else:
            q, k, v = lin(h, "attn_q"), lin(h, "attn_k"), lin(h, "attn_v")
        q = q.reshape(n, n_head, hd)
        k = k.reshape(n, n_head_kv, hd)
        v = v.reshape(n, n_head_kv, hd)
        if rotary is not None:
            q, k = rope_neox(q, rotary), rope_neox(k, rotary)
        out = np.zeros((n, n_head, hd))
        for head in range(n_head):
            kv = head // group
            att = softmax_rows(q[:, head] @ k[:, kv].T / math.sqrt(hd))
            out[:, head] = att @ v[:, kv]
        h = layer_norm(h + lin(out.reshape(n, -1), "attn_output"),
                       t(p + "attn_output_norm.weight"), t(p + "attn_output_norm.bias"), eps)
        if m.has(p + "ffn_gate.weight"):
            g = lin(h, "ffn_gate")
            f = lin(g / (1.0 + np.exp(-g)) * lin(h, "ffn_up"), "ffn_down")
        else:
            f = lin(gelu(lin(h, "ffn_up")), "ffn_down")
        h = layer_norm(h + f, t(p + "layer_output_norm.weight"),
                       t(p + "layer_output_norm.bias"), eps)
    return list(h)


def modernbert_states(m, ids):
    """ModernBERT's last hidden states after its final norm: the token's row LayerNormed
    (no biases anywhere), then pre-norm blocks (layer 0 without its attention norm) of
    attention both ways — NeoX RoPE with base rope.freq_base on the global layers 0, 3, 6,
    ... (every attention.sliding_window_pattern-th) and rope.freq_base_swa on the others,
    which see only the keys within sliding_window // 2 positions of the query — and a GeGLU
    FFN, gelu_exact(first half of ffn_up x) * second half, then the final LayerNorm."""
    meta = m.meta
    a = meta["general.architecture"] + "."
    eps = meta.get(a + "attention.layer_norm_epsilon", 1e-5)
    n_head = meta[a + "attention.head_count"]
    n_embd = meta[a + "embedding_length"]
    hd = n_embd // n_head
    window = meta.get(a + "attention.sliding_window", 0)
    period = meta.get(a + "attention.sliding_window_pattern", 3)
    t = m.tensor
    n = len(ids)
    zero = np.zeros(n_embd)

    def rotary(base):
        ang = np.arange(n)[:, None] * (base ** (-np.arange(0, hd, 2) / hd))[None, :]
        return np.cos(ang)[:, None, :], np.sin(ang)[:, None, :]
    rot_global = rotary(meta.get(a + "rope.freq_base", 10000.0))
    rot_local = rotary(meta.get(a + "rope.freq_base_swa", 10000.0))
    h = layer_norm(t("token_embd.weight")[ids], t("token_embd_norm.weight"), zero, eps)
    pos = np.arange(n)
    for il in range(meta[a + "block_count"]):
        p = f"blk.{il}."
        local = window > 0 and il % period != 0
        x = h if il == 0 else layer_norm(h, t(p + "attn_norm.weight"), zero, eps)
        qkv = x @ t(p + "attn_qkv.weight").T
        q, k, v = (qkv[:, i * n_embd:(i + 1) * n_embd].reshape(n, n_head, hd) for i in range(3))
        rot = rot_local if local else rot_global
        q, k = rope_neox(q, rot), rope_neox(k, rot)
        seen = np.abs(pos[:, None] - pos[None, :]) <= window // 2 if local else np.ones((n, n), bool)
        out = np.zeros((n, n_head, hd))
        for head in range(n_head):
            scores = np.where(seen, q[:, head] @ k[:, head].T / math.sqrt(hd), -np.inf)
            out[:, head] = softmax_rows(scores) @ v[:, head]
        h = h + out.reshape(n, -1) @ t(p + "attn_output.weight").T
        up = layer_norm(h, t(p + "ffn_norm.weight"), zero, eps) @ t(p + "ffn_up.weight").T
        ff = up.shape[1] // 2
        h = h + (gelu(up[:, :ff]) * up[:, ff:]) @ t(p + "ffn_down.weight").T
    return list(layer_norm(h, t("output_norm.weight"), zero, eps))
