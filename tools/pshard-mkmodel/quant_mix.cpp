#include "tools/pshard-mkmodel/quant_mix.h"

#include "tools/pshard-mkmodel/model_generator.h"

#include <algorithm>
#include <cctype>

namespace pshard {
namespace {

using T = TensorType;

struct MixName {
  QuantMix mix;
  const char* name;
  TensorType base;
};
constexpr MixName kMixes[] = {{QuantMix::kQ2_K, "q2_k", T::kQ2_K},
                              {QuantMix::kQ3_K_M, "q3_k_m", T::kQ3_K},
                              {QuantMix::kQ4_K_M, "q4_k_m", T::kQ4_K},
                              {QuantMix::kQ5_K_M, "q5_k_m", T::kQ5_K},
                              {QuantMix::kMXFP4_MOE, "mxfp4_moe", T::kQ8_0}};
constexpr const char* kMixList = "q4_k_m, q5_k_m, q3_k_m, q2_k, mxfp4_moe";

TensorType base_type(QuantMix mix) {
  for (const MixName& m : kMixes)
    if (m.mix == mix)
      return m.base;
  return T::kF32;
}

// llama.cpp's use_more_bits: the first and last eighth of the layers and every third between.
bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

// The layer index of "blk.N.…", or -1.
int64_t layer_of(const std::string& name) {
  if (name.rfind("blk.", 0) != 0)
    return -1;
  return std::stoll(name.substr(4));
}

TensorType recipe(const ModelSpec& s, const std::string& cls, int64_t layer, int64_t cols) {
  const QuantMix mix = s.mix;
  const int64_t n = s.n_layer, n_kv = s.n_head_kv ? s.n_head_kv : s.n_head;
  const int64_t n_gqa = n_kv > 0 ? s.n_head / n_kv : 1;
  const bool eight_experts = s.n_expert == 8;
  const bool is_output = cls == "output" || (cls == "token_embd" && s.tied_output);
  if (is_output)
    return cols % 256 != 0 ? T::kQ8_0 : T::kQ6_K;
  if (cls == "ffn_gate_inp")
    return T::kF32;
  if (cls == "attn_v") {
    TensorType t = base_type(mix);
    if (mix == QuantMix::kQ2_K)
      t = n_gqa >= 4 ? T::kQ4_K : T::kQ3_K;
    else if (mix == QuantMix::kQ3_K_M)
      t = layer < 2 ? T::kQ5_K : T::kQ4_K;
    else if (more_bits(layer, n)) // q4_k_m, q5_k_m
      t = T::kQ6_K;
    return eight_experts ? T::kQ8_0 : t;
  }
  if (cls == "attn_k")
    return eight_experts ? T::kQ8_0 : base_type(mix);
  if (cls == "ffn_down") {
    if (mix == QuantMix::kQ2_K)
      return T::kQ3_K;
    if (mix == QuantMix::kQ3_K_M)
      return layer < n / 16 ? T::kQ5_K : T::kQ4_K;
    return more_bits(layer, n) ? T::kQ6_K : base_type(mix);
  }
  if (cls == "attn_output") {
    if (eight_experts && mix != QuantMix::kQ5_K_M)
      return T::kQ5_K;
    if (mix == QuantMix::kQ2_K)
      return T::kQ3_K;
    if (mix == QuantMix::kQ3_K_M)
      return T::kQ4_K;
  }
  return base_type(mix);
}

// MXFP4_MOE: the routed experts' stacks ("blk.N.ffn_up_exps.weight", class ffn_up)
// are told from the dense FFN of the same class by their name.
TensorType mxfp4_moe_recipe(const std::string& name, const std::string& cls) {
  if (cls == "ffn_gate_inp")
    return T::kF32;
  return name.find("_exps.") != std::string::npos ? T::kMXFP4 : T::kQ8_0;
}

// llama.cpp's fallback for rows that are not whole blocks of the chosen type.
TensorType fit_rows(TensorType t, int64_t cols) {
  if (cols % tensor_type_traits(t).block_values == 0)
    return t;
  switch (t) {
  case T::kQ2_K:
  case T::kQ3_K:
  case T::kIQ4_XS:
    t = T::kIQ4_NL;
    break;
  case T::kQ4_K:
    t = T::kQ5_0;
    break;
  case T::kQ5_K:
    t = T::kQ5_1;
    break;
  case T::kQ6_K:
    t = T::kQ8_0;
    break;
  default:
    break;
  }
  return cols % tensor_type_traits(t).block_values == 0 ? t : T::kF16;
}

std::string lower(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

} // namespace

Result<QuantMix> parse_quant_mix(std::string_view name) {
  const std::string l = lower(name);
  for (const MixName& m : kMixes)
    if (l == m.name)
      return m.mix;
  return not_found("'" + std::string(name) + "' is not a quantization mix; mixes: " + kMixList);
}

Status parse_type_or_mix(std::string_view text, ModelSpec* spec) {
  if (Result<QuantMix> mix = parse_quant_mix(text); mix.ok()) {
    spec->mix = *mix;
    spec->type = base_type(*mix);
    return Status::ok_status();
  }
  Result<TensorType> type = parse_tensor_type(text);
  if (!type.ok())
    return invalid_argument("unknown --type '" + std::string(text) + "'; weight types: " +
                            supported_tensor_type_list() + "; mixes: " + kMixList);
  spec->mix = QuantMix::kNone;
  spec->type = *type;
  return Status::ok_status();
}

TensorType tensor_type_for(const ModelSpec& spec, const std::string& name, const std::string& cls,
                           const std::vector<int64_t>& dims) {
  if (auto it = spec.overrides.find(cls); it != spec.overrides.end())
    return it->second;
  if (spec.mix == QuantMix::kNone)
    return spec.type;
  const TensorType t = spec.mix == QuantMix::kMXFP4_MOE
                           ? mxfp4_moe_recipe(name, cls)
                           : recipe(spec, cls, layer_of(name), dims[0]);
  return fit_rows(t, dims[0]);
}

} // namespace pshard
