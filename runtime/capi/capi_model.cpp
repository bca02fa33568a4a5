// pshard.h: errors and the model handle.
#include "runtime/capi/capi_internal.h"
#include "runtime/generate/rerank_input.h"
#include "runtime/model/rerank_prompt.h"
#include "runtime/tokenizer/vocabulary.h"
#include "runtime/vision/image_prompt.h"

#include <new>

namespace pshard::capi {
namespace {

thread_local std::string last_error;

} // namespace

pshard_status fail(const Status& status) {
  last_error = status.to_string();
  return static_cast<pshard_status>(static_cast<int>(status.code()));
}

pshard_status ok() { return PSHARD_OK; }

const char* last_error_message() { return last_error.c_str(); }

pshard_status null_argument(const char* function, const char* argument) {
  return fail(invalid_argument(std::string(function) + ": `" + argument + "` must not be NULL"));
}

// Copies `ids` out as the tokenize calls do: the count always, the ids when they fit.
pshard_status copy_tokens(const std::vector<TokenId>& ids, pshard_token* tokens, size_t capacity,
                          size_t* n_tokens) {
  *n_tokens = ids.size();
  if (ids.size() > capacity || (!tokens && !ids.empty()))
    return fail(out_of_range("the text has " + std::to_string(ids.size()) +
                             " tokens, more than the buffer's " + std::to_string(capacity)));
  std::copy(ids.begin(), ids.end(), tokens);
  return PSHARD_OK;
}

pshard_status tokenize(const pshard_model& model, const char* text, size_t text_len, bool add_bos,
                       bool parse_special, pshard_token* tokens, size_t capacity,
                       size_t* n_tokens) {
  if (!text && text_len > 0)
    return null_argument("pshard_model_tokenize", "text");
  if (!n_tokens)
    return null_argument("pshard_model_tokenize", "n_tokens");
  return copy_tokens(
      model.tokenizer->encode(std::string_view(text ? text : "", text_len), add_bos, parse_special),
      tokens, capacity, n_tokens);
}

} // namespace pshard::capi

using namespace pshard;
using pshard::capi::fail;

extern "C" {

const char* pshard_last_error(void) { return capi::last_error_message(); }

const char* pshard_status_name(pshard_status status) {
  return status_code_name(static_cast<StatusCode>(static_cast<int>(status)));
}

pshard_model_params pshard_model_default_params(void) {
  pshard_model_params p{};
  p.size = sizeof p;
  p.use_mmap = true;
  p.yarn_ext_factor = p.yarn_attn_factor = p.yarn_beta_fast = p.yarn_beta_slow = -1.0f;
  return p;
}

pshard_status pshard_model_load(const char* gguf_path, const pshard_model_params* params,
                                pshard_model** out_model) {
  if (!gguf_path)
    return capi::null_argument("pshard_model_load", "gguf_path");
  if (!out_model)
    return capi::null_argument("pshard_model_load", "out_model");
  *out_model = nullptr;
  const pshard_model_params p = capi::read_params(params, pshard_model_default_params());
  auto m = std::unique_ptr<pshard_model>(new (std::nothrow) pshard_model());
  if (!m)
    return fail(Status(StatusCode::kOutOfMemory, "pshard_model_load: out of host memory"));
  RopeFlags rope;
  rope.scaling = p.rope_scaling_type ? p.rope_scaling_type : "";
  rope.freq_base = p.rope_freq_base;
  rope.freq_scale = p.rope_freq_scale;
  rope.yarn_orig_ctx = p.yarn_orig_ctx;
  rope.yarn_ext_factor = p.yarn_ext_factor;
  rope.yarn_attn_factor = p.yarn_attn_factor;
  rope.yarn_beta_fast = p.yarn_beta_fast;
  rope.yarn_beta_slow = p.yarn_beta_slow;
  auto overrides = rope_overrides(rope);
  if (!overrides.ok())
    return fail(overrides.status().with_context("pshard_model_params"));
  if (p.n_kv_overrides > 0 && !p.kv_overrides)
    return capi::null_argument("pshard_model_load", "params->kv_overrides");
  std::vector<std::string> kv_specs;
  for (size_t i = 0; i < p.n_kv_overrides; ++i) {
    if (!p.kv_overrides[i])
      return capi::null_argument("pshard_model_load", "params->kv_overrides[i]");
    kv_specs.emplace_back(p.kv_overrides[i]);
  }
  if (Status st = add_kv_overrides(*overrides, kv_specs, p.schedule_path != nullptr); !st.ok())
    return fail(st);
  if (p.n_lora > 0 && !p.lora_paths)
    return capi::null_argument("pshard_model_load", "params->lora_paths");
  std::vector<LoraAdapter> loras;
  for (size_t i = 0; i < p.n_lora; ++i) {
    if (!p.lora_paths[i])
      return capi::null_argument("pshard_model_load", "params->lora_paths[i]");
    loras.push_back({p.lora_paths[i], p.lora_scales ? p.lora_scales[i] : 1.0f});
  }
  auto model = Model::load(gguf_path,
                           p.use_mmap ? gguf::OpenMode::kMapData : gguf::OpenMode::kReadData,
                           *overrides, loras);
  if (!model.ok())
    return fail(model.status());
  m->model = std::move(model).value();
  auto tokenizer = Tokenizer::from_gguf(m->model->file());
  if (!tokenizer.ok())
    return fail(tokenizer.status().with_context(gguf_path));
  m->tokenizer = std::move(tokenizer).value();
  for (const std::string& warning : m->tokenizer->warnings())
    m->load_warnings += warning + "\n";
  if (m->model->weights().classifier) {
    std::optional<std::string> from_file;
    if (constexpr const char* kRerank = "tokenizer.chat_template.rerank";
        m->model->file().find(kRerank)) {
      auto text = m->model->file().get_string(kRerank);
      if (!text.ok())
        return fail(text.status().with_context(gguf_path));
      from_file = std::move(*text);
    }
    m->rerank_template = rerank_prompt_for(std::move(from_file), m->model->hparams().family->name);
  }
  if (m->tokenizer->n_vocab() != m->model->hparams().n_vocab)
    return fail(invalid_format("the tokenizer has " + std::to_string(m->tokenizer->n_vocab()) +
                               " tokens but the model's embedding has " +
                               std::to_string(m->model->hparams().n_vocab)));
  if (p.schedule_path) {
    auto s = Schedule::load_file(p.schedule_path);
    if (!s.ok())
      return fail(s.status());
    if (Status st = s->check_model(m->model->file()); !st.ok())
      return fail(st);
    m->schedule.emplace(std::move(s).value());
  }
  if (p.mmproj_path) {
    auto proj = Projector::open(p.mmproj_path);
    if (!proj.ok())
      return fail(proj.status());
    if (Status st = check_image_prompt_model(m->model->hparams()); !st.ok())
      return fail(st.with_context(std::string("mmproj_path ") + p.mmproj_path));
    if (Status st = (*proj)->set_image_tokens(p.image_min_tokens, p.image_max_tokens); !st.ok())
      return fail(st.with_context("pshard_model_params.image_min/max_tokens"));
    if (Status st = (*proj)->check_language_model(m->model->hparams().n_embd,
                                                  m->model->hparams().n_deepstack);
        !st.ok())
      return fail(st);
    m->projector = std::move(proj).value();
  }
  *out_model = m.release();
  return PSHARD_OK;
}

void pshard_model_free(pshard_model* model) { delete model; }

int32_t pshard_model_n_vocab(const pshard_model* model) {
  return model ? static_cast<int32_t>(model->model->hparams().n_vocab) : 0;
}

uint64_t pshard_model_file_bytes(const pshard_model* model) {
  return model ? model->model->file().total_file_size() : 0;
}

bool pshard_model_has_schedule(const pshard_model* model) {
  return model && model->schedule.has_value();
}

pshard_fim_tokens pshard_fim_tokens_init(void) {
  pshard_fim_tokens t{};
  t.size = sizeof t;
  t.prefix = t.suffix = t.middle = t.repo = t.file_sep = -1;
  return t;
}

pshard_status pshard_model_fim_tokens(const pshard_model* model, pshard_fim_tokens* out) {
  if (!model)
    return capi::null_argument("pshard_model_fim_tokens", "model");
  if (!out)
    return capi::null_argument("pshard_model_fim_tokens", "out");
  const FimTokens& fim = model->tokenizer->vocabulary().fim;
  pshard_fim_tokens t = pshard_fim_tokens_init();
  t.prefix = fim.prefix;
  t.suffix = fim.suffix;
  t.middle = fim.middle;
  t.repo = fim.repo;
  t.file_sep = fim.file_sep;
  capi::write_out(out, t);
  return capi::ok();
}

bool pshard_model_add_bos_by_default(const pshard_model* model) {
  return model && model->tokenizer->add_bos_by_default();
}

pshard_status pshard_model_schedule_budgets(const pshard_model* model, uint64_t* budgets,
                                            size_t capacity, size_t* n_budgets) {
  if (!model)
    return capi::null_argument("pshard_model_schedule_budgets", "model");
  if (!n_budgets)
    return capi::null_argument("pshard_model_schedule_budgets", "n_budgets");
  *n_budgets = model->schedule ? model->schedule->budgets().size() : 0;
  for (size_t i = 0; budgets && i < *n_budgets && i < capacity; ++i)
    budgets[i] = model->schedule->budgets()[i];
  return PSHARD_OK;
}

const char* pshard_model_load_warnings(const pshard_model* model) {
  return model ? model->load_warnings.c_str() : "";
}

pshard_tokenize_params pshard_tokenize_default_params(void) {
  pshard_tokenize_params p{};
  p.size = sizeof p;
  p.add_special = true;
  p.parse_special = true;
  return p;
}

pshard_status pshard_model_tokenize_ex(const pshard_model* model, const char* text, size_t text_len,
                                       const pshard_tokenize_params* params, pshard_token* tokens,
                                       size_t capacity, size_t* n_tokens) {
  if (!model)
    return capi::null_argument("pshard_model_tokenize", "model");
  const pshard_tokenize_params p = capi::read_params(params, pshard_tokenize_default_params());
  return capi::tokenize(*model, text, text_len,
                        p.add_special && model->tokenizer->add_bos_by_default(), p.parse_special,
                        tokens, capacity, n_tokens);
}

pshard_status pshard_model_tokenize(const pshard_model* model, const char* text, size_t text_len,
                                    bool add_bos, pshard_token* tokens, size_t capacity,
                                    size_t* n_tokens) {
  if (!model)
    return capi::null_argument("pshard_model_tokenize", "model");
  return capi::tokenize(*model, text, text_len, add_bos, /*parse_special=*/true, tokens, capacity,
                        n_tokens);
}

pshard_status pshard_model_rerank_tokenize(const pshard_model* model, const char* query,
                                           size_t query_len, const char* document,
                                           size_t document_len, pshard_token* tokens,
                                           size_t capacity, size_t* n_tokens) {
  constexpr const char* kFn = "pshard_model_rerank_tokenize";
  if (!model)
    return capi::null_argument(kFn, "model");
  if (!query && query_len > 0)
    return capi::null_argument(kFn, "query");
  if (!document && document_len > 0)
    return capi::null_argument(kFn, "document");
  if (!n_tokens)
    return capi::null_argument(kFn, "n_tokens");
  if (!model->model->weights().classifier)
    return fail(invalid_argument("this model is not a reranker: it has no classification head "
                                 "(cls.output) to score with"));
  const ModelHParams& hp = model->model->hparams();
  const RerankFormat format{model->rerank_template ? &*model->rerank_template : nullptr, !hp.causal,
                            hp.n_token_types, hp.pair_separator};
  auto ids =
      rerank_input(*model->tokenizer, format, std::string_view(query ? query : "", query_len),
                   std::string_view(document ? document : "", document_len));
  if (!ids.ok())
    return fail(ids.status());
  return capi::copy_tokens(*ids, tokens, capacity, n_tokens);
}

pshard_status pshard_model_detokenize(const pshard_model* model, const pshard_token* tokens,
                                      size_t n_tokens, char* text, size_t capacity,
                                      size_t* text_len) {
  if (!model)
    return capi::null_argument("pshard_model_detokenize", "model");
  if (!tokens && n_tokens > 0)
    return capi::null_argument("pshard_model_detokenize", "tokens");
  if (!text_len)
    return capi::null_argument("pshard_model_detokenize", "text_len");
  const std::string s = model->tokenizer->decode(std::span<const TokenId>(tokens, n_tokens));
  *text_len = s.size();
  if (text)
    std::memcpy(text, s.data(), std::min(capacity, s.size()));
  return PSHARD_OK;
}

} // extern "C"
