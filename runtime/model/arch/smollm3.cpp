// smollm3: Hugging Face's SmolLM3 (3B). Llama's block (adjacent-pair RoPE, SwiGLU,
// grouped-query attention, tied output) except that every fourth layer uses no
// positional rotation at all (NoPE), as llama.cpp runs it.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kSmolLm3Family = {
    .name = "smollm3",
    .summary = "SmolLM3",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kDense,
    .nope_period = 4,
};

} // namespace pshard
