"""An independent float64 forward pass of every family pshard runs, written from the
models' published definitions (not from pshard's code), for checking pshard's logits.

Families: llama (adjacent-pair RoPE, optional q/k/v/o biases, dense or Mixtral-style
MoE), qwen2 (NeoX RoPE, q/k/v biases), qwen3 (per-head q/k RMSNorm before RoPE),
qwen3moe (softmax over all experts, top-k renormalised), qwen2moe (top-k not
renormalised, plus a shared expert scaled by sigmoid(gate . x)), phi3 (NeoX RoPE, fused
attn_qkv and gate/up in one ffn_up, LongRoPE's long/short factors by context), granite
(embedding, residual, attention and logit multipliers; granitemoe with Mixtral-style
experts), mistral3 (Llama's block with an
attention temperature past the original context), smollm3 (every fourth layer without
RoPE), gemma2 and gemma3
(text): embeddings times sqrt(n_embd), NeoX RoPE, RMSNorm after attention and after the
GELU-tanh gated FFN, sliding-window local layers (gemma2 every other layer, gemma3 five
of six, with their own unscaled RoPE base), attention and final-logit soft-capping
(gemma2; gemma3 final only if the file says), gpt-oss (NeoX RoPE, q/k/v/o biases, a
sink logit per head in each softmax, every other layer a 128-position window with the
same RoPE, MoE pre-normed by post_attention_norm: top-k router logits plus bias weighed
by their own softmax, experts with biases and the clamped SwiGLU of OpenAI's reference).
glm4moe (GLM-4.5: NeoX RoPE over the first rope.dimension_count values of a head, q/k/v
biases, the first leading_dense_block_count layers dense, the others routed by the top k
of sigmoid(router logits) + e_score_correction_bias, weighed by the unbiased sigmoids
renormalised and times routed_scaling_factor, plus an ungated shared expert; the file's
NextN blocks not run; dots1, dots.llm1: the same routing after Qwen3's attention;
bailingmoe2, Ling 2.0: with fused q/k/v, q/k norms, and the choice limited to the groups
whose two best scores sum highest), glm4 (GLM-4-0414: adjacent-pair RoPE over part of each head, a
norm after attention and after the FFN as Gemma's, gate and up in one ffn_up),
ernie4_5 and ernie4_5-moe (ERNIE 4.5: Llama's block with adjacent-pair RoPE that the
converter does not permute; leading dense layers, and with interleave_moe_layer_step only
every such layer routing; the softmax top k chosen with moe_statics' correction added,
weighed without it, renormalised; an ungated shared expert), phimoe (Phi-3.5-MoE: Phi-3's
attention with q/k/v/o biases, Mixtral-style experts, a bias after every RMSNorm and on
the logits, as llama.cpp defines the family), deepseek2 (DeepSeek-V2/V3: multi-head latent
attention as the paper writes it, each head's key [W_UK_h c | shared rotated part] and value
W_UV_h c from the normed latent c, adjacent-pair RoPE on the rotated parts only, scores
scaled by mscale^2 / sqrt(head width) under YaRN with the rotation's magnitude left at 1;
dense leading layers, routed experts by softmax or sigmoid (expert_gating_func) with the
DeepSeek-V3 selection bias and groups, plus ungated shared experts), qwen3next (Qwen3-Next:
Gated DeltaNet layers, delta_net.py, and every fourth layer gated attention — a sigmoid gate
per query value from attn_q — with per-head q/k norms and NeoX RoPE over part of each head;
Qwen2-MoE's experts and gated shared expert, pre-normed by post_attention_norm; qwen35 and
qwen35moe, Qwen3.5: the same with ssm_beta/ssm_alpha and tiled v heads, dense or MoE),
qwen3vl and qwen3vlmoe (Qwen3-VL: qwen3 / qwen3moe with interleaved M-RoPE and an image
row's DeepStack rows added after the first n_deepstack_layers layers).
gemma-embedding (EmbeddingGemma): gemma3's
block attending both ways, a local layer's window centred on the query (keys within
sliding_window // 2 positions either side, as Hugging Face's bidirectional Gemma 3 masks).
Decoders with attention.causal false see the whole text (final_states).
bert, nomic-bert, modern-bert: encoder.py. RoPE scaling: linear, llama3 (rope_freqs tensor or scaling keys) and YaRN (ggml's
per-dimension ramp).
"""
import math

import numpy as np

from delta_net import delta_net_block
from encoder import bert_states, modernbert_states

NEOX = {"qwen2", "qwen2vl", "qwen2moe", "qwen3", "qwen3moe",  # qwen2vl: M-RoPE, NeoX for text
        "gemma2", "gemma3", "gemma-embedding", "phi3", "gpt-oss", "glm4moe", "dots1",
        "bailingmoe2", "phimoe", "qwen3next", "qwen35", "qwen35moe", "qwen3vl", "qwen3vlmoe"}
# Interleaved M-RoPE (HF's apply_interleaved_mrope): pair i takes h when i % 3 == 1 and
# i < 3 * sections[1], w when i % 3 == 2 and i < 3 * sections[2], else t.
INTERLEAVED_MROPE = {"qwen35", "qwen35moe", "qwen3vl", "qwen3vlmoe"}
GEMMA = {"gemma2", "gemma3", "gemma-embedding"}
# Each block's output normed before its residual add (post_attention_norm, post_ffw_norm).
SANDWICH_NORMED = GEMMA | {"glm4"}
# The MoE (and dense FFN) block's pre-norm is named post_attention_norm.
FFN_NORM_POST_ATTENTION = {"gpt-oss", "glm4moe", "qwen3next", "qwen35", "qwen35moe"}
# Qwen3-Next: attn_q writes each head's query then its gate; the attention's output is
# multiplied by the gate's sigmoid before attn_output.
GATED_ATTENTION = {"qwen3next", "qwen35", "qwen35moe"}
# DeepSeek-V3-style routing (selection bias, groups, weights norm and scale, shared experts).
DEEPSEEK_ROUTED = {"glm4moe", "dots1", "bailingmoe2", "deepseek2"}
# The 27B models (by block count) scale attention by 1/sqrt(n_embd/n_head), not head_dim.
GEMMA_27B_LAYERS = {"gemma2": 46, "gemma3": 62}
UNNORMALISED_TOPK = {"qwen2moe"}


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1.0 + np.exp(-x))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def swiglu_oai(gate, up, alpha=1.702, limit=7.0):
    """gpt-oss's expert activation (OpenAI's reference implementation)."""
    g = np.minimum(gate, limit)
    return g * (1.0 / (1.0 + np.exp(-alpha * g))) * (np.clip(up, -limit, limit) + 1.0)


def softcap(x, c):
    return c * np.tanh(x / c)


def softmax(x):
    e = np.exp(x - np.max(x))
    return e / e.sum()


class Reference:
    def __init__(self, model, n_ctx=None):
        """n_ctx: the context the run was given (LongRoPE picks its factors by it);
        default the model's training context."""
        self.m = model
        meta = model.meta
        self.arch = meta["general.architecture"]
        a = self.arch + "."
        g = lambda k, d=None: meta.get(a + k, d)
        self.n_embd = g("embedding_length")
        # GLM-4.5's multi-token-prediction blocks follow the model's and are not run.
        self.n_layer = g("block_count") - g("nextn_predict_layers", 0)
        self.dense_lead = g("leading_dense_block_count", 0)
        self.moe_step = g("interleave_moe_layer_step", 1)
        self.n_head = g("attention.head_count")
        self.n_head_kv = g("attention.head_count_kv", self.n_head)
        self.head_dim = g("attention.key_length", self.n_embd // self.n_head)
        self.n_rot = g("rope.dimension_count", self.head_dim)
        # DeepSeek's latent attention: a head's query/key width and value width, the
        # latent's width.
        self.latent = g("attention.kv_lora_rank", 0)
        if self.latent:  # older files: key_length / value_length are a head's
            self.head_dim = g("attention.key_length_mla", g("attention.key_length"))
            self.head_dim_v = g("attention.value_length_mla", g("attention.value_length"))
        self.base = g("rope.freq_base", 10000.0)
        self.eps = g("attention.layer_norm_rms_epsilon", 1e-5)
        self.n_expert = g("expert_count", 0)
        self.k = g("expert_used_count", 0)
        self.scaling = g("rope.scaling.type", "none")
        self.factor = g("rope.scaling.factor", 1.0)
        self.ctx_orig = g("rope.scaling.original_context_length", g("context_length", 4096))
        self.low_ff = g("rope.scaling.low_freq_factor", 1.0)
        self.high_ff = g("rope.scaling.high_freq_factor", 4.0)
        self.freq_factors = model.tensor("rope_freqs.weight") if model.has("rope_freqs.weight") else None
        # LongRoPE (Phi-3.5 / Phi-4-mini): long factors past the original context, short
        # ones within it, cos and sin scaled by rope.scaling.attn_factor.
        self.rope_mag = 1.0
        if model.has("rope_factors_long.weight"):
            ctx = n_ctx if n_ctx else g("context_length", 4096)
            which = "long" if ctx > self.ctx_orig else "short"
            self.freq_factors = model.tensor(f"rope_factors_{which}.weight")
            self.rope_mag = g("rope.scaling.attn_factor", 1.0)
        # M-RoPE (qwen2vl): pairs per temporal / height / width position.
        self.sections = g("rope.dimension_sections", [0, 0, 0, 0])[:3]
        self.n_deepstack = g("n_deepstack_layers", 0)
        mult, mag = self._rope_angles(self.base)
        self.angles = (mult, mag * self.rope_mag)
        mscale = 1.0
        if self.latent and self.scaling == "yarn" and self.factor > 1.0:
            # DeepSeek's YaRN: the rotation keeps magnitude 1 (mscale / mscale_all_dim, the
            # two equal in these models) and the softmax scale carries mscale_all_dim^2; the
            # file's multiplier is 0.1 * mscale_all_dim.
            self.angles = (mult, np.ones(len(mult)))
            mscale = 1.0 + g("rope.scaling.yarn_log_multiplier", 0.0) * math.log(self.factor)
        gemma = self.arch in GEMMA
        self.act = gelu_tanh if gemma else silu
        granite = self.arch in ("granite", "granitemoe")
        # Gemma scales the token embeddings (not injected ones) by sqrt(n_embd), Granite
        # by its embedding multiplier; Granite also scales each block's output before the
        # residual add and divides the logits.
        self.emb_scale = math.sqrt(self.n_embd) if gemma else g("embedding_scale", 1.0) if granite else 1.0
        self.residual_scale = g("residual_scale", 1.0) if granite else 1.0
        # Mistral 3: queries past each original context grow by a log-step temperature
        # (Llama 4's, as llama.cpp steps it: floor((pos + 1) / L)).
        self.temp_scale = g("attention.temperature_scale", 0.0) if self.arch == "mistral3" else 0.0
        self.temp_length = g("rope.scaling.original_context_length", g("context_length"))
        # Llama 4 (Hugging Face's Llama4TextAttention): every fourth layer unrotated, its
        # queries warmed past 8192 positions; the others attend in chunks
        # (attention_chunk_size), their q and k L2-normed after RoPE (use_qk_norm, off for
        # the 128-expert Maverick).
        self.llama4 = self.arch == "llama4"
        self.chunk = g("attention.chunk_size", 8192) if self.llama4 else None
        if self.llama4:
            self.temp_scale, self.temp_length = 0.1, 8192
        self.logit_divisor = g("logit_scale") if granite else 1.0
        # Gemma's query_pre_attn_scalar**-0.5, when the file does not store it.
        self.kq_scale = g("attention.scale") if gemma or granite else None
        if self.kq_scale is None:
            big = GEMMA_27B_LAYERS.get(self.arch) == self.n_layer
            self.kq_scale = 1.0 / math.sqrt(self.n_embd / self.n_head if big else self.head_dim)
        if self.latent:
            self.kq_scale = mscale * mscale / math.sqrt(self.head_dim)
        # Soft-capping: gemma2 always (Hugging Face's defaults), gemma3 only if the file says.
        gemma2 = self.arch == "gemma2"
        self.attn_softcap = g("attn_logit_softcapping", 50.0) if gemma2 else 0.0
        self.final_softcap = g("final_logit_softcapping", 30.0 if gemma2 else 0.0) if gemma else 0.0
        # Per layer: the sliding window (None: sees every earlier key) and RoPE angles.
        self.windows = [None] * self.n_layer
        self.layer_angles = [self.angles] * self.n_layer
        if gemma2:
            w = g("attention.sliding_window", 4096)
            self.windows = [w if il % 2 == 0 else None for il in range(self.n_layer)]
        elif self.arch == "gpt-oss":
            w, pat = g("attention.sliding_window", 128), g("attention.sliding_window_pattern")
            pat = pat if type(pat) is int else 2  # the even layers are local
            self.windows = [w if il % pat < pat - 1 else None for il in range(self.n_layer)]
        elif self.arch in ("gemma3", "gemma-embedding"):
            w, pat = g("attention.sliding_window", 0), g("attention.sliding_window_pattern")
            pat = pat if type(pat) is int else 6  # layers 5, 11, ... are global
            local = [il % pat < pat - 1 for il in range(self.n_layer)]
            # Without a window every layer is global (llama.cpp's loader: no SWA layers).
            if w > 0:
                self.windows = [w if loc else None for loc in local]
                # Local layers keep their own base, never scaled (rope_local_base_freq).
                local_angles = self._rope_angles(g("rope.freq_base_swa", 10000.0), scaled=False)
                self.layer_angles = [local_angles if loc else self.angles for loc in local]
        # Queries see later positions too: EmbeddingGemma, or a decoder converted with
        # attention.causal false (gte-Qwen2).
        self.two_way = self.arch == "gemma-embedding" or g("attention.causal", True) is False
        # Qwen3-Next: Gated DeltaNet layers (delta_net.py) but every full_attention_interval-th.
        interval = g("full_attention_interval", 4)
        self.recurrent = [g("ssm.state_size") is not None and (il + 1) % interval != 0
                          for il in range(self.n_layer)]

    # --- RoPE ------------------------------------------------------------------------
    def _rope_angles(self, base, scaled=True):
        """Per pair i: (multiplier of pos in theta, cos/sin magnitude); scaled=False
        ignores the file's scaling (a gemma3 local layer's)."""
        pairs = self.n_rot // 2
        i = np.arange(pairs, dtype=np.float64)
        extrap = base ** (-2.0 * i / self.n_rot)
        if not scaled:
            return extrap, np.ones(pairs)
        if self.freq_factors is not None:
            extrap = extrap / self.freq_factors
        elif self.scaling == "llama3":
            wavelen = 2 * math.pi / extrap
            lo_w, hi_w = self.ctx_orig / self.low_ff, self.ctx_orig / self.high_ff
            smooth = (self.ctx_orig / wavelen - self.low_ff) / (self.high_ff - self.low_ff)
            div = np.where(wavelen < hi_w, 1.0,
                           np.where(wavelen > lo_w, self.factor,
                                    1.0 / ((1 - smooth) / self.factor + smooth)))
            extrap = extrap / div
        mag = np.ones(pairs)
        if self.scaling == "linear":
            return extrap / self.factor, mag
        if self.scaling == "yarn" and self.factor != 1.0:
            # ggml: the dimensions where beta_fast=32 / beta_slow=1 turns fit the original
            # context bound a ramp from extrapolation (short wavelengths) to interpolation.
            def corr(n_turns):
                return self.n_rot * math.log(self.ctx_orig / (n_turns * 2 * math.pi)) / (2 * math.log(base))
            low = max(0.0, math.floor(corr(32.0)))
            high = min(self.n_rot - 1.0, math.ceil(corr(1.0)))
            ramp = 1.0 - np.clip((i - low) / max(0.001, high - low), 0.0, 1.0)
            interp = extrap / self.factor
            return interp * (1 - ramp) + extrap * ramp, mag * (1.0 + 0.1 * math.log(self.factor))
        return extrap, mag

    def rope(self, x, pos, angles):
        """x: (heads, head_dim) at position pos, or at (t, h, w) with M-RoPE sections:
        pair i (modulo the sections' sum) takes t in the first sections[0] pairs, h in the
        next sections[1], w in the rest. angles: as _rope_angles returns."""
        mult, mag = angles
        if isinstance(pos, tuple):
            s0, s1, s2 = self.sections
            sector = np.arange(len(mult)) % (s0 + s1 + s2)
            if self.arch in INTERLEAVED_MROPE:
                pos = np.where((sector % 3 == 1) & (sector < 3 * s1), pos[1],
                               np.where((sector % 3 == 2) & (sector < 3 * s2), pos[2], pos[0]))
            else:
                pos = np.where(sector < s0, pos[0], np.where(sector < s0 + s1, pos[1], pos[2]))
        theta = pos * mult
        c, s = np.cos(theta) * mag, np.sin(theta) * mag
        out = x.copy()
        pairs = self.n_rot // 2
        if self.arch in NEOX:
            a, b = np.arange(pairs), np.arange(pairs) + pairs
        else:
            a, b = 2 * np.arange(pairs), 2 * np.arange(pairs) + 1
        out[:, a] = x[:, a] * c - x[:, b] * s
        out[:, b] = x[:, a] * s + x[:, b] * c
        return out

    # --- blocks ------------------------------------------------------------------------
    def t(self, name):
        return self.m.tensor(name)

    def opt(self, name):
        return self.m.tensor(name) if self.m.has(name) else None

    def norm(self, x, name):
        """RMSNorm by `name`.weight, plus `name`.bias where the file has one (phimoe)."""
        b = self.opt(name + ".bias")
        y = rms_norm(x, self.t(name + ".weight"), self.eps)
        return y + b if b is not None else y


    def attention(self, il, h, cache, pos):
        """One position's attention block, its key and value appended to `cache`."""
        if self.latent:
            return self.latent_attention(il, h, cache, pos)
        if self.recurrent[il]:
            return delta_net_block(self, il, h, cache)
        q, k, v = self.qkv(il, h, pos)
        cache.append((k, v))
        # A local layer sees the last `window` positions, its own included; a Llama 4
        # rotating layer its chunk so far.
        seen = cache[-self.windows[il]:] if self.windows[il] else cache
        if self.llama4 and self.rotates(il):
            seen = cache[pos - pos % self.chunk:]
        return self.attend(il, h, q, seen)

    def qkv(self, il, h, pos):
        """The position's query, key and value heads: projected, normed and rotated."""
        p = f"blk.{il}."
        x = self.norm(h, p + "attn_norm")
        if self.m.has(p + "attn_qkv.weight"):  # Phi-3: one matrix, rows q then k then v
            qkv = self.t(p + "attn_qkv.weight") @ x
            nq, nkv = self.n_head * self.head_dim, self.n_head_kv * self.head_dim
            q, k, v = qkv[:nq], qkv[nq:nq + nkv], qkv[nq + nkv:]
        else:
            q, k, v = (self.t(p + n + ".weight") @ x for n in ("attn_q", "attn_k", "attn_v"))
        if self.arch in GATED_ATTENTION:  # each head's query, then its gate
            q = q.reshape(self.n_head, 2 * self.head_dim)[:, :self.head_dim].reshape(-1)
        for name, vec in (("attn_q", "q"), ("attn_k", "k"), ("attn_v", "v")):
            b = self.opt(p + name + ".bias")
            if b is not None:
                if vec == "q": q = q + b
                if vec == "k": k = k + b
                if vec == "v": v = v + b
        q = q.reshape(self.n_head, self.head_dim)
        k = k.reshape(self.n_head_kv, self.head_dim)
        v = v.reshape(self.n_head_kv, self.head_dim)
        qn, kn = self.opt(p + "attn_q_norm.weight"), self.opt(p + "attn_k_norm.weight")
        if qn is not None:
            q, k = rms_norm(q, qn, self.eps), rms_norm(k, kn, self.eps)
        angles = self.layer_angles[il]
        if self.rotates(il):
            q, k = self.rope(q, pos, angles), self.rope(k, pos, angles)
            if self.llama4 and self.n_expert != 128:  # Llama4TextL2Norm, no weight
                q, k = rms_norm(q, 1.0, self.eps), rms_norm(k, 1.0, self.eps)
        if self.temp_scale and not (self.llama4 and self.rotates(il)):
            q = q * (1.0 + self.temp_scale * math.log(math.floor((pos + 1) / self.temp_length) + 1.0))
        return q, k, v

    def rotates(self, il):
        """SmolLM3 and Llama 4: every fourth layer has no positional rotation (NoPE)."""
        return not (self.arch in ("smollm3", "llama4") and (il + 1) % 4 == 0)

    def attend(self, il, h, q, seen):
        """The block's output for query heads q over the (key, value) pairs `seen`, added
        to the residual h."""
        p = f"blk.{il}."
        group = self.n_head // self.n_head_kv
        out = np.zeros((self.n_head, self.head_dim))
        for hd in range(self.n_head):
            keys = np.stack([c[0][hd // group] for c in seen])
            vals = np.stack([c[1][hd // group] for c in seen])
            scores = keys @ q[hd] * self.kq_scale
            if self.attn_softcap:
                scores = softcap(scores, self.attn_softcap)
            sinks = self.opt(p + "attn_sinks.weight")
            if sinks is not None:  # one more logit in the softmax, with no value
                out[hd] = softmax(np.append(scores, sinks[hd]))[:-1] @ vals
            else:
                out[hd] = softmax(scores) @ vals
        if self.arch in GATED_ATTENTION:
            x = self.norm(h, p + "attn_norm")
            gate = (self.t(p + "attn_q.weight") @ x).reshape(self.n_head, 2 * self.head_dim)
            out = out / (1.0 + np.exp(-gate[:, self.head_dim:]))
        o = self.t(p + "attn_output.weight") @ out.reshape(-1)
        bo = self.opt(p + "attn_output.bias")
        o = o + bo if bo is not None else o
        post = self.opt(p + "post_attention_norm.weight") if self.arch in SANDWICH_NORMED else None
        o = rms_norm(o, post, self.eps) if post is not None else o
        return h + self.residual_scale * o

    def latent_attention(self, il, h, cache, pos):
        """DeepSeek's multi-head latent attention, not absorbed: every head's key and
        value expanded from the position's normed latent and cached as such."""
        p = f"blk.{il}."
        x = self.norm(h, p + "attn_norm")
        if self.m.has(p + "attn_q_a.weight"):
            q_low = rms_norm(self.t(p + "attn_q_a.weight") @ x, self.t(p + "attn_q_a_norm.weight"),
                             self.eps)
            q = self.t(p + "attn_q_b.weight") @ q_low
        else:
            q = self.t(p + "attn_q.weight") @ x
        q = q.reshape(self.n_head, self.head_dim)
        nope = self.head_dim - self.n_rot
        c = self.t(p + "attn_kv_a_mqa.weight") @ x
        latent = rms_norm(c[:self.latent], self.t(p + "attn_kv_a_norm.weight"), self.eps)
        k_rot = self.rope(c[self.latent:][None, :], pos, self.angles)[0]
        q = np.concatenate([q[:, :nope], self.rope(q[:, nope:], pos, self.angles)], axis=1)
        if self.m.has(p + "attn_kv_b.weight"):  # older files: each head's key rows, then value rows
            kv_b = self.t(p + "attn_kv_b.weight").reshape(self.n_head, nope + self.head_dim_v, -1)
            w_uk = kv_b[:, :nope, :].transpose(0, 2, 1)
            w_uv = kv_b[:, nope:, :]
        else:
            w_uk = self.t(p + "attn_k_b.weight")  # (heads, latent, nope): W_UK_h transposed
            w_uv = self.t(p + "attn_v_b.weight")  # (heads, head_dim_v, latent)
        keys = np.stack([np.concatenate([w_uk[hd].T @ latent, k_rot]) for hd in range(self.n_head)])
        vals = np.stack([w_uv[hd] @ latent for hd in range(self.n_head)])
        cache.append((keys, vals))
        out = np.zeros((self.n_head, self.head_dim_v))
        for hd in range(self.n_head):
            ks = np.stack([kv[0][hd] for kv in cache])
            vs = np.stack([kv[1][hd] for kv in cache])
            out[hd] = softmax(ks @ q[hd] * self.kq_scale) @ vs
        return h + self.t(p + "attn_output.weight") @ out.reshape(-1)

    def glu(self, x, gate, up, down):
        """SwiGLU, or GELU-tanh gating for Gemma."""
        return down @ (self.act(gate @ x) * (up @ x))

    def ffn(self, il, h):
        p = f"blk.{il}."
        norm = "post_attention_norm" if self.arch in FFN_NORM_POST_ATTENTION else "ffn_norm"
        x = self.norm(h, p + norm)
        if self.arch == "gpt-oss":
            return h + self.oai_experts(p, x)
        routes = self.n_expert > 0 and il >= self.dense_lead and (il + 1) % self.moe_step == 0
        if self.arch in DEEPSEEK_ROUTED and routes:
            return h + self.glm_experts(p, x)
        if self.llama4 and routes:
            return h + self.llama4_experts(p, x)
        if not routes:
            if self.m.has(p + "ffn_gate.weight"):
                gate, up = self.t(p + "ffn_gate.weight"), self.t(p + "ffn_up.weight")
            else:  # Phi-3: ffn_up holds the gate's rows, then the up projection's
                both = self.t(p + "ffn_up.weight")
                gate, up = both[:both.shape[0] // 2], both[both.shape[0] // 2:]
            out = self.glu(x, gate, up, self.t(p + "ffn_down.weight"))
            post = self.opt(p + "post_ffw_norm.weight")
            out = rms_norm(out, post, self.eps) if post is not None else out
            return h + self.residual_scale * out
        probs = softmax(self.t(p + "ffn_gate_inp.weight") @ x)
        # ERNIE 4.5: moe_statics' correction chooses the experts, never weighs them.
        bias = self.opt(p + "exp_probs_b.bias")
        choice = probs + bias if bias is not None else probs
        top = sorted(range(self.n_expert), key=lambda e: (-choice[e], e))[:self.k]
        weights = probs[top]
        if self.arch not in UNNORMALISED_TOPK:
            weights = weights / weights.sum()
        gate, up, down = (self.t(p + n) for n in ("ffn_gate_exps.weight", "ffn_up_exps.weight",
                                                 "ffn_down_exps.weight"))
        out = sum(w * self.glu(x, gate[e], up[e], down[e]) for e, w in zip(top, weights))
        if self.m.has(p + "ffn_gate_shexp.weight"):  # Qwen2-MoE's gated, ERNIE's not
            gate = self.opt(p + "ffn_gate_inp_shexp.weight")
            g = 1.0 / (1.0 + math.exp(-float(gate @ x))) if gate is not None else 1.0
            out = out + g * self.glu(x, self.t(p + "ffn_gate_shexp.weight"),
                                     self.t(p + "ffn_up_shexp.weight"),
                                     self.t(p + "ffn_down_shexp.weight"))
        return h + self.residual_scale * out  # Granite MoE scales the experts' output too

    def glm_experts(self, p, x):
        """GLM-4.5's MoE (and dots.llm1's, the same DeepSeek-V3 routing) as Hugging Face's
        Glm4MoeTopkRouter and Glm4MoeMoE define it: the
        top k of sigmoid(logits) + e_score_correction_bias (one group), weighed by the
        unbiased sigmoids, renormalised (norm_topk_prob), times routed_scaling_factor; the
        shared experts' MLP added ungated."""
        meta, a = self.m.meta, self.arch + "."
        logits = self.t(p + "ffn_gate_inp.weight") @ x
        # DeepSeek-V2 (gating 1, and its files without the key) weighs by a softmax.
        gating = meta.get(a + "expert_gating_func", 1 if self.arch == "deepseek2" else 2)
        scores = softmax(logits) if gating == 1 else 1.0 / (1.0 + np.exp(-logits))
        bias = self.opt(p + "exp_probs_b.bias")
        choice = scores + bias if bias is not None else scores
        groups = meta.get(a + "expert_group_count", 1)
        if groups > 1:  # DeepSeek-V3's noaux_tc: the groups whose two best choices sum highest
            per = self.n_expert // groups
            score = [sum(sorted(choice[g * per:(g + 1) * per])[-2:]) for g in range(groups)]
            kept = sorted(range(groups), key=lambda g: (-score[g], g))[:meta[a + "expert_group_used_count"]]
            choice = np.array([choice[e] if e // per in kept else -np.inf for e in range(self.n_expert)])
        top = sorted(range(self.n_expert), key=lambda e: (-choice[e], e))[:self.k]
        weights = scores[top]
        if meta.get(a + "expert_weights_norm", False):
            weights = weights / weights.sum()
        weights = weights * meta.get(a + "expert_weights_scale", 1.0)
        gate, up, down = (self.t(p + n) for n in ("ffn_gate_exps.weight", "ffn_up_exps.weight",
                                                 "ffn_down_exps.weight"))
        out = sum(w * self.glu(x, gate[e], up[e], down[e]) for e, w in zip(top, weights))
        return out + self.glu(x, self.t(p + "ffn_gate_shexp.weight"), self.t(p + "ffn_up_shexp.weight"),
                              self.t(p + "ffn_down_shexp.weight"))

    def llama4_experts(self, p, x):
        """Llama 4's MoE as Hugging Face's Llama4TextMoe defines it: the top k router
        logits' sigmoids scale each chosen expert's input (not its output); the shared
        expert's MLP added."""
        logits = self.t(p + "ffn_gate_inp.weight") @ x
        top = sorted(range(self.n_expert), key=lambda e: (-logits[e], e))[:self.k]
        gate, up, down = (self.t(p + n) for n in ("ffn_gate_exps.weight", "ffn_up_exps.weight",
                                                 "ffn_down_exps.weight"))
        out = sum(self.glu(x / (1.0 + math.exp(-float(logits[e]))), gate[e], up[e], down[e])
                  for e in top)
        return out + self.glu(x, self.t(p + "ffn_gate_shexp.weight"), self.t(p + "ffn_up_shexp.weight"),
                              self.t(p + "ffn_down_shexp.weight"))

    def oai_experts(self, p, x):
        """gpt-oss's MoE as OpenAI's reference writes it: the top k of the biased router
        logits, weighed by a softmax over those k; biased experts, clamped SwiGLU."""
        logits = self.t(p + "ffn_gate_inp.weight") @ x + self.t(p + "ffn_gate_inp.bias")
        top = sorted(range(self.n_expert), key=lambda e: (-logits[e], e))[:self.k]
        weights = softmax(logits[top])
        w = {n: (self.t(p + f"ffn_{n}_exps.weight"), self.t(p + f"ffn_{n}_exps.bias"))
             for n in ("gate", "up", "down")}
        out = 0.0
        for e, wt in zip(top, weights):
            gate = w["gate"][0][e] @ x + w["gate"][1][e]
            up = w["up"][0][e] @ x + w["up"][1][e]
            out = out + wt * (w["down"][0][e] @ swiglu_oai(gate, up) + w["down"][1][e])
        return out

    def final_states(self, ids, inputs=None, positions=None, types=None):
        """Each position's last hidden state after the output norm: the row the head
        multiplies, and an embedding model's row to pool. `inputs` maps a position to the
        embedding fed there instead of its token's (an image's); `positions[i]` is position
        i's rotary position (an int, or (t, h, w)); `types` an encoder's token types."""
        if self.arch in ("bert", "nomic-bert"):  # encoders: every position sees the whole text
            return bert_states(self.m, ids, types)
        if self.arch == "modern-bert":
            return modernbert_states(self.m, ids)
        if self.two_way:
            return self.two_way_states(ids)
        emb = self.t("token_embd.weight")
        caches = [{} if self.recurrent[il] else [] for il in range(self.n_layer)]
        rows = []
        n_embd = emb.shape[1]
        for pos, tok in enumerate(ids):
            h = inputs[pos].copy() if inputs and pos in inputs else emb[tok] * self.emb_scale
            # Qwen3-VL: an image row goes on with its DeepStack rows, added after layers 0, 1, ...
            deepstack = h[n_embd:].reshape(-1, n_embd)[:self.n_deepstack]
            h = h[:n_embd]
            rpos = positions[pos] if positions else pos
            for il in range(self.n_layer):
                h = self.attention(il, h, caches[il], rpos)
                h = self.ffn(il, h)
                if il < len(deepstack):
                    h = h + deepstack[il]
            rows.append(self.norm(h, "output_norm"))
        return rows

    def two_way_states(self, ids):
        """final_states of a model whose queries see the whole text, layer by layer: every
        position's keys first, then each query over all of them — or, in a local layer,
        over those within window // 2 positions of it on either side."""
        hs = [self.t("token_embd.weight")[tok] * self.emb_scale for tok in ids]
        for il in range(self.n_layer):
            qkv = [self.qkv(il, h, pos) for pos, h in enumerate(hs)]
            half = self.windows[il] // 2 if self.windows[il] else len(ids)
            hs = [self.attend(il, h, qkv[pos][0],
                              [(k, v) for _, k, v in qkv[max(0, pos - half):pos + half + 1]])
                  for pos, h in enumerate(hs)]
            hs = [self.ffn(il, h) for h in hs]
        return [self.norm(h, "output_norm") for h in hs]

    def logprobs(self, ids, inputs=None, positions=None):
        """Log-softmax of the logits after each of `ids` (one row per position); the
        arguments as final_states'."""
        emb = self.t("token_embd.weight")
        out_w = self.t("output.weight") if self.m.has("output.weight") else emb
        out_b = self.opt("output.bias")  # phimoe
        rows = []
        for x in self.final_states(ids, inputs, positions):
            logits = out_w @ x + (out_b if out_b is not None else 0.0)
            logits = logits / self.logit_divisor
            if self.final_softcap:
                logits = softcap(logits, self.final_softcap)
            mx = logits.max()
            rows.append(logits - mx - math.log(np.exp(logits - mx).sum()))
        return rows
