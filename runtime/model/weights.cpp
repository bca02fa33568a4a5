// Binding: for every sub-layer, each tensor of its layout is looked up, its shape
// checked and its bytes placed into the weight struct by role; a tensor of the file
// that no layout names is refused (an architecture pshard does not run as described).
#include "runtime/model/weights.h"

#include "runtime/model/classifier_weights.h"
#include "runtime/model/sublayer_list.h"
#include "runtime/model/tensor_binder.h"
#include "runtime/model/tensor_layout.h"

#include <initializer_list>
#include <string>

namespace pshard {
namespace {

// A fused matrix's consecutive row blocks as matrices of their own (views into it: the
// executor moves them with the fused tensor, whose range holds them).
struct RowBlock {
  MatrixView* view;
  int64_t rows;
};
void split_rows(const MatrixView& fused, std::initializer_list<RowBlock> blocks) {
  int64_t r0 = 0;
  for (const RowBlock& b : blocks) {
    *b.view = fused;
    b.view->rows = b.rows;
    b.view->data = fused.data + static_cast<size_t>(r0) * fused.row_bytes;
    r0 += b.rows;
  }
}

// Where a role's tensor goes; `layer` is null for embed and head.
void place(TensorBinder& b, const ModelHParams& hp, const TensorSpec& spec,
           const gguf::TensorInfo& t, ModelWeights& w, LayerWeights* layer) {
  auto vec = [&](VectorWeight& v) { v = b.vector(t); };
  // Tensors every attention block lists (rope_freqs, LongRoPE's factors): bound once.
  auto shared_vec = [&](VectorWeight& v) {
    if (!v.data)
      vec(v);
  };
  auto mat = [&](MatrixView& m) { m = b.matrix(t); };
  auto exps = [&](ExpertWeights& e) { e = ExpertWeights{b.matrix(t), t.dims[2], {}}; };
  // clang-format off
  switch (spec.role) {
  case WeightRole::kTokenEmbd: mat(w.token_embd); break;
  case WeightRole::kOutputNorm: vec(w.output_norm); break;
  case WeightRole::kOutput: mat(w.output); break;
  case WeightRole::kOutputNormB: vec(w.output_norm_b); break;
  case WeightRole::kOutputBias: vec(w.output_b); break;
  case WeightRole::kRopeFreqs: shared_vec(w.rope_freqs); break;
  case WeightRole::kRopeFactorsLong: shared_vec(w.rope_long); break;
  case WeightRole::kRopeFactorsShort: shared_vec(w.rope_short); break;
  case WeightRole::kAttnNorm: vec(layer->attn.norm); break;
  case WeightRole::kAttnNormB: vec(layer->attn.norm_b); break;
  case WeightRole::kWq: mat(layer->attn.wq); break;
  case WeightRole::kWk: mat(layer->attn.wk); break;
  case WeightRole::kWv: mat(layer->attn.wv); break;
  case WeightRole::kWo: mat(layer->attn.wo); break;
  case WeightRole::kWqkv:
    split_rows(b.matrix(t), {{&layer->attn.wq, hp.q_dim()}, {&layer->attn.wk, hp.kv_dim()},
                             {&layer->attn.wv, hp.kv_dim()}});
    break;
  case WeightRole::kBq: vec(layer->attn.bq); break;
  case WeightRole::kBk: vec(layer->attn.bk); break;
  case WeightRole::kBv: vec(layer->attn.bv); break;
  case WeightRole::kBo: vec(layer->attn.bo); break;
  case WeightRole::kQNorm: vec(layer->attn.q_norm); break;
  case WeightRole::kKNorm: vec(layer->attn.k_norm); break;
  case WeightRole::kAttnSinks: vec(layer->attn.sinks); break;
  case WeightRole::kAttnPostNorm: vec(layer->attn.post_norm); break;
  case WeightRole::kFfnNorm: vec(layer->ffn.norm); layer->moe.norm = layer->ffn.norm; break;
  case WeightRole::kFfnNormB: vec(layer->ffn.norm_b); layer->moe.norm_b = layer->ffn.norm_b; break;
  case WeightRole::kFfnGate: mat(layer->ffn.gate); break;
  case WeightRole::kFfnUp: mat(layer->ffn.up); break;
  case WeightRole::kFfnDown: mat(layer->ffn.down); break;
  case WeightRole::kFfnGateUp:
    split_rows(b.matrix(t), {{&layer->ffn.gate, hp.n_ff}, {&layer->ffn.up, hp.n_ff}});
    break;
  case WeightRole::kFfnPostNorm: vec(layer->ffn.post_norm); break;
  case WeightRole::kRouter: mat(layer->moe.router); break;
  case WeightRole::kGateExps: exps(layer->moe.gate); break;
  case WeightRole::kUpExps: exps(layer->moe.up); break;
  case WeightRole::kDownExps: exps(layer->moe.down); break;
  case WeightRole::kRouterBias: vec(layer->moe.router_bias); break;
  case WeightRole::kGateExpsBias: vec(layer->moe.gate_bias); break;
  case WeightRole::kUpExpsBias: vec(layer->moe.up_bias); break;
  case WeightRole::kDownExpsBias: vec(layer->moe.down_bias); break;
  case WeightRole::kExpertSelectionBias: vec(layer->moe.selection_bias); break;
  case WeightRole::kShexpGateInp: mat(layer->moe.shexp_gate_inp); break;
  case WeightRole::kShexpGate: mat(layer->moe.shexp.gate); break;
  case WeightRole::kShexpUp: mat(layer->moe.shexp.up); break;
  case WeightRole::kShexpDown: mat(layer->moe.shexp.down); break;
  case WeightRole::kPosEmbd: mat(layer->attn.pos_embd); break;
  case WeightRole::kTokenTypes: mat(layer->attn.token_types); break;
  case WeightRole::kEmbdNorm: vec(layer->attn.embd_norm); break;
  case WeightRole::kEmbdNormB: vec(layer->attn.embd_norm_b); break;
  case WeightRole::kAttnOutNorm: vec(layer->attn.out_norm); break;
  case WeightRole::kAttnOutNormB: vec(layer->attn.out_norm_b); break;
  case WeightRole::kFfnUpBias: vec(layer->ffn.up_bias); break;
  case WeightRole::kFfnDownBias: vec(layer->ffn.down_bias); break;
  case WeightRole::kLayerOutNorm: vec(layer->ffn.out_norm); break;
  case WeightRole::kLayerOutNormB: vec(layer->ffn.out_norm_b); break;
  case WeightRole::kWqA: mat(layer->attn.wq_a); break;
  case WeightRole::kQANorm: vec(layer->attn.q_a_norm); break;
  case WeightRole::kWqB: mat(layer->attn.wq_b); break;
  case WeightRole::kWkvA: mat(layer->attn.wkv_a); break;
  case WeightRole::kKvANorm: vec(layer->attn.kv_a_norm); break;
  case WeightRole::kWkB: exps(layer->attn.wk_b); break;
  case WeightRole::kWvB: exps(layer->attn.wv_b); break;
  case WeightRole::kWkvB: mat(layer->attn.wkv_b); break;
  case WeightRole::kSsmQkv: mat(layer->attn.ssm_qkv); break;
  case WeightRole::kSsmGate: mat(layer->attn.ssm_gate); break;
  case WeightRole::kSsmBa: mat(layer->attn.ssm_ba); break;
  case WeightRole::kSsmBeta: mat(layer->attn.ssm_beta); break;
  case WeightRole::kSsmAlpha: mat(layer->attn.ssm_alpha); break;
  case WeightRole::kSsmOut: mat(layer->attn.ssm_out); break;
  case WeightRole::kSsmIn: mat(layer->attn.ssm_in); break;
  case WeightRole::kSsmConv: vec(layer->attn.ssm_conv); break;
  case WeightRole::kSsmA: vec(layer->attn.ssm_a); break;
  case WeightRole::kSsmDt: vec(layer->attn.ssm_dt); break;
  case WeightRole::kSsmNorm: vec(layer->attn.ssm_norm); break;
  }
  // clang-format on
}

} // namespace

Result<ModelWeights> bind_model_weights(const gguf::GgufFile& file, const ModelHParams& hp) {
  if (!file.has_data())
    return invalid_argument("the model was opened metadata-only; open it with its data mapped");
  TensorBinder b(file, "a " + std::string(hp.family->name) + " model",
                 std::string(hp.family->name) + " architecture");
  ModelWeights w;
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (const SubLayer& s : model_sublayers(hp)) {
    LayerWeights* layer = s.layer >= 0 ? &w.layers[static_cast<size_t>(s.layer)] : nullptr;
    for (const TensorSpec& spec : sublayer_tensor_specs(hp, s)) {
      PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* t,
                              b.find(spec.name, spec.dims, spec.required));
      if (t)
        place(b, hp, spec, *t, w, layer);
    }
  }
  for (const auto& t : file.tensors())
    if (is_unrun_block_tensor(hp, t.name))
      b.leave_in_file(t.name);
  PSHARD_ASSIGN_OR_RETURN(w.classifier, bind_classifier(file, hp, b));
  PSHARD_ASSIGN_OR_RETURN(w.projection, bind_embedding_projection(file, hp, b));
  PSHARD_RETURN_IF_ERROR(b.check_all_used());
  return w;
}

} // namespace pshard
