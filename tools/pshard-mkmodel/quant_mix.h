// llama-quantize's per-tensor type recipes ("quantization mixes"), so pshard-mkmodel
// writes Q4_K_M, Q5_K_M, Q3_K_M, Q2_K and MXFP4_MOE files laid out the way real
// downloads are.
// The facts are llama.cpp's llama_tensor_get_type (src/llama-quant.cpp, b6097) for a
// llama-family model (not Falcon, no importance matrix, no --tensor-type overrides):
//
//   tensor           q2_k                 q3_k_m              q4_k_m           q5_k_m
//   (default)        Q2_K                 Q3_K                Q4_K             Q5_K
//   token_embd       Q2_K                 Q3_K                Q4_K             Q5_K
//   output           Q6_K                 Q6_K                Q6_K             Q6_K
//   attn_v           Q4_K if n_gqa >= 4,  Q5_K in layers 0-1, Q6_K where       Q6_K where
//                    else Q3_K            else Q4_K           more_bits(i)     more_bits(i)
//   attn_output      Q3_K                 Q4_K                (Q4_K)           (Q5_K)
//   ffn_down         Q3_K                 Q5_K if i < n/16,   Q6_K where       Q6_K where
//                                         else Q4_K           more_bits(i)     more_bits(i)
//   norms, router    F32 (1-D tensors and ffn_gate_inp are never quantized)
// with more_bits(i) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2 over the n layers.
// Models with exactly 8 experts also get attn_v and attn_k in Q8_0 and, for q2_k,
// q3_k_m and q4_k_m, attn_output in Q5_K. A tied output (no output.weight) gives
// token_embd the output's type. llama.cpp's 70B-only rule (attn_v bumped to Q5_K when
// the model is exactly 70B) is not applied: pshard-mkmodel's shapes have no model size.
//
// mxfp4_moe (llama-quantize's MXFP4_MOE, gpt-oss's layout): the routed experts
// (ffn_gate_exps, ffn_up_exps, ffn_down_exps) in MXFP4, every other 2-D weight (output
// and token_embd included, shared experts too) in Q8_0, 1-D tensors and ffn_gate_inp F32.
//
// A tensor whose rows are not a whole number of the chosen type's blocks falls back
// as llama.cpp does: Q2_K, Q3_K, IQ4_XS -> IQ4_NL; Q4_K -> Q5_0; Q5_K -> Q5_1;
// Q6_K -> Q8_0; and F16 if even that does not fit (output: Q8_0 when its rows are not
// a multiple of 256; MXFP4 and Q8_0 rows not a multiple of 32: F16). So every mix
// writes a valid file for any shape.
//
//   spec.mix = QuantMix::kQ4_K_M;   // or: parse_type_or_mix("q4_k_m", &spec)
//   TensorType t = tensor_type_for(spec, "blk.3.attn_v.weight", "attn_v", {4096, 1024});
#pragma once

#include "runtime/core/status.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

enum class QuantMix { kNone, kQ2_K, kQ3_K_M, kQ4_K_M, kQ5_K_M, kMXFP4_MOE };

struct ModelSpec;

// "q4_k_m", "Q5_K_M", "q3_k_m", "q2_k", "mxfp4_moe" (case-insensitive); not_found for
// anything else.
Result<QuantMix> parse_quant_mix(std::string_view name);

// --type: a weight type (spec->type, no mix) or a mix (spec->mix, and spec->type its
// default type). The error lists both the types and the mixes.
Status parse_type_or_mix(std::string_view text, ModelSpec* spec);

// The type of weight tensor `name` of class `cls` (model_generator.h's classes) with
// shape `dims` (dims[0] the row length): a --override for its class, else the mix's
// recipe, else spec.type.
TensorType tensor_type_for(const ModelSpec& spec, const std::string& name, const std::string& cls,
                           const std::vector<int64_t>& dims);

} // namespace pshard
