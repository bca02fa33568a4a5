// pshard-server's engine side, on the C API: the model, a batch (continuous batching
// over -np sequences) and the thread that steps it, plus the model's vocabulary and chat
// template for the HTTP layer. Everything here may be called from any HTTP thread.
//
//   PSHARD_ASSIGN_OR_RETURN(auto engine, ServingEngine::start(options));
//   PSHARD_ASSIGN_OR_RETURN(auto ids, engine->tokenize("Hello", true));
//   engine->add(params, generate, &seq);   // events arrive on the stepping thread
#pragma once

#include "tools/common/capi_call.h"
#include "tools/pshard-server/reasoning.h"
#include "tools/pshard-server/sampler_fields.h"
#include "tools/pshard-server/server_options.h"
#include "tools/pshard-server/tool_format.h"

#include <algorithm>
#include <atomic>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace pshard::server {

class ServingEngine {
public:
  static Result<std::unique_ptr<ServingEngine>> start(const ServerOptions& o);
  ~ServingEngine(); // stops stepping, then frees the batch and the model

  pshard_model* model() const { return model_.get(); }
  pshard_batch* batch() const { return batch_.get(); }
  const std::string& model_id() const { return model_ids_.front(); } // what answers name
  const std::vector<std::string>& model_ids() const { return model_ids_; }
  bool serves(std::string_view name) const {
    return std::find(model_ids_.begin(), model_ids_.end(), name) != model_ids_.end();
  }
  const std::string& backend() const { return backend_; }
  int64_t n_ctx() const { return pshard_batch_n_ctx(batch_.get()); }
  int32_t n_vocab() const { return pshard_model_n_vocab(model_.get()); }
  int64_t created() const { return created_; } // unix time the model was loaded
  bool has_vision() const { return pshard_model_has_vision(model_.get()); } // --mmproj
  int32_t max_images() const { return max_images_; }                        // a request's

  Result<std::vector<pshard_token>> tokenize(std::string_view text, bool add_special,
                                             bool parse_special = true) const;
  std::string piece(pshard_token token) const;
  // The tokens the reranker scores for a query and a document (its prompt, or an
  // encoder's framed pair).
  Result<std::vector<pshard_token>> rerank_tokenize(std::string_view query,
                                                    std::string_view document) const;
  Result<std::string> detokenize(std::span<const pshard_token> tokens) const;
  // The conversation as prompt text with the chat template (--chat-template or the
  // model's); the error says how to get one when there is none.
  Result<std::string>
  render_chat(const std::vector<std::pair<std::string, std::string>>& messages) const;
  const std::string& chat_template() const { return chat_template_; } // "" when none
  // How the chat template's models write function calls (tool_format.h).
  const ToolFormat& tool_format() const { return tool_format_for(chat_template_, args_token_); }

  // A chat answer's reasoning, unless a request says otherwise (--reasoning-format).
  ReasoningFormat reasoning_format() const { return reasoning_format_; }
  // Whether the vocabulary holds <think> and </think> as tokens of their own: a thinking
  // model, whose thinking a request may turn off (chat_template_kwargs.enable_thinking).
  bool thinks() const { return thinks_; }
  // Its thought's tags: <think> and </think>, or Mistral's [THINK] and [/THINK].
  const ThoughtTags& thought_tags() const { return *thought_tags_; }
  // Its chat template's generation prompt opens the thought (reasoning.h).
  bool opens_thought() const { return opens_thought_; }
  // The fill-in-the-middle markers (-1 where the model has none).
  const pshard_fim_tokens& fim() const { return fim_; }

  // What a request does not say of its sampling (the sampling flags, else the C API's
  // defaults): the params, and the strings the C API takes (sampler_fields.h).
  const pshard_generate_params& default_sampling() const { return default_sampling_; }
  const SamplerStrings& default_sampler_strings() const { return default_sampler_strings_; }
  // The seed of a request that gives none (or -1): --seed, else a fresh random one each
  // time, so a client's "regenerate" gets another answer, as from llama-server and OpenAI.
  uint64_t unseeded_seed() const;
  // -n: the most tokens a request generates, and what it gets when it asks no number
  // (-1: no cap).
  int64_t n_predict() const { return n_predict_; }

  // How /v1/embeddings pools (--pooling, else the model's pooling_type); PSHARD_POOLING_MODEL
  // when neither names one.
  pshard_pooling pooling() const { return pooling_; }
  // The model has a classification head to score with (a reranker's: /v1/rerank).
  bool reranks() const { return pshard_model_n_cls_labels(model_.get()) > 0; }
  int32_t n_embd() const { return pshard_model_n_embd(model_.get()); }

  std::vector<uint64_t> budgets() const; // compiled, ascending
  Status set_vram_budget(uint64_t bytes);

private:
  ServingEngine() = default;
  void step_loop();

  ModelHandle model_;
  pshard_generate_params default_sampling_{};
  SamplerStrings default_sampler_strings_;
  int64_t seed_ = -1;       // --seed
  int64_t n_predict_ = -1;  // -n
  ModelHandle draft_model_; // -md; freed after the batch that drafts with it
  BatchHandle batch_;
  std::vector<std::string> model_ids_; // never empty
  std::string backend_, chat_template_, template_arg_;
  int32_t max_images_ = 0;
  Status template_error_;
  int64_t created_ = 0;
  pshard_pooling pooling_ = PSHARD_POOLING_MODEL;
  ReasoningFormat reasoning_format_ = ReasoningFormat::kDeepseek;
  bool thinks_ = false;
  bool opens_thought_ = false;
  const ThoughtTags* thought_tags_ = &kThinkTags;
  bool args_token_ = false; // the vocabulary has Mistral's [ARGS] (tool_format_for)
  pshard_fim_tokens fim_ = pshard_fim_tokens_init();
  std::atomic<bool> stop_{false};
  std::thread stepper_;
};

} // namespace pshard::server
