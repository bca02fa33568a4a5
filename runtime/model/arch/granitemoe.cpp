// granitemoe: IBM Granite 3.x MoE (1B-A400M, 3B-A800M; granite-3.1 and 3.2 too). Granite's
// multiplied Llama block (granite.cpp) with routed experts in place of the FFN: a softmax
// router, the top-k renormalised (Granite's top-k softmax over the chosen logits), SwiGLU
// experts as wide as `feed_forward_length` (its converter writes the experts' width there),
// no shared expert (granitemoeshared's is not read).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kGraniteMoeFamily = {
    .name = "granitemoe",
    .summary = "Granite 3.x MoE",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kMoe,
    .multiplier_keys = true,
};

} // namespace pshard
