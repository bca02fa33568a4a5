#include "tools/pshard-server/serving_engine.h"

#include "runtime/capi/sampler_params_c.h"
#include "runtime/sampler/sampler_order.h"
#include "tools/common/cli_draft_options.h"
#include "tools/common/cli_kv_options.h"
#include "tools/common/model_load.h"
#include "tools/common/size_parse.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <random>

namespace pshard::server {

uint64_t ServingEngine::unseeded_seed() const {
  if (seed_ >= 0)
    return static_cast<uint64_t>(seed_);
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) | device();
}

Result<std::unique_ptr<ServingEngine>> ServingEngine::start(const ServerOptions& o) {
  std::unique_ptr<ServingEngine> e(new ServingEngine());
  PSHARD_ASSIGN_OR_RETURN(uint64_t n_ctx, parse_size(o.ctx_size));
  PSHARD_ASSIGN_OR_RETURN(e->model_, cli::load_model(o));
  pshard_model* model = e->model_.get();
  e->created_ = static_cast<int64_t>(std::time(nullptr));
  e->max_images_ = o.max_images;
  e->model_ids_ = o.aliases;
  if (e->model_ids_.empty())
    e->model_ids_.push_back(std::filesystem::path(o.model_path).stem().string());
  e->pooling_ = pshard_model_pooling(model);
  e->default_sampling_ = pshard_generate_default_params();
  sampler_to_c(o.sampling, e->default_sampling_);
  e->default_sampler_strings_.dry_breakers = o.dry_breakers;
  e->seed_ = o.seed;
  e->n_predict_ = o.n_predict;
  if (o.sampling.order != default_sampler_order())
    e->default_sampler_strings_.samplers = sampler_order_names(o.sampling.order);
  if (!o.pooling.empty()) { // the C API's names (the server links no runtime library)
    const std::pair<const char*, pshard_pooling> kNames[] = {
        {"mean", PSHARD_POOLING_MEAN}, {"cls", PSHARD_POOLING_CLS}, {"last", PSHARD_POOLING_LAST}};
    auto it = std::find_if(std::begin(kNames), std::end(kNames),
                           [&](const auto& n) { return o.pooling == n.first; });
    if (it == std::end(kNames))
      return invalid_argument("--pooling " + o.pooling + ": /v1/embeddings answers one vector "
                              "per input; use mean, cls or last");
    e->pooling_ = it->second;
  }

  const std::optional<ReasoningFormat> reasoning = parse_reasoning_format(o.reasoning_format);
  if (!reasoning)
    return invalid_argument("--reasoning-format " + o.reasoning_format +
                            ": use none, deepseek or auto");
  e->reasoning_format_ = *reasoning;
  auto one_token = [&](std::string_view tag) {
    auto ids = e->tokenize(tag, /*add_special=*/false);
    return ids.ok() && ids->size() == 1;
  };
  for (const ThoughtTags* tags : {&kThinkTags, &kMistralThinkTags, &kHarmonyThoughtTags})
    if (!e->thinks_ && (tags->marker.empty() ? one_token(tags->open) && one_token(tags->close)
                                             : one_token(tags->marker))) {
      e->thinks_ = true;
      e->thought_tags_ = tags;
    }
  e->args_token_ = one_token(kArgsTag);
  PSHARD_C_CALL(pshard_model_fim_tokens(model, &e->fim_));

  PSHARD_ASSIGN_OR_RETURN(pshard_backend backend,
                          parse_backend(o.backend, pshard_model_has_schedule(model)));
  e->backend_ = backend_name(backend);
  pshard_batch_params bp = pshard_batch_default_params();
  bp.backend = backend;
  if (!o.vram.empty()) {
    PSHARD_ASSIGN_OR_RETURN(bp.vram_budget, parse_size(o.vram));
  }
  bp.n_threads = o.n_threads;
  bp.n_ctx = static_cast<int64_t>(n_ctx);
  bp.n_seq_max = o.n_parallel;
  bp.n_queue_max = o.n_queue;
  bp.n_batch = o.n_batch;
  bp.emu_pcie_gbps = o.emu_pcie_gbps;
  bp.prefix_cache = !o.no_prefix_cache;
  bp.swa_full = o.swa_full;
  bp.draft_max = cli::draft_max_with(o.draft_model_path, o.draft_max);
  if (!o.draft_model_path.empty()) {
    PSHARD_ASSIGN_OR_RETURN(e->draft_model_, cli::load_draft_model(o.draft_model_path, o.no_mmap));
    bp.draft_model = e->draft_model_.get();
    bp.draft_p_min = o.draft_p_min;
  }
  bp.kv_type_k = cli::kv_type_param<pshard_kv_type>(o.cache_type_k);
  bp.kv_type_v = cli::kv_type_param<pshard_kv_type>(o.cache_type_v);
  pshard_batch* batch = nullptr;
  PSHARD_C_CALL(pshard_batch_create(model, &bp, &batch));
  e->batch_.reset(batch);

  // The chat template: a bad --chat-template is an error now; a model without one
  // serves completions, and chat requests get the reason.
  e->template_arg_ = o.chat_template;
  const char* name = nullptr;
  pshard_status st = PSHARD_OK;
  if (!o.chat_template.empty()) {
    size_t len = 0;
    PSHARD_C_CALL(pshard_chat_apply_template(nullptr, o.chat_template.c_str(), nullptr, 0, false,
                                             nullptr, 0, &len));
    e->chat_template_ = o.chat_template;
  } else if ((st = pshard_model_chat_template(model, &name)) == PSHARD_OK) {
    e->chat_template_ = name;
  } else {
    e->template_error_ = last_error(st).with_context("chat completions need a chat template");
  }
  if (e->thought_tags_ == &kThinkTags && e->chat_template_ == "glm-4.5")
    e->thought_tags_ = &kGlmThinkTags; // its empty thought
  if (e->thinks_ && !e->chat_template_.empty()) {
    auto prompt = e->render_chat({{"user", "?"}});
    e->opens_thought_ =
        prompt.ok() && prompt->ends_with(std::string(e->thought_tags_->open) + "\n");
  }
  e->stepper_ = std::thread([raw = e.get()] { raw->step_loop(); });
  return e;
}

ServingEngine::~ServingEngine() {
  stop_ = true;
  if (stepper_.joinable())
    stepper_.join();
  batch_.reset(); // before the model it runs
}

void ServingEngine::step_loop() {
  while (!stop_)
    if (pshard_batch_wait(batch_.get(), 50))
      (void)pshard_batch_step(batch_.get(), nullptr); // failures reach their requests
}

Result<std::vector<pshard_token>> ServingEngine::tokenize(std::string_view text, bool add_special,
                                                          bool parse_special) const {
  pshard_tokenize_params tp = pshard_tokenize_default_params();
  tp.add_special = add_special;
  tp.parse_special = parse_special;
  return tokenize_text(model_.get(), text, tp);
}

Result<std::vector<pshard_token>> ServingEngine::rerank_tokenize(std::string_view query,
                                                                 std::string_view document) const {
  return rerank_tokens(model_.get(), query, document);
}

std::string ServingEngine::piece(pshard_token token) const {
  char buf[64];
  size_t len = 0;
  if (pshard_model_token_to_piece(model_.get(), token, buf, sizeof buf, &len) != PSHARD_OK)
    return "";
  if (len <= sizeof buf)
    return std::string(buf, len);
  std::string s(len, '\0');
  (void)pshard_model_token_to_piece(model_.get(), token, s.data(), len, &len);
  return s;
}

Result<std::string> ServingEngine::detokenize(std::span<const pshard_token> tokens) const {
  size_t len = 0;
  PSHARD_C_CALL(
      pshard_model_detokenize(model_.get(), tokens.data(), tokens.size(), nullptr, 0, &len));
  std::string text(len, '\0');
  PSHARD_C_CALL(
      pshard_model_detokenize(model_.get(), tokens.data(), tokens.size(), text.data(), len, &len));
  return text;
}

Result<std::string>
ServingEngine::render_chat(const std::vector<std::pair<std::string, std::string>>& messages) const {
  if (chat_template_.empty())
    return template_error_;
  std::vector<pshard_chat_message> chat;
  for (const auto& [role, content] : messages)
    chat.push_back({role.c_str(), content.c_str()});
  const char* name = template_arg_.empty() ? nullptr : template_arg_.c_str();
  size_t len = 0;
  PSHARD_C_CALL(pshard_chat_apply_template(model_.get(), name, chat.data(), chat.size(), true,
                                           nullptr, 0, &len));
  std::string text(len, '\0');
  PSHARD_C_CALL(pshard_chat_apply_template(model_.get(), name, chat.data(), chat.size(), true,
                                           text.data(), len, &len));
  return text;
}

std::vector<uint64_t> ServingEngine::budgets() const {
  size_t n = 0;
  if (pshard_model_schedule_budgets(model_.get(), nullptr, 0, &n) != PSHARD_OK)
    return {};
  std::vector<uint64_t> b(n);
  (void)pshard_model_schedule_budgets(model_.get(), b.data(), n, &n);
  return b;
}

Status ServingEngine::set_vram_budget(uint64_t bytes) {
  PSHARD_C_CALL(pshard_batch_set_vram_budget(batch_.get(), bytes));
  return Status::ok_status();
}

} // namespace pshard::server
