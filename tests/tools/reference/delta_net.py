"""Gated DeltaNet, the linear attention of Qwen3-Next (Hugging Face's Qwen3NextGatedDeltaNet,
its recurrent form), in float64 from the GGUF tensors alone.

Per token: x = RMSNorm(h); the mixed stream attn_qkv @ x (q of the k heads, k of the k
heads, v of the v heads) passes a causal depthwise conv (ssm_conv1d, its last tap on the
token) and SiLU; q and k are L2-normalised per head, q scaled by 1/sqrt(d_k); v head h reads
k head h // (n_v / n_k). ssm_ba @ x holds per k head its v heads' b, then their a;
beta = sigmoid(b), g = softplus(a + dt_bias) * ssm_a (ssm_a = -exp(A_log)). Each v head's
state S (d_k x d_v): S *= exp(g); S += k (x) ((v - S^T k) beta); out = S^T q. The output is
RMS-normed per head by ssm_norm, times silu(attn_gate @ x), through ssm_out, added to h.
Qwen3.5 (qwen35, qwen35moe) stores b and a as ssm_beta @ x and ssm_alpha @ x, and its v heads
tiled over the k heads: v head h reads k head h % n_k.
"""
import math

import numpy as np


def _l2(x, eps):
    return x / max(math.sqrt(float(x @ x)), eps)


def delta_net_block(ref, il, h, state):
    """One token through recurrent layer il of Reference `ref`; `state` (a dict) keeps the
    conv inputs and each head's S between tokens."""
    meta, a = ref.m.meta, ref.arch + "."
    nk, nv = meta[a + "ssm.group_count"], meta[a + "ssm.time_step_rank"]
    dk, dv = meta[a + "ssm.state_size"], meta[a + "ssm.inner_size"] // nv
    r = nv // nk
    p = f"blk.{il}."
    x = ref.norm(h, p + "attn_norm")
    if ref.m.has(p + "ssm_in.weight"):  # first conversions: per k head [q | k | v | z]
        g = (ref.t(p + "ssm_in.weight") @ x).reshape(nk, 2 * dk + 2 * r * dv)
        q_, k_ = g[:, :dk].reshape(-1), g[:, dk:2 * dk].reshape(-1)
        v_, z = g[:, 2 * dk:2 * dk + r * dv].reshape(-1), g[:, 2 * dk + r * dv:].reshape(nv, dv)
        mixed = np.concatenate([q_, k_, v_])
    else:
        mixed = ref.t(p + "attn_qkv.weight") @ x
        z = (ref.t(p + "attn_gate.weight") @ x).reshape(nv, dv)
    tiled = ref.m.has(p + "ssm_beta.weight")
    if tiled:
        b, alpha = ref.t(p + "ssm_beta.weight") @ x, ref.t(p + "ssm_alpha.weight") @ x
    else:
        ba = (ref.t(p + "ssm_ba.weight") @ x).reshape(nk, 2 * r)
        b, alpha = ba[:, :r].reshape(nv), ba[:, r:].reshape(nv)
    conv = ref.t(p + "ssm_conv1d.weight")  # (channels, taps)
    taps = conv.shape[1]
    past = state.get("conv", np.zeros((taps - 1, mixed.size)))
    window = np.vstack([past, mixed[None, :]])
    state["conv"] = window[1:]
    y = (window * conv.T).sum(axis=0)
    y = y / (1.0 + np.exp(-y))
    q = y[:nk * dk].reshape(nk, dk)
    k = y[nk * dk:2 * nk * dk].reshape(nk, dk)
    v = y[2 * nk * dk:].reshape(nv, dv)
    q = np.stack([_l2(row, ref.eps) for row in q]) / math.sqrt(dk)
    k = np.stack([_l2(row, ref.eps) for row in k])
    beta = 1.0 / (1.0 + np.exp(-b))
    pre = alpha + ref.t(p + "ssm_dt.bias")
    g = np.log1p(np.exp(pre)) * ref.t(p + "ssm_a")
    S = state.setdefault("S", np.zeros((nv, dk, dv)))
    out = np.zeros((nv, dv))
    norm = ref.t(p + "ssm_norm.weight")
    for hd in range(nv):
        kh = hd % nk if tiled else hd // r
        S[hd] *= math.exp(g[hd])
        delta = (v[hd] - S[hd].T @ k[kh]) * beta[hd]
        S[hd] += np.outer(k[kh], delta)
        o = S[hd].T @ q[kh]
        o = o / math.sqrt(float(o @ o) / dv + ref.eps) * norm
        out[hd] = o * z[hd] / (1.0 + np.exp(-z[hd]))
    return h + ref.t(p + "ssm_out.weight") @ out.reshape(-1)
