// Building the sub-layer table from GGUF tensor infos (or from hyperparameters alone):
// the tensors of each sub-layer are the ones the model's tensor layout names
// (runtime/model/tensor_layout.h, the same description the runtime binds), priced as
// matmuls by their role.
#include "pshard/Planner/ModelGraph.h"

#include "runtime/model/pooling.h"
#include "runtime/model/tensor_layout.h"

#include <set>

namespace pshard::planner {
namespace {

// A matrix stored as dims {cols, rows} (or {cols, rows, n_expert} for experts; a 1-D
// gate vector is one row).
MatmulGroup matmul_of(const TensorRef& t, int64_t count, int64_t pool) {
  MatmulGroup g;
  g.type = t.type;
  g.cols = t.dims.size() > 0 ? t.dims[0] : 0;
  g.rows = t.dims.size() > 1 ? t.dims[1] : 1;
  g.matrix_bytes = pool > 0 ? t.bytes / static_cast<uint64_t>(pool) : t.bytes;
  g.count = count;
  g.pool = pool;
  return g;
}

SubLayerInfo make_sublayer(const ModelHParams& hp, const SubLayer& sl) {
  SubLayerInfo s;
  s.name = sl.name;
  s.kind = static_cast<SubLayerKind>(static_cast<int>(sl.kind));
  s.layer = sl.layer;
  if (s.kind == SubLayerKind::kAttention) {
    s.kv_values_per_token = hp.kv_dim() + hp.v_dim();
    s.n_head = hp.n_head;
    // Scores over keys and sums over values: their mean width prices both (latent
    // attention's keys are wider than its values).
    s.head_dim = (hp.attn_key_dim() + hp.attn_value_dim()) / 2;
    s.attn_window = hp.attention_window(sl.layer);
    if (hp.is_recurrent_layer(sl.layer)) {
      s.delta_net = hp.delta_net;
      s.kv_dim = hp.kv_dim();
    }
  } else if (s.kind == SubLayerKind::kMoe) {
    s.n_expert = hp.n_expert;
    s.n_expert_used = hp.n_expert_used;
  }
  return s;
}

// Adds one tensor of the layout to its sub-layer: its bytes, and how it is priced.
void add_tensor(SubLayerInfo& s, const ModelHParams& hp, const TensorSpec& spec, TensorRef t) {
  if (spec.role == WeightRole::kTokenEmbd)
    s.embed_row_bytes =
        t.dims.size() > 1 && t.dims[1] > 0 ? t.bytes / static_cast<uint64_t>(t.dims[1]) : t.bytes;
  if (spec.is_experts()) {
    s.matmuls.push_back(matmul_of(t, hp.n_expert_used, hp.n_expert));
    s.matmuls.back().expert_gate_up =
        spec.role == WeightRole::kGateExps || spec.role == WeightRole::kUpExps;
    s.expert_bytes += s.matmuls.back().matrix_bytes;
  } else {
    if (spec.is_matrix() && t.dims.size() == 3) { // one matrix per head (DeepSeek's k_b, v_b)
      s.matmuls.push_back(matmul_of(t, t.dims[2], t.dims[2]));
    } else if (spec.is_matrix()) {
      s.matmuls.push_back(matmul_of(t, 1, 1));
      s.matmuls.back().last_token_only = spec.role == WeightRole::kOutput;
    }
    if (s.kind == SubLayerKind::kMoe) // router, norm, shared expert: read by every token
      s.shared_bytes += t.bytes;
  }
  s.weight_bytes += t.bytes;
  s.tensors.push_back(std::move(t));
}

ModelGraph assemble(const ModelHParams& hp, std::vector<SubLayerInfo> subs) {
  ModelGraph g;
  g.hparams = hp;
  g.name = hp.name;
  g.architecture = std::string(hp.family->name);
  g.sublayers = std::move(subs);
  return g;
}

} // namespace

Result<ModelGraph> build_model_graph(const gguf::GgufFile& file) {
  PSHARD_ASSIGN_OR_RETURN(ModelHParams hp, read_model_hparams(file));
  std::vector<SubLayerInfo> subs;
  std::set<std::string> claimed;
  for (const SubLayer& sl : model_sublayers(hp)) {
    SubLayerInfo s = make_sublayer(hp, sl);
    for (const TensorSpec& spec : sublayer_tensor_specs(hp, sl)) {
      const gguf::TensorInfo* info = file.find_tensor(spec.name);
      if (!info) {
        if (!spec.required)
          continue;
        return invalid_format("tensor '" + spec.name + "' is missing from '" + file.path() +
                              "' (sub-layer " + sl.name + " of a " + std::string(hp.family->name) +
                              " model needs it)");
      }
      if (info->dims != spec.dims)
        return invalid_format("tensor '" + spec.name + "' of '" + file.path() +
                              "' does not have the shape its metadata implies");
      claimed.insert(spec.name);
      add_tensor(s, hp, spec,
                 {info->name, info->dims, info->type, file.tensor_file_offset(*info),
                  info->n_bytes, info->shard});
    }
    subs.push_back(std::move(s));
  }
  for (const auto& info : file.tensors())
    // Pooling heads run on the host; an unrun block (GLM's NextN head) stays in the file.
    if (!claimed.count(info.name) && !is_post_pooling_tensor(info.name) &&
        !is_unrun_block_tensor(hp, info.name))
      return unsupported("tensor '" + info.name + "' of '" + file.path() +
                         "' is not part of the " + std::string(hp.family->name) +
                         " layout the planner knows");
  ModelGraph g = assemble(hp, std::move(subs));
  g.fingerprint = model_fingerprint(file);
  g.file_size = file.total_file_size();
  return g;
}

ModelGraph synthetic_model_graph(const ModelHParams& hp, TensorType type) {
  std::vector<SubLayerInfo> subs;
  uint64_t offset = 0;
  for (const SubLayer& sl : model_sublayers(hp)) {
    SubLayerInfo s = make_sublayer(hp, sl);
    for (const TensorSpec& spec : sublayer_tensor_specs(hp, sl)) {
      if (!spec.required)
        continue;
      // Matrices of `type`; vectors and the router stay F32, as converters keep them.
      const bool f32 = !spec.is_matrix() || spec.role == WeightRole::kRouter ||
                       spec.role == WeightRole::kShexpGateInp;
      const TensorType ty = spec.role == WeightRole::kTokenEmbd ? type : f32 ? TensorType::kF32 : type;
      int64_t n = 1;
      for (int64_t d : spec.dims)
        n *= d;
      const Result<size_t> bytes = tensor_bytes(ty, n);
      TensorRef t{spec.name, spec.dims, ty, offset,
                  bytes.ok() ? *bytes : static_cast<uint64_t>(n) * 4};
      offset += (t.bytes + 31) / 32 * 32;
      add_tensor(s, hp, spec, std::move(t));
    }
    subs.push_back(std::move(s));
  }
  ModelGraph g = assemble(hp, std::move(subs));
  Hasher128 h;
  h.str("synthetic");
  h.u64(offset);
  g.fingerprint = h.finish();
  g.file_size = offset;
  return g;
}

} // namespace pshard::planner
