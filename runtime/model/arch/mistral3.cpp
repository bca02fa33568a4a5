// mistral3: Ministral 3 (3B, 8B, 14B) as llama.cpp's converter writes them. Llama's block
// (adjacent-pair RoPE, SwiGLU, or Mixtral-style experts) with YaRN for long contexts and
// an attention temperature: past the original context the queries grow by
// 1 + beta · ln(floor((pos + 1) / original context) + 1).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kMistral3Family = {
    .name = "mistral3",
    .summary = "Ministral 3",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kDenseOrMoe,
    .attn_temperature = true,
};

} // namespace pshard
