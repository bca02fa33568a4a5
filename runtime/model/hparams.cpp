// Reading the hyperparameters: the family from general.architecture, every count under
// the `{arch}.` prefix, then which optional parts the file's tensors have.
#include "runtime/model/hparams.h"

#include "runtime/model/hparams_keys.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

Status check_positive(const std::string& what, int64_t v) {
  if (v <= 0)
    return invalid_format(what + " must be positive, got " + std::to_string(v));
  return Status::ok_status();
}

// Every layer has blk.N.<role>.weight, or none does; `present` says which. With
// `moe_layers`, only the layers that route are compared (a MoE model's expert tensors);
// else only the layers that attend (a recurrent layer has none of attention's tensors).
Status layers_agree(const gguf::GgufFile& f, const ModelHParams& hp, const std::string& role,
                    bool* present, bool moe_layers = false) {
  auto has = [&](int64_t il) {
    return f.find_tensor("blk." + std::to_string(il) + "." + role) != nullptr;
  };
  auto compared = [&](int64_t il) {
    return moe_layers ? hp.is_moe_layer(il) : !hp.is_recurrent_layer(il);
  };
  int64_t first = 0;
  while (first < hp.n_layer && !compared(first))
    ++first;
  *present = first < hp.n_layer && has(first);
  for (int64_t il = first + 1; il < hp.n_layer; ++il)
    if (compared(il) && has(il) != *present)
      return invalid_format("tensor '" + role + "' is in layer " +
                            std::to_string(*present ? first : il) + " but not in layer " +
                            std::to_string(*present ? il : first) + "; every " +
                            (moe_layers ? "MoE layer" : "layer") + " of a " +
                            std::string(hp.family->name) + " model must have the same tensors");
  return Status::ok_status();
}

// Decides an optional part from the file: absent (the file must not have it),
// optional (whatever the file has, all layers alike) or required.
Status resolve_part(const gguf::GgufFile& f, const ModelHParams& hp, Presence presence,
                    const std::string& role, const char* what, bool* out, bool moe_layers = false) {
  bool present = false;
  PSHARD_RETURN_IF_ERROR(layers_agree(f, hp, role, &present, moe_layers));
  if (presence == Presence::kRequired && !present)
    return invalid_format(
        "tensor 'blk." +
        std::to_string(moe_layers ? hp.first_moe_layer() : hp.first_attention_layer()) + "." +
        role + "' is missing: " + std::string(hp.family->name) + " models have " + what);
  *out = presence != Presence::kAbsent && present;
  return Status::ok_status();
}

// The width of a tensor's output dimension (dims[1]) in layer `layer`, or 0 when absent.
int64_t layer_rows(const gguf::GgufFile& f, const std::string& role, int64_t layer = 0) {
  const gguf::TensorInfo* t = f.find_tensor("blk." + std::to_string(layer) + "." + role);
  return t && t->dims.size() >= 2 ? t->dims[1] : 0;
}

// A head's size: attention.key_length (= value_length; either alone stands for both), else
// n_embd / n_head.
Status read_head_size(const HParamKeys& k, ModelHParams& hp) {
  int64_t key_length = 0, value_length = 0;
  PSHARD_RETURN_IF_ERROR(k.optional("attention.key_length", &key_length));
  PSHARD_RETURN_IF_ERROR(k.optional("attention.value_length", &value_length));
  if (key_length == 0 && value_length == 0) {
    if (hp.n_embd % hp.n_head != 0)
      return invalid_format(k.key("embedding_length") + " " + std::to_string(hp.n_embd) +
                            " is not a multiple of " + k.key("attention.head_count") + " " +
                            std::to_string(hp.n_head) + " and " + k.key("attention.key_length") +
                            " is absent: the head size is unknown");
    hp.head_dim = hp.n_embd / hp.n_head;
  } else {
    if (key_length == 0)
      key_length = value_length;
    if (value_length == 0)
      value_length = key_length;
    if (key_length != value_length)
      return unsupported(k.key("attention.key_length") + " " + std::to_string(key_length) +
                         " differs from " + k.key("attention.value_length") + " " +
                         std::to_string(value_length) +
                         "; pshard runs attention whose keys and values have one head size");
    hp.head_dim = key_length;
  }
  return Status::ok_status();
}

Status read_attention(const HParamKeys& k, ModelHParams& hp) {
  PSHARD_RETURN_IF_ERROR(k.required("attention.head_count", &hp.n_head));
  hp.n_head_kv = hp.n_head;
  PSHARD_RETURN_IF_ERROR(k.optional("attention.head_count_kv", &hp.n_head_kv));
  PSHARD_RETURN_IF_ERROR(check_positive(k.key("attention.head_count"), hp.n_head));
  PSHARD_RETURN_IF_ERROR(check_positive(k.key("attention.head_count_kv"), hp.n_head_kv));
  if (hp.n_head % hp.n_head_kv != 0)
    return invalid_format(k.key("attention.head_count") + " " + std::to_string(hp.n_head) +
                          " is not a multiple of " + k.key("attention.head_count_kv") + " " +
                          std::to_string(hp.n_head_kv));
  PSHARD_RETURN_IF_ERROR(hp.family->latent_attention ? read_latent_dims(k, hp)
                                                     : read_head_size(k, hp));
  PSHARD_RETURN_IF_ERROR(check_positive(k.key("attention.key_length"), hp.head_dim));
  // Encoders LayerNorm (BERT's eps is 1e-12, ModernBERT's 1e-5); the others RMSNorm.
  const bool layer_norms = hp.family->encoder || hp.family->layer_norms;
  if (layer_norms) {
    hp.rms_eps = hp.family->encoder ? 1e-12f : 1e-5f;
    PSHARD_RETURN_IF_ERROR(k.optional("attention.layer_norm_epsilon", &hp.rms_eps));
  } else {
    PSHARD_RETURN_IF_ERROR(k.optional("attention.layer_norm_rms_epsilon", &hp.rms_eps));
  }
  // Embedding models that attend both ways (BERT, EmbeddingGemma; gte-Qwen2's decoder
  // converted with causal false) run each text as one pass whose queries see all of it.
  hp.causal = !hp.family->encoder && !hp.family->attends_both_ways;
  PSHARD_RETURN_IF_ERROR(k.optional("attention.causal", &hp.causal));
  if (hp.causal && hp.family->attends_both_ways)
    return unsupported(k.key("attention.causal") + " is true, but " + std::string(hp.family->name) +
                       " models attend both ways (their windows are centred on the query); "
                       "is general.architecture right?");
  if (!(hp.rms_eps > 0.0f))
    return invalid_format(
        k.key(layer_norms ? "attention.layer_norm_epsilon" : "attention.layer_norm_rms_epsilon") +
        " must be positive");
  return Status::ok_status();
}

// Group-limited routing: the groups must split the experts evenly, keep at least one and
// leave k experts to choose from.
Status read_expert_groups(const HParamKeys& k, ModelHParams& hp) {
  PSHARD_RETURN_IF_ERROR(k.optional("expert_group_count", &hp.n_expert_groups));
  PSHARD_RETURN_IF_ERROR(k.optional("expert_group_used_count", &hp.n_expert_groups_used));
  if (hp.n_expert_groups <= 1) {
    hp.n_expert_groups = hp.n_expert_groups_used = 1;
    return Status::ok_status();
  }
  const int64_t g = hp.n_expert_groups, used = hp.n_expert_groups_used;
  if (hp.n_expert % g != 0 || used < 1 || used > g || used * (hp.n_expert / g) < hp.n_expert_used)
    return invalid_format(k.key("expert_group_count") + " " + std::to_string(g) + " and " +
                          k.key("expert_group_used_count") + " " + std::to_string(used) +
                          " must split the " + std::to_string(hp.n_expert) +
                          " experts evenly and keep at least " + std::to_string(hp.n_expert_used) +
                          " of them to choose from");
  return Status::ok_status();
}

// How the router weighs its experts: the gating function (the family's unless the file
// names one), renormalising, the routed weights' factor and the selection bias.
Status read_routing(const gguf::GgufFile& f, const HParamKeys& k, ModelHParams& hp) {
  hp.normalize_expert_weights = hp.family->normalize_expert_weights;
  PSHARD_RETURN_IF_ERROR(k.optional("expert_weights_norm", &hp.normalize_expert_weights));
  hp.gating = hp.family->gating;
  int64_t func = 0; // llama.cpp's values; 0 (none): the family's
  PSHARD_RETURN_IF_ERROR(k.optional("expert_gating_func", &func));
  if (func == 1 || func == 2)
    hp.gating = func == 1 ? ExpertGating::kSoftmax : ExpertGating::kSigmoid;
  else if (func != 0)
    return unsupported(k.key("expert_gating_func") + " " + std::to_string(func) +
                       " is not a gating pshard runs (1: softmax, 2: sigmoid)");
  PSHARD_RETURN_IF_ERROR(read_expert_groups(k, hp));
  PSHARD_RETURN_IF_ERROR(k.optional("expert_weights_scale", &hp.expert_weights_scale));
  if (!(hp.expert_weights_scale > 0.0f) || !std::isfinite(hp.expert_weights_scale))
    return invalid_format(k.key("expert_weights_scale") + " must be a positive number");
  return resolve_part(f, hp, hp.family->expert_selection_bias, "exp_probs_b.bias",
                      "an expert selection bias (exp_probs_b)", &hp.expert_selection_bias,
                      /*moe_layers=*/true);
}

// Qwen3-VL: how many of the first layers take an image's DeepStack rows (0 when absent).
Status read_deepstack(const HParamKeys& k, ModelHParams& hp) {
  if (!hp.family->deepstack) {
    if (k.has("n_deepstack_layers"))
      return unsupported(k.key("n_deepstack_layers") + " is set, but " +
                         std::string(hp.family->name) +
                         " models take no DeepStack rows; is general.architecture right?");
    return Status::ok_status();
  }
  PSHARD_RETURN_IF_ERROR(k.optional("n_deepstack_layers", &hp.n_deepstack));
  if (hp.n_deepstack < 0 || hp.n_deepstack > hp.n_layer)
    return invalid_format(k.key("n_deepstack_layers") + " " + std::to_string(hp.n_deepstack) +
                          " must be between 0 and " + k.key("block_count") + " " +
                          std::to_string(hp.n_layer));
  return Status::ok_status();
}

// The dense layers of a MoE model: the leading ones (GLM-4.5's first 1 or 3, ERNIE's) and,
// with an interleaving step, those between routed ones.
Status read_dense_layers(const HParamKeys& k, ModelHParams& hp) {
  PSHARD_RETURN_IF_ERROR(k.optional("leading_dense_block_count", &hp.n_dense_lead));
  PSHARD_RETURN_IF_ERROR(k.optional("interleave_moe_layer_step", &hp.moe_layer_step));
  if (hp.moe_layer_step < 1)
    return invalid_format(k.key("interleave_moe_layer_step") + " must be at least 1, got " +
                          std::to_string(hp.moe_layer_step));
  if (hp.n_dense_lead < 0 || hp.first_moe_layer() >= hp.n_layer)
    return invalid_format(k.key("leading_dense_block_count") + " " +
                          std::to_string(hp.n_dense_lead) + " and " +
                          k.key("interleave_moe_layer_step") + " " +
                          std::to_string(hp.moe_layer_step) + " leave none of the " +
                          std::to_string(hp.n_layer) + " layers the model runs routing experts");
  return Status::ok_status();
}

Status read_experts(const gguf::GgufFile& f, const HParamKeys& k, ModelHParams& hp) {
  const FfnForm form = hp.family->ffn;
  PSHARD_RETURN_IF_ERROR(k.optional("expert_count", &hp.n_expert));
  PSHARD_RETURN_IF_ERROR(k.optional("expert_used_count", &hp.n_expert_used));
  if (form == FfnForm::kDense && hp.n_expert > 0)
    return unsupported(k.key("expert_count") + " is set, but " + std::string(hp.family->name) +
                       " models are dense; is general.architecture right?");
  if (form == FfnForm::kMoe && hp.n_expert <= 0)
    return invalid_format("metadata key '" + k.key("expert_count") + "' is missing or zero; it is "
                          "required for " + std::string(hp.family->name) + " models");
  if (hp.n_expert <= 0) {
    if (hp.n_expert_used != 0)
      return invalid_format(k.key("expert_used_count") + " is set but " + k.key("expert_count") +
                            " is not");
    return Status::ok_status();
  }
  if (hp.n_expert_used <= 0 || hp.n_expert_used > hp.n_expert)
    return invalid_format(k.key("expert_used_count") + " " + std::to_string(hp.n_expert_used) +
                          " must be between 1 and " + k.key("expert_count") + " " +
                          std::to_string(hp.n_expert));
  PSHARD_RETURN_IF_ERROR(read_dense_layers(k, hp));
  // Files written before the width keys existed: the tensors' own shape.
  hp.n_ff_exp = hp.n_ff;
  if (hp.family->expert_width_key) {
    hp.n_ff_exp = layer_rows(f, "ffn_gate_exps.weight", hp.first_moe_layer());
    PSHARD_RETURN_IF_ERROR(k.optional("expert_feed_forward_length", &hp.n_ff_exp));
  }
  PSHARD_RETURN_IF_ERROR(check_positive(k.key("expert_feed_forward_length"), hp.n_ff_exp));
  PSHARD_RETURN_IF_ERROR(read_routing(f, k, hp));
  bool shared = false;
  PSHARD_RETURN_IF_ERROR(resolve_part(f, hp, hp.family->shared_expert, "ffn_gate_shexp.weight",
                                      "a shared expert (ffn_*_shexp)", &shared,
                                      /*moe_layers=*/true));
  if (shared) {
    hp.n_ff_shexp = layer_rows(f, "ffn_gate_shexp.weight", hp.first_moe_layer());
    int64_t count = 0; // GLM-4.5: the shared expert is this many routed experts wide
    PSHARD_RETURN_IF_ERROR(k.optional("expert_shared_count", &count));
    if (count > 0)
      hp.n_ff_shexp = count * hp.n_ff_exp;
    PSHARD_RETURN_IF_ERROR(k.optional("expert_shared_feed_forward_length", &hp.n_ff_shexp));
    PSHARD_RETURN_IF_ERROR(
        check_positive(k.key("expert_shared_feed_forward_length"), hp.n_ff_shexp));
  }
  return Status::ok_status();
}

Status read_optional_parts(const gguf::GgufFile& f, ModelHParams& hp) {
  const ArchFamily& fam = *hp.family;
  PSHARD_RETURN_IF_ERROR(
      resolve_part(f, hp, fam.qkv_bias, "attn_q.bias", "q/k/v biases", &hp.qkv_bias));
  PSHARD_RETURN_IF_ERROR(
      resolve_part(f, hp, fam.out_bias, "attn_output.bias", "output biases", &hp.out_bias));
  PSHARD_RETURN_IF_ERROR(resolve_part(f, hp, fam.norm_biases, "attn_norm.bias",
                                      "norm biases (attn_norm, ffn_norm, output_norm)",
                                      &hp.norm_biases));
  hp.output_bias = fam.output_bias != Presence::kAbsent && f.find_tensor("output.bias");
  if (fam.output_bias == Presence::kRequired && !hp.output_bias)
    return invalid_format("tensor 'output.bias' is missing: " + std::string(fam.name) +
                          " models add a bias to their logits");
  PSHARD_RETURN_IF_ERROR(resolve_part(f, hp, fam.qk_norm, "attn_q_norm.weight",
                                      "per-head q/k norms (attn_q_norm, attn_k_norm)",
                                      &hp.qk_norm));
  PSHARD_RETURN_IF_ERROR(resolve_part(f, hp, fam.fused_qkv, "attn_qkv.weight",
                                      "q, k and v in one matrix (attn_qkv)", &hp.fused_qkv));
  PSHARD_RETURN_IF_ERROR(resolve_part(f, hp, fam.post_norms, "post_attention_norm.weight",
                                      "post-norms (post_attention_norm, post_ffw_norm)",
                                      &hp.post_norms));
  PSHARD_RETURN_IF_ERROR(resolve_part(f, hp, fam.attn_sinks, "attn_sinks.weight",
                                      "attention sinks (attn_sinks)", &hp.attn_sinks));
  PSHARD_RETURN_IF_ERROR(resolve_part(f, hp, fam.moe_biases, "ffn_gate_inp.bias",
                                      "router and expert biases (ffn_gate_inp.bias, "
                                      "ffn_{gate,up,down}_exps.bias)",
                                      &hp.moe_biases, /*moe_layers=*/true));
  hp.tied_output = !fam.encoder && f.find_tensor("output.weight") == nullptr;
  const gguf::TensorInfo* types = fam.encoder ? f.find_tensor("token_types.weight") : nullptr;
  hp.token_types = types != nullptr;
  if (types) { // BERT's two rows; the shape check of binding refuses a 1-D tensor
    hp.n_token_types = types->dims.size() >= 2 ? types->dims[1] : 0;
    PSHARD_RETURN_IF_ERROR(check_positive("token_types.weight's row count", hp.n_token_types));
  }
  return Status::ok_status();
}

// A cross-encoder reads its pair's second text as token type 1 (pair_separator): BERT's
// rerankers (pooling rank, two token types), whose separator is the vocabulary's
// (llama.cpp writes it as seperator_token_id, sic; else EOS).
Status read_pair_separator(const gguf::GgufFile& f, ModelHParams& hp) {
  if (hp.causal || hp.pooling != Pooling::kRank || hp.n_token_types < 2)
    return Status::ok_status();
  for (const char* key : {"tokenizer.ggml.seperator_token_id", "tokenizer.ggml.eos_token_id"}) {
    if (!f.find(key))
      continue;
    PSHARD_ASSIGN_OR_RETURN(const int64_t id, f.get_int(key));
    if (id >= 0 && id < hp.n_vocab)
      hp.pair_separator = static_cast<TokenId>(id);
    return Status::ok_status();
  }
  return Status::ok_status();
}

} // namespace

int64_t ModelHParams::first_moe_layer() const {
  int64_t il = n_dense_lead;
  while (il < n_layer && !is_moe_layer(il))
    ++il;
  return il;
}

int64_t ModelHParams::ffn_scratch_width() const {
  if (!is_moe())
    return n_ff;
  return std::max({n_ff_exp, n_ff_shexp, has_dense_layers() ? n_ff : int64_t{0}});
}

RopeParams ModelHParams::rope(const float* freq_factors) const {
  RopeParams p;
  p.head_dim = attn_key_dim(); // MLA: rotated part first, as its queries and keys hold it
  p.rot_dim = rope_dim;
  p.freq_base = rope_freq_base;
  p.freq_scale = rope_freq_scale;
  p.freq_factors = freq_factors;
  p.neox = family->rope_style == RopeStyle::kNeox;
  p.scaling = rope_scaling;
  p.scaling_factor = rope_scaling_factor;
  p.low_freq_factor = rope_low_freq_factor;
  p.high_freq_factor = rope_high_freq_factor;
  p.n_ctx_orig = rope_ctx_orig;
  p.ext_factor = yarn_ext_factor;
  p.attn_factor = yarn_attn_factor;
  p.beta_fast = yarn_beta_fast;
  p.beta_slow = yarn_beta_slow;
  for (int c = 0; c < 3; ++c)
    p.sections[c] = rope_sections[c];
  p.interleaved = family->interleaved_mrope;
  return p;
}

RopeParams ModelHParams::rope(const float* freq_factors, int64_t layer) const {
  RopeParams p = rope(freq_factors);
  if (!is_local_layer(layer) || local_rope_base <= 0.0f)
    return p;
  if (family->sliding.local_keeps_scaling) { // gpt-oss: another base, the same scaling
    p.freq_base = local_rope_base;
    return p;
  }
  // Gemma 3's local layers: their own base, none of the global layers' scaling.
  RopeParams local;
  local.head_dim = p.head_dim;
  local.rot_dim = p.rot_dim;
  local.freq_base = local_rope_base;
  local.neox = p.neox;
  return local;
}

namespace {

Result<ModelHParams> read_hparams(const gguf::GgufFile& f, const HParamKeys& k, ModelHParams hp);

} // namespace

Result<ModelHParams> read_model_hparams(const gguf::GgufFile& f, const HParamOverrides* overrides) {
  PSHARD_ASSIGN_OR_RETURN(std::string arch, f.get_string("general.architecture"));
  ModelHParams hp;
  hp.family = find_arch_family(arch);
  if (!hp.family)
    return unsupported(unknown_arch_message(arch));
  // --override-kv's whole keys become suffixes of this architecture's keys.
  HParamOverrides resolved = overrides ? *overrides : HParamOverrides{};
  const std::string prefix = arch + ".";
  for (const auto& [key, value] : resolved.by_key) {
    if (!key.starts_with(prefix))
      return invalid_argument("--override-kv " + key + ": overrides apply to the model's " +
                              prefix + "* hyperparameters (this is a " + arch + " model)");
    resolved.values[key.substr(prefix.size())] = value;
  }
  const HParamKeys k(f, *hp.family, &resolved);
  PSHARD_ASSIGN_OR_RETURN(hp, read_hparams(f, k, std::move(hp)));
  for (const auto& [key, value] : resolved.by_key)
    if (!k.consulted(key.substr(prefix.size())))
      return invalid_argument("--override-kv " + key + ": a " + arch +
                              " model's loader never reads that key, so it would change nothing");
  return hp;
}

namespace {

Result<ModelHParams> read_hparams(const gguf::GgufFile& f, const HParamKeys& k, ModelHParams hp) {
  if (f.find("general.name")) {
    PSHARD_ASSIGN_OR_RETURN(hp.name, f.get_string("general.name"));
  }
  PSHARD_RETURN_IF_ERROR(k.required("embedding_length", &hp.n_embd));
  PSHARD_RETURN_IF_ERROR(k.required("block_count", &hp.n_layer));
  if (hp.family->ffn == FfnForm::kMoe)
    PSHARD_RETURN_IF_ERROR(k.optional("feed_forward_length", &hp.n_ff));
  else
    PSHARD_RETURN_IF_ERROR(k.required("feed_forward_length", &hp.n_ff));
  hp.n_ctx_train = 4096;
  PSHARD_RETURN_IF_ERROR(k.optional("context_length", &hp.n_ctx_train));
  PSHARD_RETURN_IF_ERROR(check_positive(k.key("embedding_length"), hp.n_embd));
  PSHARD_RETURN_IF_ERROR(check_positive(k.key("block_count"), hp.n_layer));
  PSHARD_RETURN_IF_ERROR(k.optional("nextn_predict_layers", &hp.n_nextn));
  if (hp.n_nextn < 0 || hp.n_nextn >= hp.n_layer)
    return invalid_format(k.key("nextn_predict_layers") + " " + std::to_string(hp.n_nextn) +
                          " must be at least 0 and less than " + k.key("block_count") + " " +
                          std::to_string(hp.n_layer));
  hp.n_layer -= hp.n_nextn;
  PSHARD_RETURN_IF_ERROR(check_positive(k.key("context_length"), hp.n_ctx_train));
  PSHARD_RETURN_IF_ERROR(read_attention(k, hp));
  if (hp.family->gated_delta_net)
    PSHARD_RETURN_IF_ERROR(read_delta_net(k, hp));
  PSHARD_RETURN_IF_ERROR(read_rope(k, hp));
  PSHARD_RETURN_IF_ERROR(read_experts(f, k, hp));
  if (!hp.is_moe() || hp.has_dense_layers())
    PSHARD_RETURN_IF_ERROR(check_positive(k.key("feed_forward_length"), hp.n_ff));
  PSHARD_RETURN_IF_ERROR(read_optional_parts(f, hp));
  PSHARD_RETURN_IF_ERROR(read_block_options(f, k, hp));
  PSHARD_RETURN_IF_ERROR(read_deepstack(k, hp));
  int64_t pooling = -1;
  PSHARD_RETURN_IF_ERROR(k.optional("pooling_type", &pooling));
  PSHARD_ASSIGN_OR_RETURN(hp.pooling, pooling_from_gguf(pooling));

  // The vocabulary size is the embedding's row count; metadata may omit it.
  if (const gguf::TensorInfo* emb = f.find_tensor("token_embd.weight"); emb && emb->dims.size() == 2)
    hp.n_vocab = emb->dims[1];
  PSHARD_RETURN_IF_ERROR(k.optional("vocab_size", &hp.n_vocab));
  PSHARD_RETURN_IF_ERROR(check_positive("the vocabulary size", hp.n_vocab));
  PSHARD_RETURN_IF_ERROR(read_pair_separator(f, hp));
  return hp;
}

} // namespace

Status check_generates(const ModelHParams& hp) {
  return hp.causal ? Status::ok_status() : unsupported(kEmbedsOnlyMessage);
}

Status check_one_pass_text(const ModelHParams& hp, int64_t n_past, int64_t max_rows) {
  if (hp.causal || n_past == 0)
    return Status::ok_status();
  return invalid_argument(
      "this model attends both ways, so a text is embedded in one pass from position 0, and "
      "this call would continue one at position " +
      std::to_string(n_past) + ": give the whole text in one call (a pass holds up to " +
      std::to_string(max_rows) +
      " tokens; raise the batch size (-b) or, with a schedule, compile a tier that large "
      "(pshard-compile --tiers))");
}

Status check_context_fits(const ModelHParams& hp, int64_t n_ctx) {
  if (hp.has_position_table() && n_ctx > hp.n_ctx_train)
    return invalid_argument("a context of " + std::to_string(n_ctx) +
                            " positions is more than this " + std::string(hp.family->name) +
                            " model's position embeddings hold (" + std::to_string(hp.n_ctx_train) +
                            "); use -c " + std::to_string(hp.n_ctx_train) + " or less");
  return Status::ok_status();
}

} // namespace pshard
