// ernie4_5 and ernie4_5-moe: Baidu's ERNIE 4.5 language models (ERNIE-4.5-0.3B dense;
// ERNIE-4.5-21B-A3B and -300B-A47B MoE). Llama's pre-norm block with RoPE over adjacent
// pairs of the whole head (the converter does not permute q/k: the model rotates pairs) and
// the head size from `attention.key_length` (the 0.3B's 128 with n_embd 1024, 16 heads);
// a tied output when the file has no output.weight. The MoE: the first
// `leading_dense_block_count` layers dense; a softmax router whose top k are chosen by the
// probabilities plus exp_probs_b (moe_statics' correction, when the file has it) and
// weighed by the unbiased probabilities, renormalised; an ungated shared expert when the
// file has one (`expert_shared_feed_forward_length` wide). The converter drops the
// multi-token-prediction block.
#include "runtime/model/arch/arch_family.h"

namespace pshard {

const ArchFamily kErnie45Family = {
    .name = "ernie4_5",
    .summary = "ERNIE-4.5-0.3B",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kDense,
    .qkv_bias = Presence::kOptional,
};

const ArchFamily kErnie45MoeFamily = {
    .name = "ernie4_5-moe",
    .summary = "ERNIE-4.5-21B-A3B, -300B-A47B",
    .rope_style = RopeStyle::kNormal,
    .ffn = FfnForm::kMoe,
    .qkv_bias = Presence::kOptional,
    .shared_expert = Presence::kOptional,
    .shared_expert_gate = false,
    .expert_width_key = true,
    .expert_selection_bias = Presence::kOptional,
    .normalize_expert_weights = true,
};

} // namespace pshard
