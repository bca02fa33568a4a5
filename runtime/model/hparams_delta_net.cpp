// Gated DeltaNet's hyperparameters (Qwen3-Next, Qwen3.5): the ssm.* sizes as llama.cpp's
// converters write them — conv_kernel the conv's taps, state_size a head's key width,
// group_count the k heads, time_step_rank the v heads, inner_size all v heads' values — and
// which layers recur.
#include "runtime/model/hparams_keys.h"

namespace pshard {

namespace {

// Which layers recur: the file's per-layer flags, else every full_attention_interval-th attends.
Status read_recurrent_layers(const HParamKeys& k, ModelHParams& hp) {
  const std::string flags_key = k.key("attention.recurrent_layers");
  if (const gguf::Array* flags = nullptr; k.has("attention.recurrent_layers")) {
    // llama.cpp's converters list every block, the unrun multi-token-prediction ones too.
    PSHARD_ASSIGN_OR_RETURN(flags, k.file().get_array(flags_key));
    gguf::Array run = *flags;
    if (static_cast<int64_t>(run.items.size()) == hp.n_layer + hp.n_nextn)
      run.items.resize(static_cast<size_t>(hp.n_layer));
    PSHARD_ASSIGN_OR_RETURN(hp.recurrent_layers, layer_flags(run, flags_key, hp.n_layer));
  } else {
    int64_t interval = 4;
    PSHARD_RETURN_IF_ERROR(k.optional("full_attention_interval", &interval));
    if (interval <= 0)
      return invalid_format(k.key("full_attention_interval") + " must be positive, got " +
                            std::to_string(interval));
    hp.recurrent_layers.assign(static_cast<size_t>(hp.n_layer), false);
    for (int64_t il = 0; il < hp.n_layer; ++il)
      hp.recurrent_layers[static_cast<size_t>(il)] = (il + 1) % interval != 0;
  }
  return Status::ok_status();
}

} // namespace

Status read_delta_net(const HParamKeys& k, ModelHParams& hp) {
  DeltaNetDims& d = hp.delta_net;
  int64_t inner = 0;
  PSHARD_RETURN_IF_ERROR(k.required("ssm.conv_kernel", &d.conv_kernel));
  PSHARD_RETURN_IF_ERROR(k.required("ssm.state_size", &d.d_k));
  PSHARD_RETURN_IF_ERROR(k.required("ssm.group_count", &d.n_k_heads));
  PSHARD_RETURN_IF_ERROR(k.required("ssm.time_step_rank", &d.n_v_heads));
  PSHARD_RETURN_IF_ERROR(k.required("ssm.inner_size", &inner));
  if (d.conv_kernel < 1 || d.conv_kernel > 8 || d.d_k <= 0 || d.n_k_heads <= 0 ||
      d.n_v_heads <= 0 || inner <= 0)
    return invalid_format(k.key("ssm.conv_kernel") + " must be 1 to 8, and " +
                          k.key("ssm.state_size") + ", " + k.key("ssm.group_count") + ", " +
                          k.key("ssm.time_step_rank") + " and " + k.key("ssm.inner_size") +
                          " positive");
  if (d.n_v_heads % d.n_k_heads != 0 || inner % d.n_v_heads != 0)
    return invalid_format(k.key("ssm.time_step_rank") + " " + std::to_string(d.n_v_heads) +
                          " must be a multiple of " + k.key("ssm.group_count") + " " +
                          std::to_string(d.n_k_heads) + ", and " + k.key("ssm.inner_size") + " " +
                          std::to_string(inner) + " a multiple of it");
  d.d_v = inner / d.n_v_heads;
  d.eps = hp.rms_eps;
  d.grouped_ba = !hp.family->split_beta_alpha;
  d.tiled_heads = hp.family->split_beta_alpha;
  PSHARD_RETURN_IF_ERROR(read_recurrent_layers(k, hp));

  for (int64_t il = 0; il < hp.n_layer; ++il)
    if (hp.is_recurrent_layer(il)) { // the first one tells the file's form (Qwen3-Next's)
      hp.delta_net_ssm_in =
          !hp.family->split_beta_alpha &&
          k.file().find_tensor("blk." + std::to_string(il) + ".ssm_in.weight") != nullptr;
      break;
    }
  return Status::ok_status();
}

} // namespace pshard
