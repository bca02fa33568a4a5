#include "tools/pshard-mkmodel/model_generator.h"

#include "runtime/gguf/gguf_writer.h"
#include "runtime/kernels/quantize.h"
#include "tools/pshard-mkmodel/synthetic_vocab.h"

#include <cmath>
#include <sstream>
#include <vector>

namespace pshard {
namespace {

// SplitMix64: tiny, fast, and the same on every platform, so a seed names a model.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float symmetric() { return static_cast<float>(static_cast<int64_t>(next() >> 11) - (1ll << 52)) * 0x1p-52f; }
};

uint64_t name_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

class ModelWriter {
public:
  ModelWriter(const ModelSpec& spec) : spec_(spec) {}

  // A weight of shape dims (dims[0] = row length) filled with uniform values of
  // standard deviation ~ 1/sqrt(row length), quantized row by row.
  Status add_weight(const std::string& name, const std::string& cls, std::vector<int64_t> dims) {
    const TensorType type = tensor_type_for(spec_, name, cls, dims);
    const int64_t cols = dims[0];
    if (cols % tensor_type_traits(type).block_values != 0)
      return invalid_argument("tensor '" + name + "' has rows of " + std::to_string(cols) +
                              " values, not a whole number of " + tensor_type_name(type) +
                              " blocks; choose another type for it, e.g. --override " + cls +
                              "=f32");
    const float scale = std::sqrt(3.0f / static_cast<float>(cols));
    const uint64_t seed = spec_.seed ^ name_hash(name);
    return writer_.add_tensor(name, type, dims, [=](std::span<uint8_t> out) {
      SplitMix64 rng{seed};
      const size_t row_bytes = tensor_bytes(type, cols).value();
      std::vector<float> row(static_cast<size_t>(cols));
      for (size_t off = 0; off + row_bytes <= out.size(); off += row_bytes) {
        for (auto& x : row)
          x = rng.symmetric() * scale;
        PSHARD_RETURN_IF_ERROR(quantize_row(type, row.data(), out.data() + off, cols));
      }
      return Status::ok_status();
    });
  }

  // Norm weights near one, so activations keep their scale.
  Status add_norm(const std::string& name, int64_t n) {
    const uint64_t seed = spec_.seed ^ name_hash(name);
    return writer_.add_tensor(name, TensorType::kF32, {n}, [=](std::span<uint8_t> out) {
      SplitMix64 rng{seed};
      auto* f = reinterpret_cast<float*>(out.data());
      for (int64_t i = 0; i < n; ++i)
        f[i] = 1.0f + 0.1f * rng.symmetric();
      return Status::ok_status();
    });
  }

  gguf::GgufWriter& writer() { return writer_; }

private:
  const ModelSpec& spec_;
  gguf::GgufWriter writer_;
};

Status check_spec(const ModelSpec& s) {
  if (s.n_embd <= 0 || s.n_layer <= 0 || s.n_head <= 0 || s.n_ff <= 0 || s.n_ctx <= 0)
    return invalid_argument("n_embd, n_layer, n_head, n_ff and the context must be positive");
  const int64_t kv = s.n_head_kv ? s.n_head_kv : s.n_head;
  if (s.n_embd % s.n_head != 0 || s.n_head % kv != 0)
    return invalid_argument("n_embd must be a multiple of n_head, and n_head of n_head_kv");
  if ((s.n_embd / s.n_head) % 2 != 0)
    return invalid_argument("the head size n_embd / n_head must be even for RoPE");
  if (s.n_expert < 0 || s.n_expert_used < 0 || (s.n_expert > 0) != (s.n_expert_used > 0) ||
      s.n_expert_used > s.n_expert)
    return invalid_argument("an MoE model needs 1 <= n_expert_used <= n_expert");
  return Status::ok_status();
}

Status add_layer(ModelWriter& m, const ModelSpec& s, int64_t il, int64_t kv_dim) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const int64_t d = s.n_embd, ff = s.n_ff, ne = s.n_expert;
  PSHARD_RETURN_IF_ERROR(m.add_norm(p + "attn_norm.weight", d));
  PSHARD_RETURN_IF_ERROR(m.add_weight(p + "attn_q.weight", "attn_q", {d, d}));
  PSHARD_RETURN_IF_ERROR(m.add_weight(p + "attn_k.weight", "attn_k", {d, kv_dim}));
  PSHARD_RETURN_IF_ERROR(m.add_weight(p + "attn_v.weight", "attn_v", {d, kv_dim}));
  PSHARD_RETURN_IF_ERROR(m.add_weight(p + "attn_output.weight", "attn_output", {d, d}));
  PSHARD_RETURN_IF_ERROR(m.add_norm(p + "ffn_norm.weight", d));
  if (ne == 0) {
    PSHARD_RETURN_IF_ERROR(m.add_weight(p + "ffn_gate.weight", "ffn_gate", {d, ff}));
    PSHARD_RETURN_IF_ERROR(m.add_weight(p + "ffn_up.weight", "ffn_up", {d, ff}));
    return m.add_weight(p + "ffn_down.weight", "ffn_down", {ff, d});
  }
  PSHARD_RETURN_IF_ERROR(m.add_weight(p + "ffn_gate_inp.weight", "ffn_gate_inp", {d, ne}));
  PSHARD_RETURN_IF_ERROR(m.add_weight(p + "ffn_gate_exps.weight", "ffn_gate", {d, ff, ne}));
  PSHARD_RETURN_IF_ERROR(m.add_weight(p + "ffn_up_exps.weight", "ffn_up", {d, ff, ne}));
  return m.add_weight(p + "ffn_down_exps.weight", "ffn_down", {ff, d, ne});
}

} // namespace

Status parse_type_overrides(const std::string& text, ModelSpec* spec) {
  static const char* kClasses[] = {"token_embd", "output",   "attn_q", "attn_k",   "attn_v",
                                   "attn_output", "ffn_gate", "ffn_up", "ffn_down", "ffn_gate_inp"};
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos)
      return invalid_argument("override '" + item + "' should look like CLASS=TYPE, e.g. ffn_down=f32");
    const std::string cls = item.substr(0, eq);
    bool known = false;
    for (const char* c : kClasses)
      known = known || cls == c;
    if (!known)
      return invalid_argument("unknown tensor class '" + cls +
                              "'; classes: token_embd, output, attn_q, attn_k, attn_v, "
                              "attn_output, ffn_gate, ffn_up, ffn_down, ffn_gate_inp");
    PSHARD_ASSIGN_OR_RETURN(spec->overrides[cls], parse_tensor_type(item.substr(eq + 1)));
  }
  return Status::ok_status();
}

Status write_llama_model(const ModelSpec& s, const std::string& path) {
  PSHARD_RETURN_IF_ERROR(check_spec(s));
  ModelWriter m(s);
  gguf::GgufWriter& w = m.writer();
  const int64_t n_head_kv = s.n_head_kv ? s.n_head_kv : s.n_head;
  const int64_t kv_dim = s.n_embd / s.n_head * n_head_kv;
  w.set("general.architecture", {std::string("llama")});
  w.set("general.name", {s.name});
  w.set("llama.context_length", {static_cast<uint32_t>(s.n_ctx)});
  w.set("llama.embedding_length", {static_cast<uint32_t>(s.n_embd)});
  w.set("llama.block_count", {static_cast<uint32_t>(s.n_layer)});
  w.set("llama.feed_forward_length", {static_cast<uint32_t>(s.n_ff)});
  w.set("llama.attention.head_count", {static_cast<uint32_t>(s.n_head)});
  w.set("llama.attention.head_count_kv", {static_cast<uint32_t>(n_head_kv)});
  w.set("llama.rope.dimension_count", {static_cast<uint32_t>(s.n_embd / s.n_head)});
  w.set("llama.rope.freq_base", {s.rope_freq_base});
  w.set("llama.attention.layer_norm_rms_epsilon", {1e-5f});
  if (s.n_expert > 0) {
    w.set("llama.expert_count", {static_cast<uint32_t>(s.n_expert)});
    w.set("llama.expert_used_count", {static_cast<uint32_t>(s.n_expert_used)});
  }
  int64_t n_vocab = s.n_vocab;
  if (!s.tokenizer_from.empty()) {
    PSHARD_ASSIGN_OR_RETURN(int64_t copied, copy_tokenizer(s.tokenizer_from, w));
    if (n_vocab != 0 && n_vocab != copied)
      return invalid_argument("--vocab " + std::to_string(n_vocab) + " differs from the " +
                              std::to_string(copied) + " tokens of " + s.tokenizer_from +
                              "; leave --vocab out to use the tokenizer's size");
    n_vocab = copied;
  } else {
    n_vocab = n_vocab ? n_vocab : 512;
    PSHARD_RETURN_IF_ERROR(add_synthetic_vocab(n_vocab, w));
  }
  w.set("llama.vocab_size", {static_cast<uint32_t>(n_vocab)});

  PSHARD_RETURN_IF_ERROR(m.add_weight("token_embd.weight", "token_embd", {s.n_embd, n_vocab}));
  PSHARD_RETURN_IF_ERROR(m.add_norm("output_norm.weight", s.n_embd));
  if (!s.tied_output)
    PSHARD_RETURN_IF_ERROR(m.add_weight("output.weight", "output", {s.n_embd, n_vocab}));
  for (int64_t il = 0; il < s.n_layer; ++il)
    PSHARD_RETURN_IF_ERROR(add_layer(m, s, il, kv_dim));
  return w.write(path, gguf::GgufWriter::WriteOptions{s.sparse});
}

} // namespace pshard
