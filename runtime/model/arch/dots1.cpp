// dots1: rednote's dots.llm1 (142B-A14B). Qwen3's attention (per-head q/k RMSNorms before
// NeoX RoPE over the whole head, no biases) with DeepSeek-V3-style experts: the first
// `leading_dense_block_count` layers dense, the others routed by the top k of
// sigmoid(router logits) + exp_probs_b (the bias only chooses), weighed by the unbiased
// sigmoids, renormalised (`expert_weights_norm`) and times `expert_weights_scale`, plus an
// ungated shared expert `expert_shared_count` experts wide. A file without
// `expert_gating_func` is sigmoid-routed here (llama.cpp's loader stops on one).
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kDots1Family = {
    .name = "dots1",
    .summary = "dots.llm1",
    .rope_style = RopeStyle::kNeox,
    .ffn = FfnForm::kMoe,
    .qk_norm = Presence::kRequired,
    .shared_expert = Presence::kOptional,
    .shared_expert_gate = false,
    .expert_width_key = true,
    .gating = ExpertGating::kSigmoid,
    .expert_selection_bias = Presence::kOptional,
    // llama.cpp's loader: false when the file has no expert_weights_norm key.
    .normalize_expert_weights = false,
};

} // namespace pshard
