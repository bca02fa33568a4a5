// The units the planner places and the runtime runs, in execution order: embed, per
// layer attn[i] and ffn[i] (or moe[i]), head. The same for every architecture family;
// what each unit holds is in tensor_layout.h.
#pragma once

#include "runtime/model/hparams.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

enum class SubLayerKind { kEmbed, kAttention, kFfn, kMoe, kHead };

struct SubLayer {
  SubLayerKind kind;
  int64_t layer;    // -1 for embed and head
  std::string name; // "embed", "attn[3]", "ffn[3]", "moe[3]", "head"
};

// The sub-layers of a model in execution order.
std::vector<SubLayer> model_sublayers(const ModelHParams& hp);

} // namespace pshard
