// planner::ModelGraph <-> pshard.model. Every field the planner reads has a home in the
// IR, so the two directions are plain copies; the summary attributes (weights per type,
// flops, bytes at tier 1 and full context) are computed by the planner's own formulas
// so the document and the planner never disagree.
#include "pshard/Import/ModelGraphIR.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cctype>
#include <cmath>
#include <map>

using namespace mlir;
using pshard::planner::MatmulGroup;
using pshard::planner::ModelGraph;
using pshard::planner::SubLayerInfo;
using pshard::planner::SubLayerKind;
using pshard::planner::TensorRef;

namespace pshard::ir {
namespace {

WeightType toIR(TensorType t) { return static_cast<WeightType>(static_cast<uint32_t>(t)); }
TensorType fromIR(WeightType t) { return static_cast<TensorType>(static_cast<uint32_t>(t)); }
uint64_t roundCount(double v) { return v <= 0 ? 0 : static_cast<uint64_t>(std::llround(v)); }

// The hyperparameters as one dictionary: the IR shows them, and activation and workspace
// sizes (ModelGraph::activation_bytes) are computed from them when reading back.
DictionaryAttr hparamsAttr(Builder& b, const ModelGraph& g) {
  const ModelHParams& hp = g.hparams;
  auto i = [&](int64_t v) { return b.getI64IntegerAttr(v); };
  auto f = [&](float v) { return b.getF32FloatAttr(v); };
  NamedAttrList list;
  list.append("arch", b.getStringAttr(g.architecture));
  list.append("name", b.getStringAttr(g.name));
  list.append("n_vocab", i(hp.n_vocab));
  list.append("n_ctx_train", i(hp.n_ctx_train));
  list.append("n_embd", i(hp.n_embd));
  list.append("n_layer", i(hp.n_layer));
  list.append("n_ff", i(hp.n_ff));
  list.append("n_head", i(hp.n_head));
  list.append("n_head_kv", i(hp.n_head_kv));
  list.append("head_dim", i(hp.head_dim));
  list.append("rope_dim", i(hp.rope_dim));
  if (hp.latent_attention()) { // what sizes its cache and scratch rows
    list.append("kv_lora_rank", i(hp.kv_lora_rank));
    list.append("q_lora_rank", i(hp.q_lora_rank));
    list.append("head_dim_v", i(hp.head_dim_v));
    list.append("latent_cache", i(hp.latent_cache ? 1 : 0));
  }
  if (hp.has_recurrent_layers()) { // what sizes the recurrent layers' states
    list.append("ssm_conv_kernel", i(hp.delta_net.conv_kernel));
    list.append("ssm_d_k", i(hp.delta_net.d_k));
    list.append("ssm_d_v", i(hp.delta_net.d_v));
    list.append("ssm_n_k", i(hp.delta_net.n_k_heads));
    list.append("ssm_n_v", i(hp.delta_net.n_v_heads));
    list.append("ssm_in", i(hp.delta_net_ssm_in ? 1 : 0));
  }
  list.append("n_expert", i(hp.n_expert));
  list.append("n_expert_used", i(hp.n_expert_used));
  list.append("n_ff_exp", i(hp.n_ff_exp));
  list.append("n_ff_shexp", i(hp.n_ff_shexp));
  // Dense layers among the MoE ones widen the FFN scratch (activation_floats).
  list.append("n_dense_lead", i(hp.n_dense_lead));
  list.append("moe_layer_step", i(hp.moe_layer_step));
  list.append("rms_eps", f(hp.rms_eps));
  list.append("rope_freq_base", f(hp.rope_freq_base));
  list.append("rope_freq_scale", f(hp.rope_freq_scale));
  return list.getDictionary(b.getContext());
}

DictionaryAttr weightsAttr(Builder& b, const SubLayerInfo& s) {
  std::map<std::string, int64_t> byType;
  for (const TensorRef& t : s.tensors)
    byType[stringifyWeightType(toIR(t.type)).str()] += static_cast<int64_t>(t.bytes);
  NamedAttrList list;
  for (const auto& [type, bytes] : byType)
    list.append(type, b.getI64IntegerAttr(bytes));
  return list.getDictionary(b.getContext());
}

Operation* createSubLayer(OpBuilder& b, Location loc, const SubLayerInfo& s, DictionaryAttr w,
                          uint64_t flops, uint64_t bytes, TensorType kvType) {
  const uint64_t layer = static_cast<uint64_t>(std::max<int64_t>(s.layer, 0));
  switch (s.kind) {
  case SubLayerKind::kEmbed:
    return b.create<EmbedOp>(loc, s.name, s.embed_row_bytes, w, flops, bytes);
  case SubLayerKind::kAttention:
    return b.create<AttnOp>(loc, s.name, layer, s.n_head, s.head_dim, s.kv_values_per_token,
                            s.kv_bytes_per_token(kvType),
                            s.attn_window > 0 ? b.getI64IntegerAttr(s.attn_window) : IntegerAttr(),
                            s.recurrent(), w, flops, bytes);
  case SubLayerKind::kFfn:
    return b.create<FfnOp>(loc, s.name, layer, w, flops, bytes);
  case SubLayerKind::kMoe:
    return b.create<MoeOp>(loc, s.name, layer, s.n_expert_used, s.n_expert, s.expert_bytes,
                           s.shared_bytes,
                           s.expert_prob.empty() ? nullptr : b.getF64ArrayAttr(s.expert_prob), w,
                           flops, bytes);
  case SubLayerKind::kHead:
    return b.create<HeadOp>(loc, s.name, w, flops, bytes);
  }
  return nullptr;
}

// Reads an integer hyperparameter, failing with the key's name when it is missing.
LogicalResult readHParam(ModelOp model, StringRef key, int64_t& out) {
  auto value = model.getHparams().getAs<IntegerAttr>(key);
  if (!value)
    return model.emitOpError("hparams lack the integer '") << key << "'";
  out = value.getInt();
  return success();
}

float readFloat(ModelOp model, StringRef key, float fallback) {
  auto value = model.getHparams().getAs<FloatAttr>(key);
  return value ? static_cast<float>(value.getValueAsDouble()) : fallback;
}

} // namespace

std::string defaultModelSymbol(const ModelGraph& graph) {
  std::string name = graph.name;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      c = '_';
  return name.empty() ? "model" : name;
}

ModelOp buildModelOp(OpBuilder& b, Location loc, const ModelGraph& graph,
                     const ModelImportOptions& options) {
  std::string symbol = options.sym_name.empty() ? defaultModelSymbol(graph) : options.sym_name;
  auto model = b.create<ModelOp>(loc, symbol, graph.fingerprint.hex(), graph.file_size,
                                 options.n_ctx, toIR(options.kv_type), hparamsAttr(b, graph));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&model.getBody().emplaceBlock());
  for (const SubLayerInfo& s : graph.sublayers) {
    uint64_t flops = roundCount(s.flops(1, options.n_ctx));
    uint64_t bytes = roundCount(s.bytes_moved(1, options.n_ctx, options.kv_type));
    Operation* op = createSubLayer(b, loc, s, weightsAttr(b, s), flops, bytes, options.kv_type);
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(&op->getRegion(0).emplaceBlock());
    for (const TensorRef& t : s.tensors)
      b.create<TensorOp>(loc, t.name, toIR(t.type), t.dims, t.file_offset, t.bytes);
    for (const MatmulGroup& m : s.matmuls)
      b.create<MatmulOp>(loc, toIR(m.type), m.rows, m.cols, m.matrix_bytes, m.count, m.pool,
                         m.last_token_only, m.expert_gate_up);
  }
  return model;
}

int64_t contextOf(ModelOp model) { return static_cast<int64_t>(model.getNCtx()); }
TensorType kvTypeOf(ModelOp model) { return fromIR(model.getKvType()); }

FailureOr<ModelGraph> readModelGraph(ModelOp model) {
  ModelGraph g;
  DictionaryAttr hp = model.getHparams();
  if (auto arch = hp.getAs<StringAttr>("arch"))
    g.architecture = arch.str();
  g.hparams.family = find_arch_family(g.architecture.empty() ? "llama" : g.architecture);
  if (!g.hparams.family)
    return model.emitOpError(unknown_arch_message(g.architecture));
  if (auto name = hp.getAs<StringAttr>("name"))
    g.name = name.str();
  ModelHParams& h = g.hparams;
  h.name = g.name;
  if (failed(readHParam(model, "n_vocab", h.n_vocab)) ||
      failed(readHParam(model, "n_embd", h.n_embd)) ||
      failed(readHParam(model, "n_layer", h.n_layer)) ||
      failed(readHParam(model, "n_ff", h.n_ff)) || failed(readHParam(model, "n_head", h.n_head)) ||
      failed(readHParam(model, "n_head_kv", h.n_head_kv)) ||
      failed(readHParam(model, "head_dim", h.head_dim)))
    return failure();
  h.n_ctx_train = model.getHParam("n_ctx_train");
  h.rope_dim = model.getHParam("rope_dim", h.head_dim);
  h.kv_lora_rank = model.getHParam("kv_lora_rank");
  h.q_lora_rank = model.getHParam("q_lora_rank");
  h.head_dim_v = model.getHParam("head_dim_v");
  h.latent_cache = model.getHParam("latent_cache") != 0;
  DeltaNetDims& dn = h.delta_net;
  dn.conv_kernel = model.getHParam("ssm_conv_kernel");
  dn.d_k = model.getHParam("ssm_d_k");
  dn.d_v = model.getHParam("ssm_d_v");
  dn.n_k_heads = model.getHParam("ssm_n_k");
  dn.n_v_heads = model.getHParam("ssm_n_v");
  dn.grouped_ba = !h.family->split_beta_alpha;
  dn.tiled_heads = h.family->split_beta_alpha;
  h.delta_net_ssm_in = model.getHParam("ssm_in") != 0;
  h.n_expert = model.getHParam("n_expert");
  h.n_expert_used = model.getHParam("n_expert_used");
  h.n_ff_exp = model.getHParam("n_ff_exp", h.n_expert > 0 ? h.n_ff : 0);
  h.n_ff_shexp = model.getHParam("n_ff_shexp");
  h.n_dense_lead = model.getHParam("n_dense_lead");
  h.moe_layer_step = model.getHParam("moe_layer_step", 1);
  h.rms_eps = readFloat(model, "rms_eps", h.rms_eps);
  h.rope_freq_base = readFloat(model, "rope_freq_base", h.rope_freq_base);
  h.rope_freq_scale = readFloat(model, "rope_freq_scale", h.rope_freq_scale);

  // 32 hex digits, hi then lo (ModelFingerprint::hex).
  StringRef hex = model.getFingerprint();
  if (hex.size() != 32 || hex.take_front(16).getAsInteger(16, g.fingerprint.hi) ||
      hex.drop_front(16).getAsInteger(16, g.fingerprint.lo))
    return model.emitOpError("fingerprint '") << hex << "' is not 32 hex digits";
  g.file_size = model.getFileSize();

  for (SubLayerOpInterface op : model.getSubLayers()) {
    SubLayerInfo s;
    s.name = op.getSubLayerName().str();
    s.layer = op.getLayerIndex();
    llvm::TypeSwitch<Operation*>(op.getOperation())
        .Case([&](EmbedOp e) {
          s.kind = SubLayerKind::kEmbed;
          s.embed_row_bytes = e.getRowBytes();
        })
        .Case([&](AttnOp a) {
          s.kind = SubLayerKind::kAttention;
          s.n_head = static_cast<int64_t>(a.getNHead());
          s.head_dim = static_cast<int64_t>(a.getHeadDim());
          s.kv_values_per_token = static_cast<int64_t>(a.getKvValues());
          if (auto window = a.getWindow())
            s.attn_window = static_cast<int64_t>(*window);
          if (a.getRecurrent() && s.layer >= 0 && s.layer < h.n_layer) {
            s.delta_net = h.delta_net;
            s.kv_dim = h.kv_dim();
            h.recurrent_layers.resize(static_cast<size_t>(h.n_layer), false);
            h.recurrent_layers[static_cast<size_t>(s.layer)] = true;
          }
        })
        .Case([&](FfnOp) { s.kind = SubLayerKind::kFfn; })
        .Case([&](MoeOp m) {
          s.kind = SubLayerKind::kMoe;
          s.n_expert = static_cast<int64_t>(m.getExperts());
          s.n_expert_used = static_cast<int64_t>(m.getExpertsUsed());
          s.expert_bytes = m.getExpertBytes();
          s.shared_bytes = m.getSharedBytes();
          if (auto prob = m.getRouting())
            for (Attribute p : *prob)
              s.expert_prob.push_back(cast<FloatAttr>(p).getValueAsDouble());
        })
        .Case([&](HeadOp) { s.kind = SubLayerKind::kHead; });
    for (Operation& child : *op.getBodyBlock()) {
      if (auto t = dyn_cast<TensorOp>(child)) {
        s.tensors.push_back({t.getName().str(),
                             std::vector<int64_t>(t.getDims().begin(), t.getDims().end()),
                             fromIR(t.getType()), t.getOffset(), t.getBytes()});
        s.weight_bytes += t.getBytes();
      } else if (auto m = dyn_cast<MatmulOp>(child)) {
        MatmulGroup group;
        group.type = fromIR(m.getType());
        group.rows = static_cast<int64_t>(m.getRows());
        group.cols = static_cast<int64_t>(m.getCols());
        group.matrix_bytes = m.getMatrixBytes();
        group.count = static_cast<int64_t>(m.getCount());
        group.pool = static_cast<int64_t>(m.getPool());
        group.last_token_only = m.getLastToken();
        group.expert_gate_up = m.getGateUp();
        s.matmuls.push_back(group);
      }
    }
    g.sublayers.push_back(std::move(s));
  }
  return g;
}

} // namespace pshard::ir
