"""An independent float64 forward pass of the BERT encoder (Devlin et al. 2018; Hugging
Face's BertModel), written from its published definition over the tensors llama.cpp's
converter names, for checking pshard's embeddings.

The embedding is the token's row plus token type 0's plus the position's, LayerNormed;
each layer runs attention over the whole text (no mask: a query sees later tokens too),
adds it to its input and LayerNorms the sum, then the FFN (up, exact GELU, down, biases
throughout) added and LayerNormed likewise. No final norm and no head: the last layer's
rows are what pooling reads.
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


def bert_states(m, ids):
    """The last layer's hidden state of every position of `ids` (a GgufModel `m`)."""
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
        h = h + t("token_types.weight")[0]
    h = h + t("position_embd.weight")[:n]
    h = layer_norm(h, t("token_embd_norm.weight"), t("token_embd_norm.bias"), eps)
    group = n_head // n_head_kv
    for il in range(meta[a + "block_count"]):
        p = f"blk.{il}."
        lin = lambda x, name: x @ t(p + name + ".weight").T + t(p + name + ".bias")
        q = lin(h, "attn_q").reshape(n, n_head, hd)
        k = lin(h, "attn_k").reshape(n, n_head_kv, hd)
        v = lin(h, "attn_v").reshape(n, n_head_kv, hd)
        out = np.zeros((n, n_head, hd))
        for head in range(n_head):
            kv = head // group
            att = softmax_rows(q[:, head] @ k[:, kv].T / math.sqrt(hd))
            out[:, head] = att @ v[:, kv]
        h = layer_norm(h + lin(out.reshape(n, -1), "attn_output"),
                       t(p + "attn_output_norm.weight"), t(p + "attn_output_norm.bias"), eps)
        f = lin(gelu(lin(h, "ffn_up")), "ffn_down")
        h = layer_norm(h + f, t(p + "layer_output_norm.weight"),
                       t(p + "layer_output_norm.bias"), eps)
    return list(h)
