// Binding a projector's tensors by the layout of projector_layout.cpp, with the same
// binder as the language model (shapes checked, stray tensors refused).
#include "runtime/vision/projector.h"

#include "runtime/kernels/quantize.h"
#include "runtime/model/tensor_binder.h"
#include "runtime/vision/projector_layout.h"

#include <filesystem>
#include <map>

namespace pshard {
namespace {

// The tensors of one sub-layer by name, bound.
struct Bound {
  std::map<std::string, const gguf::TensorInfo*> t;
  TensorBinder* b;
  VisionNorm norm(const std::string& prefix) const {
    VisionNorm n;
    n.weight = b->vector(*t.at(prefix + ".weight"));
    if (auto it = t.find(prefix + ".bias"); it != t.end())
      n.bias = b->vector(*it->second);
    return n;
  }
  VisionLinear linear(const std::string& prefix) const {
    auto w = t.find(prefix + ".weight");
    if (w == t.end())
      return {};
    return {b->matrix(*w->second), b->vector(*t.at(prefix + ".bias"))};
  }
  // Rows [k·n, (k+1)·n) of a fused linear's weight and bias.
  static VisionLinear row_block(const VisionLinear& fused, int64_t k, int64_t n) {
    VisionLinear l = fused;
    l.w.rows = n;
    l.w.data = fused.w.data + static_cast<size_t>(k * n) * fused.w.row_bytes;
    l.b.data = fused.b.data + k * n;
    return l;
  }
  VisionAttentionWeights attention(const std::string& blk, int64_t c) const {
    VisionAttentionWeights a{norm(blk + "ln1"), {}, {}, {}, linear(blk + "attn_out")};
    if (t.count(blk + "attn_qkv.weight") == 0) {
      a.q = linear(blk + "attn_q");
      a.k = linear(blk + "attn_k");
      a.v = linear(blk + "attn_v");
      return a;
    }
    const VisionLinear qkv = linear(blk + "attn_qkv"); // q, then k, then v rows
    a.q = row_block(qkv, 0, c);
    a.k = row_block(qkv, 1, c);
    a.v = row_block(qkv, 2, c);
    return a;
  }
  VisionDeepstackWeights deepstack(int64_t block) const {
    const std::string ds = "v.deepstack." + std::to_string(block) + ".";
    if (t.count(ds + "fc1.weight") == 0)
      return {};
    return {norm(ds + "norm"), linear(ds + "fc1"), linear(ds + "fc2")};
  }
};

// Both temporal halves of the patch kernel, summed in float.
Status sum_patch_kernel(const Bound& s, const ProjectorHParams& hp, ProjectorWeights& w) {
  const int64_t cols = 3 * hp.patch_size * hp.patch_size;
  w.patch_kernel.assign(static_cast<size_t>(hp.n_embd * cols), 0.0f);
  std::vector<float> row(static_cast<size_t>(cols));
  for (const char* name : {"v.patch_embd.weight", "v.patch_embd.weight.1"}) {
    // [p, p, 3, C] read as C rows of 3·p·p values (the binder's view has rows of p).
    const MatrixView m = s.b->matrix(*s.t.at(name));
    if (tensor_type_traits(m.type).block_values != 1)
      return unsupported(std::string("tensor '") + name + "' is " + tensor_type_name(m.type) +
                         "; the patch kernel must be F32, F16 or BF16");
    const size_t row_bytes = tensor_bytes(m.type, cols).value();
    for (int64_t r = 0; r < hp.n_embd; ++r) {
      dequantize_row(m.type, m.data + static_cast<size_t>(r) * row_bytes, row.data(), cols);
      float* dst = w.patch_kernel.data() + r * cols;
      for (int64_t c = 0; c < cols; ++c)
        dst[c] += row[static_cast<size_t>(c)];
    }
  }
  w.patch = MatrixView{TensorType::kF32, reinterpret_cast<const uint8_t*>(w.patch_kernel.data()),
                       hp.n_embd, cols, static_cast<size_t>(cols) * sizeof(float)};
  return Status::ok_status();
}

} // namespace

Result<std::unique_ptr<Projector>> Projector::open(const std::string& path) {
  if (!std::filesystem::exists(path))
    return not_found("projector file '" + path +
                     "' does not exist (--mmproj wants the "
                     "mmproj-*.gguf that comes with the vision model)");
  auto p = std::unique_ptr<Projector>(new Projector());
  PSHARD_ASSIGN_OR_RETURN(p->file_, gguf::GgufFile::open(path, gguf::OpenMode::kMapData));
  PSHARD_ASSIGN_OR_RETURN(p->hp_, read_projector_hparams(*p->file_));
  const ProjectorHParams& hp = p->hp_;
  const std::string type = projector_type_name(hp.type);
  TensorBinder binder(*p->file_, "a " + type + " projector", type + " projector layout");
  p->w_.attn.resize(static_cast<size_t>(hp.n_layer));
  p->w_.ffn.resize(static_cast<size_t>(hp.n_layer));
  for (const VisionSubLayer& s : vision_sublayers(hp)) {
    Bound bound{{}, &binder};
    for (const VisionTensorSpec& spec : vision_tensor_specs(hp, s)) {
      PSHARD_ASSIGN_OR_RETURN(bound.t[spec.name], binder.find(spec.name, spec.dims));
    }
    const std::string blk = "v.blk." + std::to_string(s.block) + ".";
    switch (s.kind) {
    case VisionSubLayerKind::kPatchEmbed:
      PSHARD_RETURN_IF_ERROR(sum_patch_kernel(bound, hp, p->w_));
      if (hp.qwen3()) {
        p->w_.patch_bias = binder.vector(*bound.t.at("v.patch_embd.bias"));
        p->w_.positions = binder.vector(*bound.t.at("v.position_embd.weight"));
      }
      break;
    case VisionSubLayerKind::kAttention:
      p->w_.attn[static_cast<size_t>(s.block)] = bound.attention(blk, hp.n_embd);
      break;
    case VisionSubLayerKind::kFfn:
      p->w_.ffn[static_cast<size_t>(s.block)] = {
          bound.norm(blk + "ln2"), bound.linear(blk + "ffn_gate"), bound.linear(blk + "ffn_up"),
          bound.linear(blk + "ffn_down"), bound.deepstack(s.block)};
      break;
    case VisionSubLayerKind::kMerger:
      p->w_.merger = {bound.norm("v.post_ln"), bound.linear("mm.0"), bound.linear("mm.2")};
      break;
    }
  }
  PSHARD_RETURN_IF_ERROR(binder.check_all_used());
  return p;
}

Status Projector::check_language_model(int64_t lm_n_embd, int64_t lm_deepstack) const {
  const auto mergers = static_cast<int64_t>(hp_.deepstack.size());
  if (lm_deepstack > 0 && mergers != lm_deepstack)
    return invalid_argument("projector '" + path() + "' has " + std::to_string(mergers) +
                            " DeepStack mergers, but the language model adds DeepStack rows "
                            "after its first " +
                            std::to_string(lm_deepstack) +
                            " layers ({arch}.n_deepstack_layers); give the projector that "
                            "belongs to this model");
  if (hp_.projection_dim != lm_n_embd)
    return invalid_argument("projector '" + path() + "' makes image embeddings of " +
                            std::to_string(hp_.projection_dim) +
                            " values (clip.vision.projection_dim), but the language model's "
                            "embedding width is " +
                            std::to_string(lm_n_embd) +
                            "; give the projector that belongs to this model");
  return Status::ok_status();
}

} // namespace pshard
