// The vision graph: projector_layout's sub-layers, priced (formulas in VisionGraph.h).
#include "pshard/Planner/VisionGraph.h"

#include "runtime/schedule/model_fingerprint.h"

#include <algorithm>

namespace pshard::planner {
namespace {

// Groups a sub-layer's matrices into the matmuls the encoder runs. The patch kernel's two
// temporal halves are summed into one kernel for a still image: one matmul of both
// halves' bytes.
void add_tensor(VisionSubLayerInfo& s, const ProjectorHParams& hp, const VisionTensorSpec& spec,
                TensorRef t) {
  // Vectors and tables are read as F32 whatever the file stores (an F16 position table
  // takes twice its file bytes on a device).
  int64_t values = 1;
  for (int64_t d : t.dims)
    values *= d;
  s.weight_bytes += spec.matrix ? t.bytes : std::max<uint64_t>(t.bytes, values * 4ull);
  if (spec.matrix) {
    if (s.id.kind == VisionSubLayerKind::kPatchEmbed && !s.matmuls.empty()) {
      s.matmuls.front().matrix_bytes += t.bytes;
    } else {
      VisionMatmul m;
      m.type = t.type;
      m.cols = s.id.kind == VisionSubLayerKind::kPatchEmbed ? 3 * hp.patch_size * hp.patch_size
                                                            : t.dims[0];
      m.rows = t.dims.back();
      m.matrix_bytes = t.bytes;
      m.rows_divisor = spec.merged ? hp.n_merge * hp.n_merge : 1;
      s.matmuls.push_back(m);
    }
  }
  s.tensors.push_back(std::move(t));
}

VisionSubLayerInfo make_sublayer(const ProjectorHParams& hp, const VisionSubLayer& sl) {
  VisionSubLayerInfo s;
  s.id = sl;
  s.full_attention = sl.kind == VisionSubLayerKind::kAttention && hp.full_attention(sl.block);
  return s;
}

} // namespace

uint64_t VisionGraph::total_weight_bytes() const {
  uint64_t sum = 0;
  for (const VisionSubLayerInfo& s : sublayers)
    sum += s.weight_bytes;
  return sum;
}

int64_t VisionGraph::patches_for(ImageSize size) const {
  const ImageSize in = vision_input_size(size, hp);
  return (in.width / hp.patch_size) * (in.height / hp.patch_size);
}

int64_t VisionGraph::attention_span(const VisionSubLayerInfo& s, int64_t n_patches) const {
  if (s.full_attention || hp.n_wa_pattern <= 0)
    return n_patches;
  const int64_t side = hp.window_tokens() * hp.n_merge; // patches per window side
  return std::min(n_patches, side * side);
}

double VisionGraph::flops(const VisionSubLayerInfo& s, int64_t n_patches) const {
  double f = 0;
  for (const VisionMatmul& m : s.matmuls)
    f += 2.0 * static_cast<double>(n_patches / m.rows_divisor) * static_cast<double>(m.rows) *
         static_cast<double>(m.cols);
  if (s.id.kind == VisionSubLayerKind::kAttention)
    f += 4.0 * static_cast<double>(n_patches) * static_cast<double>(attention_span(s, n_patches)) *
         static_cast<double>(hp.n_embd);
  return f;
}

uint64_t VisionGraph::hidden_bytes(int64_t n_patches) const {
  return static_cast<uint64_t>(n_patches * hp.n_embd) * 4;
}

uint64_t VisionGraph::activation_bytes(int64_t n_patches) const {
  const int64_t n = n_patches, c = hp.n_embd, merged = n / (hp.n_merge * hp.n_merge);
  const int64_t ffn_buffers = hp.gated_ffn() ? 2 : 1;
  const int64_t per_patch = 3 * hp.patch_size * hp.patch_size // input pixels
                            + 6 * c                           // hidden, residual, q, k, v, out
                            + ffn_buffers * hp.n_ff;
  const int64_t per_merged = 2 * hp.n_merge * hp.n_merge * c + hp.projection_dim;
  return static_cast<uint64_t>(n * per_patch + merged * per_merged) * 4;
}

uint64_t VisionGraph::attention_scratch_bytes(int64_t n_patches, int64_t tile) const {
  int64_t span = 0;
  for (const VisionSubLayerInfo& s : sublayers)
    if (s.id.kind == VisionSubLayerKind::kAttention)
      span = std::max(span, attention_span(s, n_patches));
  if (span == 0)
    return 0;
  const auto heads = static_cast<uint64_t>(hp.n_head);
  if (tile <= 0) // every head's scores over the span
    return heads * static_cast<uint64_t>(n_patches) * static_cast<uint64_t>(span) * 4;
  const auto t = static_cast<uint64_t>(std::min(tile, n_patches));
  return heads * (t * t * 4 + t * 8); // a block of scores, running max and sum per query
}

Result<VisionGraph> build_vision_graph(const gguf::GgufFile& file) {
  VisionGraph g;
  PSHARD_ASSIGN_OR_RETURN(g.hp, read_projector_hparams(file));
  for (const VisionSubLayer& sl : vision_sublayers(g.hp)) {
    VisionSubLayerInfo s = make_sublayer(g.hp, sl);
    for (const VisionTensorSpec& spec : vision_tensor_specs(g.hp, sl)) {
      const gguf::TensorInfo* info = file.find_tensor(spec.name);
      if (!info)
        return invalid_format("tensor '" + spec.name + "' is missing from projector '" +
                              file.path() + "' (vision sub-layer " + sl.name + " needs it)");
      if (info->dims != spec.dims)
        return invalid_format("tensor '" + spec.name + "' of projector '" + file.path() +
                              "' does not have the shape its clip.vision.* metadata implies");
      add_tensor(s, g.hp, spec,
                 {info->name, info->dims, info->type, file.tensor_file_offset(*info), info->n_bytes,
                  info->shard});
    }
    g.sublayers.push_back(std::move(s));
  }
  g.fingerprint = model_fingerprint(file);
  g.file_size = file.total_file_size();
  return g;
}

VisionGraph synthetic_vision_graph(const ProjectorHParams& hp, TensorType type) {
  VisionGraph g;
  g.hp = hp;
  uint64_t offset = 0;
  for (const VisionSubLayer& sl : vision_sublayers(hp)) {
    VisionSubLayerInfo s = make_sublayer(hp, sl);
    for (const VisionTensorSpec& spec : vision_tensor_specs(hp, sl)) {
      int64_t n = 1;
      for (int64_t d : spec.dims)
        n *= d;
      const TensorType ty = spec.matrix ? type : TensorType::kF32;
      const Result<size_t> bytes = tensor_bytes(ty, n);
      TensorRef t{spec.name, spec.dims, ty, offset,
                  bytes.ok() ? *bytes : static_cast<uint64_t>(n) * 4};
      offset += (t.bytes + 31) / 32 * 32;
      add_tensor(s, hp, spec, std::move(t));
    }
    g.sublayers.push_back(std::move(s));
  }
  g.fingerprint = {0x5157454e56495349ull, static_cast<uint64_t>(offset)}; // "synthetic"
  g.file_size = offset;
  return g;
}

} // namespace pshard::planner
