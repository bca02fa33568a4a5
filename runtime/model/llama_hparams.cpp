#include "runtime/model/llama_hparams.h"

namespace pshard {
namespace {

// Reads an optional unsigned key, keeping `fallback` when it is absent.
Status read_optional(const gguf::GgufFile& f, const std::string& key, int64_t* out) {
  if (!f.find(key))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(uint64_t v, f.get_uint(key));
  *out = static_cast<int64_t>(v);
  return Status::ok_status();
}

Status read_optional(const gguf::GgufFile& f, const std::string& key, float* out) {
  if (!f.find(key))
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(double v, f.get_float(key));
  *out = static_cast<float>(v);
  return Status::ok_status();
}

Status read_required(const gguf::GgufFile& f, const std::string& key, int64_t* out) {
  if (!f.find(key))
    return invalid_format("metadata key '" + key + "' is missing; it is required for llama models");
  return read_optional(f, key, out);
}

Status read_rope_scaling(const gguf::GgufFile& f, LlamaHParams* hp) {
  std::string type = "none";
  if (f.find("llama.rope.scaling.type")) {
    PSHARD_ASSIGN_OR_RETURN(type, f.get_string("llama.rope.scaling.type"));
  }
  float factor = 1.0f;
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.rope.scaling.factor", &factor));
  if (type == "none" || (type == "linear" && factor == 1.0f))
    return Status::ok_status();
  if (type == "linear") {
    if (!(factor > 0))
      return invalid_format("llama.rope.scaling.factor must be positive, got " +
                            std::to_string(factor));
    hp->rope_freq_scale = 1.0f / factor;
    return Status::ok_status();
  }
  return unsupported("RoPE scaling type '" + type +
                     "' is not supported; pshard supports 'none', 'linear' and llama3-style "
                     "frequency factors (tensor rope_freqs.weight)");
}

Status check_positive(const char* what, int64_t v) {
  if (v <= 0)
    return invalid_format(std::string(what) + " must be positive, got " + std::to_string(v));
  return Status::ok_status();
}

} // namespace

Result<LlamaHParams> read_llama_hparams(const gguf::GgufFile& f) {
  PSHARD_ASSIGN_OR_RETURN(std::string arch, f.get_string("general.architecture"));
  if (arch != "llama")
    return unsupported("architecture '" + arch +
                       "' is not supported; pshard runs the GGUF 'llama' family (Llama 2/3, "
                       "Mistral, Mixtral-style MoE)");
  LlamaHParams hp;
  if (f.find("general.name")) {
    PSHARD_ASSIGN_OR_RETURN(hp.name, f.get_string("general.name"));
  }
  PSHARD_RETURN_IF_ERROR(read_required(f, "llama.embedding_length", &hp.n_embd));
  PSHARD_RETURN_IF_ERROR(read_required(f, "llama.block_count", &hp.n_layer));
  PSHARD_RETURN_IF_ERROR(read_required(f, "llama.feed_forward_length", &hp.n_ff));
  PSHARD_RETURN_IF_ERROR(read_required(f, "llama.attention.head_count", &hp.n_head));
  hp.n_head_kv = hp.n_head;
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.attention.head_count_kv", &hp.n_head_kv));
  hp.n_ctx_train = 4096;
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.context_length", &hp.n_ctx_train));
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.attention.layer_norm_rms_epsilon", &hp.rms_eps));
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.rope.freq_base", &hp.rope_freq_base));
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.expert_count", &hp.n_expert));
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.expert_used_count", &hp.n_expert_used));
  PSHARD_RETURN_IF_ERROR(read_rope_scaling(f, &hp));

  PSHARD_RETURN_IF_ERROR(check_positive("llama.embedding_length", hp.n_embd));
  PSHARD_RETURN_IF_ERROR(check_positive("llama.block_count", hp.n_layer));
  PSHARD_RETURN_IF_ERROR(check_positive("llama.feed_forward_length", hp.n_ff));
  PSHARD_RETURN_IF_ERROR(check_positive("llama.attention.head_count", hp.n_head));
  PSHARD_RETURN_IF_ERROR(check_positive("llama.attention.head_count_kv", hp.n_head_kv));
  PSHARD_RETURN_IF_ERROR(check_positive("llama.context_length", hp.n_ctx_train));
  if (hp.n_embd % hp.n_head != 0)
    return invalid_format("llama.embedding_length " + std::to_string(hp.n_embd) +
                          " is not a multiple of llama.attention.head_count " +
                          std::to_string(hp.n_head));
  if (hp.n_head % hp.n_head_kv != 0)
    return invalid_format("llama.attention.head_count " + std::to_string(hp.n_head) +
                          " is not a multiple of llama.attention.head_count_kv " +
                          std::to_string(hp.n_head_kv));
  hp.head_dim = hp.n_embd / hp.n_head;
  hp.rope_dim = hp.head_dim;
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.rope.dimension_count", &hp.rope_dim));
  if (hp.rope_dim <= 0 || hp.rope_dim > hp.head_dim || hp.rope_dim % 2 != 0)
    return invalid_format("llama.rope.dimension_count " + std::to_string(hp.rope_dim) +
                          " must be even and within the head size " + std::to_string(hp.head_dim));
  if (hp.n_expert > 0) {
    if (hp.n_expert_used <= 0 || hp.n_expert_used > hp.n_expert)
      return invalid_format("llama.expert_used_count " + std::to_string(hp.n_expert_used) +
                            " must be between 1 and llama.expert_count " +
                            std::to_string(hp.n_expert));
  } else if (hp.n_expert_used != 0) {
    return invalid_format("llama.expert_used_count is set but llama.expert_count is not");
  }

  // The vocabulary size is the embedding's row count; metadata may omit it.
  if (const gguf::TensorInfo* emb = f.find_tensor("token_embd.weight"); emb && emb->dims.size() == 2)
    hp.n_vocab = emb->dims[1];
  PSHARD_RETURN_IF_ERROR(read_optional(f, "llama.vocab_size", &hp.n_vocab));
  PSHARD_RETURN_IF_ERROR(check_positive("the vocabulary size", hp.n_vocab));
  return hp;
}

} // namespace pshard
