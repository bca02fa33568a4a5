#include "tools/pshard-server/request_runner.h"

namespace pshard::server {

std::variant<std::unique_ptr<RunningRequest>, ApiError>
RunningRequest::start(ServingEngine& engine, const GenerationRequest& r) {
  auto run = std::unique_ptr<RunningRequest>(new RunningRequest());
  std::vector<const char*> stops;
  for (const std::string& s : r.stop)
    stops.push_back(s.c_str());
  pshard_seq_params sp = pshard_seq_default_params();
  std::vector<const pshard_image*> images;
  for (const auto& image : r.images)
    images.push_back(image.get());
  if (images.empty()) {
    sp.tokens = r.prompt.data();
    sp.n_tokens = r.prompt.size();
  } else {
    sp.text = r.prompt_text.data();
    sp.text_len = r.prompt_text.size();
    sp.images = images.data();
    sp.n_images = images.size();
  }
  sp.stop_strings = stops.data();
  sp.n_stop_strings = stops.size();
  sp.logprobs = r.logprobs;
  sp.t_max_predict_ms = r.t_max_predict_ms;
  sp.post_sampling_probs = r.post_sampling_probs;
  sp.on_event = on_event;
  pshard_generate_params gp = r.sampling;
  gp.n_predict = static_cast<int32_t>(r.max_tokens);
  gp.top_logprobs = static_cast<int32_t>(r.top_logprobs);
  gp.logit_bias = r.logit_bias.data();
  gp.n_logit_bias = r.logit_bias.size();
  const SamplerStrings& strings = r.sampler_strings; // copied by pshard_batch_add
  const std::vector<const char*> dry_breakers =
      strings.dry_breakers ? c_strings(*strings.dry_breakers) : std::vector<const char*>{};
  if (strings.dry_breakers) {
    gp.dry_sequence_breakers = dry_breakers.data();
    gp.n_dry_sequence_breakers = dry_breakers.size();
  }
  if (strings.samplers)
    gp.samplers = strings.samplers->c_str();
  gp.grammar = r.output.grammar.empty() ? nullptr : r.output.grammar.c_str();
  gp.grammar_trigger = r.output.trigger.empty() ? nullptr : r.output.trigger.c_str();
  if (r.tools) {
    gp.grammar = r.tools->grammar.c_str();
    gp.grammar_trigger = r.tools->trigger.empty() ? nullptr : r.tools->trigger.c_str();
    if (r.tools->skip_thought) { // the opening alone left out: the prompt opened it
      gp.thought_open = r.reasoning.opened ? nullptr : r.reasoning.tags->open.data();
      gp.thought_close = r.reasoning.tags->close.data();
    }
  }
  const uint64_t seed = gp.seed;
  for (int32_t i = 0; i < r.n; ++i) {
    // Each choice its own seed (the request's plus its index): sampled choices differ, and
    // the same request repeats all of them (choice 0 is the n = 1 answer).
    gp.seed = seed + static_cast<uint64_t>(i);
    run->routes_.push_back(std::make_unique<Route>(Route{run->channel_.get(), i}));
    sp.user_data = run->routes_.back().get();
    pshard_seq* seq = nullptr;
    const pshard_status st = pshard_batch_add(engine.batch(), &sp, &gp, &seq);
    if (st != PSHARD_OK) // the choices already added are cancelled with `run`
      return error_from_status(st, last_error(st).message());
    run->seqs_.emplace_back(seq);
  }
  return run;
}

nlohmann::json stop_string_json(const std::vector<std::string>& stops, int32_t index) {
  return index >= 0 && static_cast<size_t>(index) < stops.size() ? nlohmann::json(stops[index])
                                                                 : nlohmann::json(nullptr);
}

void RunningRequest::cancel() {
  for (const SeqHandle& seq : seqs_)
    pshard_seq_cancel(seq.get());
}

bool RunningRequest::on_event(const pshard_seq_event* e, void* user) {
  const auto* route = static_cast<const Route*>(user);
  Channel* ch = route->channel;
  TokenEvent t;
  t.index = route->index;
  t.token = e->token;
  t.text.assign(e->text, e->text_len);
  t.logprob = e->logprob;
  for (int32_t i = 0; i < e->n_top; ++i)
    t.top.push_back({e->top_ids[i], e->top_logprobs[i]});
  t.finish = e->finish;
  t.error = e->error;
  t.error_message = e->error_message ? e->error_message : "";
  t.n_prompt = e->n_prompt;
  t.n_cached = e->n_cached;
  t.n_generated = e->n_generated;
  t.stop_string = e->stop_string;
  t.first_token_ms = e->first_token_ms;
  t.total_ms = e->total_ms;
  {
    std::lock_guard lock(ch->mutex);
    ch->events.push_back(std::move(t));
  }
  ch->ready.notify_one();
  return true;
}

std::optional<TokenEvent> RunningRequest::next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(channel_->mutex);
  if (!channel_->ready.wait_for(lock, timeout, [&] { return !channel_->events.empty(); }))
    return std::nullopt;
  TokenEvent e = std::move(channel_->events.front());
  channel_->events.pop_front();
  return e;
}

std::variant<std::vector<Completion>, ApiError> complete(RunningRequest& run) {
  std::vector<Completion> choices(static_cast<size_t>(run.n_choices()));
  for (size_t running = choices.size(); running > 0;) {
    std::optional<TokenEvent> e = run.next(std::chrono::seconds(1));
    if (!e)
      continue;
    Completion& c = choices.at(static_cast<size_t>(e->index));
    c.text += e->text;
    c.n_prompt = e->n_prompt;
    c.n_cached = e->n_cached;
    c.n_generated = e->n_generated;
    c.stop_string = e->stop_string;
    c.first_token_ms = e->first_token_ms;
    c.total_ms = e->total_ms;
    if (e->finish == PSHARD_FINISH_ERROR || e->finish == PSHARD_FINISH_CANCELLED)
      return finish_error(e->finish, e->error, e->error_message);
    const pshard_finish_reason finish = e->finish;
    if (e->token >= 0)
      c.tokens.push_back(std::move(*e));
    if (finish != PSHARD_FINISH_NONE) {
      c.finish = finish;
      --running;
    }
  }
  return choices;
}

} // namespace pshard::server
