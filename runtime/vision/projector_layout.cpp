#include "runtime/vision/projector_layout.h"

namespace pshard {
namespace {

void add_norm(const ProjectorHParams& hp, const std::string& prefix,
              std::vector<VisionTensorSpec>& out, int64_t width = 0) {
  const int64_t d = width > 0 ? width : hp.n_embd;
  out.push_back({prefix + ".weight", {d}, false, false});
  if (!hp.rms_norm())
    out.push_back({prefix + ".bias", {d}, false, true});
}

void add_linear(const std::string& prefix, int64_t in, int64_t out_dim,
                std::vector<VisionTensorSpec>& out, bool merged = false) {
  out.push_back({prefix + ".weight", {in, out_dim}, true, false, false, merged});
  out.push_back({prefix + ".bias", {out_dim}, false, true});
}

} // namespace

std::vector<VisionSubLayer> vision_sublayers(const ProjectorHParams& hp) {
  std::vector<VisionSubLayer> out{{VisionSubLayerKind::kPatchEmbed, -1, "v.patch"}};
  for (int64_t i = 0; i < hp.n_layer; ++i) {
    out.push_back({VisionSubLayerKind::kAttention, i, "v.attn[" + std::to_string(i) + "]"});
    out.push_back({VisionSubLayerKind::kFfn, i, "v.ffn[" + std::to_string(i) + "]"});
  }
  out.push_back({VisionSubLayerKind::kMerger, -1, "v.merger"});
  return out;
}

std::vector<VisionTensorSpec> vision_tensor_specs(const ProjectorHParams& hp,
                                                  const VisionSubLayer& s) {
  const int64_t c = hp.n_embd, p = hp.patch_size;
  const std::string blk = "v.blk." + std::to_string(s.block) + ".";
  std::vector<VisionTensorSpec> out;
  switch (s.kind) {
  case VisionSubLayerKind::kPatchEmbed:
    out.push_back({"v.patch_embd.weight", {p, p, 3, c}, true, false});
    out.push_back({"v.patch_embd.weight.1", {p, p, 3, c}, true, false});
    if (hp.qwen3()) {
      out.push_back({"v.patch_embd.bias", {c}, false, true});
      out.push_back({"v.position_embd.weight", {c, hp.pos_side * hp.pos_side}, false, false, true});
    }
    break;
  case VisionSubLayerKind::kAttention:
    add_norm(hp, blk + "ln1", out);
    if (hp.qwen3())
      add_linear(blk + "attn_qkv", c, 3 * c, out);
    else
      for (const char* m : {"attn_q", "attn_k", "attn_v"})
        add_linear(blk + m, c, c, out);
    add_linear(blk + "attn_out", c, c, out);
    break;
  case VisionSubLayerKind::kFfn:
    add_norm(hp, blk + "ln2", out);
    if (hp.gated_ffn())
      add_linear(blk + "ffn_gate", c, hp.n_ff, out);
    add_linear(blk + "ffn_up", c, hp.n_ff, out);
    add_linear(blk + "ffn_down", hp.n_ff, c, out);
    if (hp.deepstack_index(s.block) >= 0) {
      const std::string ds = "v.deepstack." + std::to_string(s.block) + ".";
      add_norm(hp, ds + "norm", out, 4 * c);
      add_linear(ds + "fc1", 4 * c, 4 * c, out, true);
      add_linear(ds + "fc2", 4 * c, hp.projection_dim, out, true);
    }
    break;
  case VisionSubLayerKind::kMerger:
    add_norm(hp, "v.post_ln", out);
    add_linear("mm.0", 4 * c, 4 * c, out, true);
    add_linear("mm.2", 4 * c, hp.projection_dim, out, true);
    break;
  }
  return out;
}

} // namespace pshard
