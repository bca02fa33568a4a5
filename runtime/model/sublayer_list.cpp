#include "runtime/model/sublayer_list.h"

namespace pshard {

std::vector<SubLayer> model_sublayers(const ModelHParams& hp) {
  std::vector<SubLayer> out;
  out.push_back({SubLayerKind::kEmbed, -1, "embed"});
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string idx = "[" + std::to_string(il) + "]";
    out.push_back({SubLayerKind::kAttention, il, "attn" + idx});
    if (hp.is_moe_layer(il))
      out.push_back({SubLayerKind::kMoe, il, "moe" + idx});
    else
      out.push_back({SubLayerKind::kFfn, il, "ffn" + idx});
  }
  out.push_back({SubLayerKind::kHead, -1, "head"});
  return out;
}

} // namespace pshard
