// Building the sub-layer table from GGUF tensor infos (or from hyperparameters alone):
// every tensor is assigned to exactly one sub-layer by its name, as the runtime's
// llama layout binds them (runtime/model/llama_weights.cpp), and priced as matmuls.
#include "pshard/Planner/ModelGraph.h"

#include <charconv>
#include <map>

namespace pshard::planner {
namespace {

std::string indexed(const char* base, int64_t layer) {
  return std::string(base) + "[" + std::to_string(layer) + "]";
}

SubLayerInfo make_sublayer(std::string name, SubLayerKind kind, int64_t layer) {
  SubLayerInfo s;
  s.name = std::move(name);
  s.kind = kind;
  s.layer = layer;
  return s;
}

// The sub-layer skeleton in execution order, as runtime/model/sublayer.cpp makes it.
std::vector<SubLayerInfo> skeleton(const LlamaHParams& hp) {
  std::vector<SubLayerInfo> out;
  out.push_back(make_sublayer("embed", SubLayerKind::kEmbed, -1));
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    SubLayerInfo attn = make_sublayer(indexed("attn", il), SubLayerKind::kAttention, il);
    attn.kv_values_per_token = 2 * hp.kv_dim();
    attn.n_head = hp.n_head;
    attn.head_dim = hp.head_dim;
    out.push_back(std::move(attn));
    SubLayerInfo ffn = make_sublayer(indexed(hp.is_moe() ? "moe" : "ffn", il),
                                     hp.is_moe() ? SubLayerKind::kMoe : SubLayerKind::kFfn, il);
    ffn.n_expert = hp.n_expert;
    ffn.n_expert_used = hp.n_expert_used;
    out.push_back(std::move(ffn));
  }
  out.push_back(make_sublayer("head", SubLayerKind::kHead, -1));
  return out;
}

// "blk.12.attn_q.weight" -> (12, "attn_q"); false for names outside blocks.
bool split_block_name(const std::string& name, int64_t* layer, std::string* role) {
  if (name.rfind("blk.", 0) != 0)
    return false;
  const size_t dot = name.find('.', 4);
  if (dot == std::string::npos)
    return false;
  int64_t il = 0;
  const auto [end, ec] = std::from_chars(name.data() + 4, name.data() + dot, il);
  if (ec != std::errc() || end != name.data() + dot)
    return false;
  const size_t suffix = name.rfind(".weight");
  if (suffix == std::string::npos || suffix <= dot)
    return false;
  *layer = il;
  *role = name.substr(dot + 1, suffix - dot - 1);
  return true;
}

// A matrix stored as dims {cols, rows} (or {cols, rows, n_expert} for experts).
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

Status assign(std::vector<SubLayerInfo>& subs, const LlamaHParams& hp, const TensorRef& t,
              bool tied_output) {
  auto attn = [&](int64_t il) -> SubLayerInfo& { return subs[static_cast<size_t>(1 + 2 * il)]; };
  auto ffn = [&](int64_t il) -> SubLayerInfo& { return subs[static_cast<size_t>(2 + 2 * il)]; };
  SubLayerInfo& embed = subs.front();
  SubLayerInfo& head = subs.back();
  int64_t il = 0;
  std::string role;
  if (t.name == "token_embd.weight") {
    embed.tensors.push_back(t);
    embed.embed_row_bytes = t.dims.size() > 1 && t.dims[1] > 0
                                ? t.bytes / static_cast<uint64_t>(t.dims[1]) : t.bytes;
    if (tied_output) { // the head multiplies by the same matrix; it needs its own copy on GPU
      head.tensors.push_back(t);
      head.matmuls.push_back(matmul_of(t, 1, 1));
      head.matmuls.back().last_token_only = true;
    }
  } else if (t.name == "output_norm.weight") {
    head.tensors.push_back(t);
  } else if (t.name == "output.weight") {
    head.tensors.push_back(t);
    head.matmuls.push_back(matmul_of(t, 1, 1));
    head.matmuls.back().last_token_only = true;
  } else if (t.name == "rope_freqs.weight") {
    for (int64_t l = 0; l < hp.n_layer; ++l) // every attention block reads it (tiny)
      attn(l).tensors.push_back(t);
  } else if (split_block_name(t.name, &il, &role) && il >= 0 && il < hp.n_layer) {
    if (role.rfind("attn_", 0) == 0) {
      attn(il).tensors.push_back(t);
      if (role != "attn_norm")
        attn(il).matmuls.push_back(matmul_of(t, 1, 1));
    } else if (role.rfind("ffn_", 0) == 0) {
      SubLayerInfo& f = ffn(il);
      f.tensors.push_back(t);
      const bool expert = role.size() > 5 && role.compare(role.size() - 5, 5, "_exps") == 0;
      if (expert) {
        f.matmuls.push_back(matmul_of(t, hp.n_expert_used, hp.n_expert));
        f.expert_bytes += f.matmuls.back().matrix_bytes;
      } else {
        if (role != "ffn_norm")
          f.matmuls.push_back(matmul_of(t, 1, 1));
        f.shared_bytes += t.bytes;
      }
    } else {
      return unsupported("tensor '" + t.name + "' is not part of the llama layout the planner "
                         "knows (attn_*, ffn_*)");
    }
  } else {
    return unsupported("tensor '" + t.name + "' is not part of the llama layout the planner knows");
  }
  return Status::ok_status();
}

ModelGraph assemble(const LlamaHParams& hp, std::vector<SubLayerInfo> subs) {
  ModelGraph g;
  g.hparams = hp;
  g.name = hp.name;
  g.architecture = "llama";
  for (auto& s : subs)
    for (const auto& t : s.tensors)
      s.weight_bytes += t.bytes;
  g.sublayers = std::move(subs);
  return g;
}

} // namespace

Result<ModelGraph> build_model_graph(const gguf::GgufFile& file) {
  PSHARD_ASSIGN_OR_RETURN(LlamaHParams hp, read_llama_hparams(file));
  if (hp.n_layer < 1)
    return unsupported("the model has no layers (llama.block_count = 0)");
  const bool tied = file.find_tensor("output.weight") == nullptr;
  std::vector<SubLayerInfo> subs = skeleton(hp);
  for (const auto& info : file.tensors()) {
    TensorRef t{info.name,   info.dims, info.type, file.tensor_file_offset(info), info.n_bytes,
                info.shard};
    PSHARD_RETURN_IF_ERROR(assign(subs, hp, t, tied).with_context("in '" + file.path() + "'"));
  }
  for (const auto& s : subs)
    if (s.kind != SubLayerKind::kEmbed && s.matmuls.empty())
      return unsupported("sub-layer " + s.name + " of '" + file.path() +
                         "' has no weight matrices: the file lacks its tensors");
  if (subs.front().tensors.empty())
    return unsupported("'" + file.path() + "' has no token_embd.weight");
  ModelGraph g = assemble(hp, std::move(subs));
  g.fingerprint = model_fingerprint(file);
  g.file_size = file.total_file_size();
  return g;
}

ModelGraph synthetic_model_graph(const LlamaHParams& hp, TensorType type) {
  std::vector<SubLayerInfo> subs = skeleton(hp);
  uint64_t offset = 0;
  auto add = [&](const std::string& name, std::vector<int64_t> dims, TensorType ty) {
    int64_t n = 1;
    for (int64_t d : dims)
      n *= d;
    const Result<size_t> bytes = tensor_bytes(ty, n);
    TensorRef t{name, std::move(dims), ty, offset,
                bytes.ok() ? *bytes : static_cast<uint64_t>(n) * 4};
    offset += (t.bytes + 31) / 32 * 32;
    (void)assign(subs, hp, t, /*tied_output=*/false); // names are the known layout
  };
  const int64_t d = hp.n_embd;
  add("token_embd.weight", {d, hp.n_vocab}, type);
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    add(p + "attn_norm.weight", {d}, TensorType::kF32);
    add(p + "attn_q.weight", {d, hp.q_dim()}, type);
    add(p + "attn_k.weight", {d, hp.kv_dim()}, type);
    add(p + "attn_v.weight", {d, hp.kv_dim()}, type);
    add(p + "attn_output.weight", {hp.q_dim(), d}, type);
    add(p + "ffn_norm.weight", {d}, TensorType::kF32);
    if (hp.is_moe()) {
      add(p + "ffn_gate_inp.weight", {d, hp.n_expert}, TensorType::kF32);
      add(p + "ffn_gate_exps.weight", {d, hp.n_ff, hp.n_expert}, type);
      add(p + "ffn_up_exps.weight", {d, hp.n_ff, hp.n_expert}, type);
      add(p + "ffn_down_exps.weight", {hp.n_ff, d, hp.n_expert}, type);
    } else {
      add(p + "ffn_gate.weight", {d, hp.n_ff}, type);
      add(p + "ffn_up.weight", {d, hp.n_ff}, type);
      add(p + "ffn_down.weight", {hp.n_ff, d}, type);
    }
  }
  add("output_norm.weight", {d}, TensorType::kF32);
  add("output.weight", {d, hp.n_vocab}, type);
  ModelGraph g = assemble(hp, std::move(subs));
  Hasher128 h;
  h.str("synthetic");
  h.u64(offset);
  g.fingerprint = h.finish();
  g.file_size = offset;
  return g;
}

} // namespace pshard::planner
