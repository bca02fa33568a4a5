// pshard.h: the batch handle — creation over the serving engine, adding requests,
// stepping, the VRAM budget and statistics.
#include "runtime/capi/capi_batch_internal.h"
#include "runtime/generate/prompt_lookup.h"
#include "runtime/serve/sequence_engine.h"

#include <new>

using namespace pshard;
using pshard::capi::fail;

namespace {

// The generation params as a request (the prompt is set by the caller).
RequestParams request_params(const pshard_generate_params& g, capi::Sampling sampling) {
  RequestParams r;
  r.sampling = std::move(sampling.params);
  r.constraint = std::move(sampling.filter);
  r.max_tokens = g.n_predict < 0 ? -1 : g.n_predict;
  r.ignore_eos = g.ignore_eos;
  r.top_logprobs = g.top_logprobs;
  return r;
}

Status read_prompt(pshard_batch& batch, const pshard_seq_params& p, RequestParams& r) {
  const pshard_model& model = *batch.model;
  if (p.n_images > 0) {
    if (p.tokens || (!p.text && p.text_len > 0))
      return invalid_argument("pshard_batch_add: images go with a prompt given as `text` (its "
                              "image places name where), not as `tokens`");
    PSHARD_ASSIGN_OR_RETURN(
        capi::ImagePrompt ip,
        capi::prepare_image_prompt(model, std::string_view(p.text ? p.text : "", p.text_len),
                                   p.images, p.n_images, p.add_special, p.parse_special,
                                   batch.n_threads, nullptr, &batch.images));
    auto images = std::make_shared<PromptImages>();
    for (size_t i = 0; i < ip.images.size(); ++i) {
      ImageEmbeddings& e = ip.images[i];
      images->spans.push_back({ip.ids.image_pos[i], e.tokens_x, e.tokens_y});
      images->images.push_back(
          {ip.keys[i], e.n_embd, std::move(e.data), e.n_deepstack, std::move(e.deepstack)});
    }
    r.prompt = std::move(ip.ids.ids);
    r.images = std::move(images);
    return Status::ok_status();
  }
  if (p.tokens) {
    r.prompt.assign(p.tokens, p.tokens + p.n_tokens);
    return Status::ok_status();
  }
  if (!p.text && p.text_len > 0)
    return invalid_argument("pshard_batch_add: give the prompt as `tokens` or `text`");
  r.prompt = model.tokenizer->encode(std::string_view(p.text ? p.text : "", p.text_len),
                                     p.add_special, p.parse_special);
  return Status::ok_status();
}

EventSink sink_for(std::shared_ptr<capi::SeqChannel> channel) {
  return [channel](const SequenceEvent& e) {
    std::lock_guard lock(channel->mutex);
    if (e.finish != FinishReason::kNone)
      channel->finish = e.finish;
    if (channel->detached)
      return false;
    if (!channel->callback) {
      channel->queue.push_back(e);
      return true;
    }
    std::vector<pshard_token> ids;
    std::vector<float> logprobs;
    const pshard_seq_event c = capi::c_event(e, ids, logprobs);
    return channel->callback(&c, channel->user_data);
  };
}

} // namespace

extern "C" {

pshard_batch_params pshard_batch_default_params(void) {
  pshard_batch_params p{};
  p.size = sizeof p;
  capi::set_device_defaults(p);
  p.n_seq_max = 4;
  p.n_queue_max = 64;
  p.prefix_cache = true;
  p.kv_type_k = PSHARD_KV_DEFAULT;
  p.kv_type_v = PSHARD_KV_DEFAULT;
  p.draft_p_min = kDefaultDraftPMin;
  return p;
}

pshard_status pshard_batch_create(pshard_model* model, const pshard_batch_params* params,
                                  pshard_batch** out_batch) {
  if (!model)
    return capi::null_argument("pshard_batch_create", "model");
  if (!out_batch)
    return capi::null_argument("pshard_batch_create", "out_batch");
  *out_batch = nullptr;
  const pshard_batch_params p = capi::read_params(params, pshard_batch_default_params());
  if (p.n_seq_max < 1 || p.n_queue_max < 0 || p.n_batch < 1)
    return fail(invalid_argument(
        "pshard_batch_create: n_seq_max and n_batch must be at least 1 and n_queue_max at "
        "least 0, got " +
        std::to_string(p.n_seq_max) + ", " + std::to_string(p.n_batch) + " and " +
        std::to_string(p.n_queue_max)));
  SequenceEngineOptions o;
  auto device = capi::device_options(p);
  if (!device.ok())
    return fail(device.status());
  o.device = *device;
  o.n_threads = p.n_threads;
  o.n_ctx = p.n_ctx;
  o.n_batch = p.n_batch;
  o.max_sequences = p.n_seq_max;
  o.prefix_cache = p.prefix_cache;
  o.swa_full = p.swa_full;
  if (Status st = check_draft_max(p.draft_max); !st.ok())
    return fail(st);
  o.draft_max = p.draft_max;
  if (Status st = capi::read_kv_types(p.kv_type_k, p.kv_type_v, o.kv_type_k, o.kv_type_v); !st.ok())
    return fail(st);
  const Schedule* schedule = model->schedule ? &*model->schedule : nullptr;
  auto engine = make_sequence_engine(*model->model, schedule, o);
  if (!engine.ok())
    return fail(engine.status());
  auto b = std::unique_ptr<pshard_batch>(new (std::nothrow) pshard_batch());
  if (!b)
    return fail(Status(StatusCode::kOutOfMemory, "pshard_batch_create: out of host memory"));
  b->model = model;
  b->n_threads = p.n_threads;
  b->core = std::make_shared<capi::BatchCore>();
  b->core->engine = std::move(engine).value();
  SchedulerOptions so;
  so.max_active = p.n_seq_max;
  so.max_queued = p.n_queue_max;
  so.pass_tokens = p.n_batch;
  so.draft_max = p.draft_max;
  if (p.draft_model) {
    if (Status st = capi::check_draft_model(*model, *p.draft_model, p.draft_p_min); !st.ok())
      return fail(st.with_context("pshard_batch_params.draft_model"));
    // The draft model's own batched engine on the CPU: a sequence per request, as many
    // and as long as the target's, its own prefix cache.
    SequenceEngineOptions d;
    d.n_threads = p.n_threads;
    d.n_ctx = b->core->engine->n_ctx() > 0 ? b->core->engine->n_ctx() : p.n_ctx;
    d.n_batch = p.n_batch;
    d.max_sequences = p.n_seq_max;
    d.prefix_cache = p.prefix_cache;
    auto draft_engine = make_sequence_engine(*p.draft_model->model, nullptr, d);
    if (!draft_engine.ok())
      return fail(draft_engine.status().with_context("pshard_batch_params.draft_model"));
    b->core->drafter = std::make_unique<BatchDrafter>(
        std::move(draft_engine).value(), model->model->hparams().n_vocab, p.draft_p_min);
    so.drafter = b->core->drafter.get();
  }
  b->core->scheduler = std::make_unique<Scheduler>(*b->core->engine, *model->tokenizer, so);
  *out_batch = b.release();
  return PSHARD_OK;
}

void pshard_batch_free(pshard_batch* batch) {
  delete batch; // the core goes with the last reference; sequences hold it weakly
}

int64_t pshard_batch_n_ctx(const pshard_batch* b) { return b ? b->core->scheduler->n_ctx() : 0; }
int32_t pshard_batch_n_seq_max(const pshard_batch* b) {
  return b ? static_cast<int32_t>(b->core->engine->max_sequences()) : 0;
}

pshard_seq_params pshard_seq_default_params(void) {
  pshard_seq_params p{};
  p.size = sizeof p;
  p.add_special = true;
  p.parse_special = true;
  return p;
}

pshard_status pshard_batch_add(pshard_batch* batch, const pshard_seq_params* params,
                               const pshard_generate_params* generate, pshard_seq** out_seq) {
  if (!batch)
    return capi::null_argument("pshard_batch_add", "batch");
  if (!params)
    return capi::null_argument("pshard_batch_add", "params");
  if (!out_seq)
    return capi::null_argument("pshard_batch_add", "out_seq");
  *out_seq = nullptr;
  const pshard_seq_params p = capi::read_params(params, pshard_seq_default_params());
  const pshard_generate_params g = capi::read_params(generate, pshard_generate_default_params());
  auto sampling = capi::sampling(*batch->model, g, "pshard_batch_add");
  if (!sampling.ok())
    return fail(sampling.status());
  RequestParams r = request_params(g, std::move(sampling).value());
  if (Status st = read_prompt(*batch, p, r); !st.ok())
    return fail(st);
  if ((!p.stop_strings && p.n_stop_strings > 0) || (!p.stop_tokens && p.n_stop_tokens > 0))
    return capi::null_argument("pshard_batch_add", "stop_strings or stop_tokens");
  for (size_t i = 0; i < p.n_stop_strings; ++i) {
    if (!p.stop_strings[i])
      return fail(
          invalid_argument("pshard_batch_add: stop string " + std::to_string(i) + " is NULL"));
    r.stop_strings.emplace_back(p.stop_strings[i]);
  }
  r.stop_tokens.assign(p.stop_tokens, p.stop_tokens + p.n_stop_tokens);
  r.logprobs = p.logprobs;
  if (p.t_max_predict_ms < 0)
    return fail(invalid_argument("pshard_batch_add: t_max_predict_ms must be >= 0 (0: no "
                                 "limit), got " +
                                 std::to_string(p.t_max_predict_ms)));
  r.max_predict_ms = p.t_max_predict_ms;
  r.post_sampling_probs = p.post_sampling_probs;
  if (p.embed) {
    auto embedding = capi::embedding_request(*batch->model, *p.embed);
    if (!embedding.ok())
      return fail(embedding.status().with_context("pshard_batch_add"));
    r.embedding = *embedding;
  }

  auto seq = std::unique_ptr<pshard_seq>(new (std::nothrow) pshard_seq());
  if (!seq)
    return fail(Status(StatusCode::kOutOfMemory, "pshard_batch_add: out of host memory"));
  seq->channel = std::make_shared<capi::SeqChannel>();
  seq->channel->callback = p.on_event;
  seq->channel->user_data = p.user_data;
  seq->batch = batch->core;
  // The id is known only after submit(): the handle is filled under the channel's lock,
  // which the first event (on another thread) takes too.
  std::lock_guard lock(seq->channel->mutex);
  auto id = batch->core->scheduler->submit(std::move(r), sink_for(seq->channel));
  if (!id.ok())
    return fail(id.status());
  seq->id = *id;
  *out_seq = seq.release();
  return PSHARD_OK;
}

pshard_batch_step_result pshard_batch_step_result_init(void) {
  pshard_batch_step_result r{};
  r.size = sizeof r;
  return r;
}

pshard_status pshard_batch_step(pshard_batch* batch, pshard_batch_step_result* result) {
  if (!batch)
    return capi::null_argument("pshard_batch_step", "batch");
  const StepReport rep = batch->core->scheduler->step();
  if (result) {
    pshard_batch_step_result r = pshard_batch_step_result_init();
    r.n_tokens = rep.entries;
    r.n_sequences = rep.sequences;
    r.n_prompt_tokens = rep.prompt_tokens;
    r.n_decode_tokens = rep.decode_tokens;
    r.n_finished = rep.finished;
    capi::write_out(result, r);
  }
  return PSHARD_OK;
}

bool pshard_batch_has_work(pshard_batch* batch) { return pshard_batch_wait(batch, 0); }

bool pshard_batch_wait(pshard_batch* batch, int32_t timeout_ms) {
  return batch && batch->core->scheduler->wait_for_work(
                      std::chrono::milliseconds(std::max<int32_t>(timeout_ms, 0)));
}

pshard_status pshard_batch_set_vram_budget(pshard_batch* batch, uint64_t bytes) {
  if (!batch)
    return capi::null_argument("pshard_batch_set_vram_budget", "batch");
  if (Status st = batch->core->scheduler->set_vram_budget(bytes); !st.ok())
    return fail(st);
  return PSHARD_OK;
}

pshard_batch_stats pshard_batch_stats_init(void) {
  pshard_batch_stats s{};
  s.size = sizeof s;
  return s;
}

pshard_status pshard_batch_get_stats(pshard_batch* batch, pshard_batch_stats* out) {
  if (!batch)
    return capi::null_argument("pshard_batch_get_stats", "batch");
  if (!out)
    return capi::null_argument("pshard_batch_get_stats", "out");
  capi::BatchCore& core = *batch->core;
  const SchedulerStats st = core.scheduler->stats();
  pshard_batch_stats s = pshard_batch_stats_init();
  s.queued = st.queued;
  s.running = st.active;
  s.requests_added = st.submitted;
  s.requests_refused = st.refused;
  s.finished_stop = st.finished[static_cast<int>(FinishReason::kStop)];
  s.finished_length = st.finished[static_cast<int>(FinishReason::kLength)];
  s.finished_cancelled = st.finished[static_cast<int>(FinishReason::kCancelled)];
  s.finished_error = st.finished[static_cast<int>(FinishReason::kError)];
  s.prompt_tokens = st.prompt_tokens;
  s.generated_tokens = st.generated_tokens;
  s.passes = st.passes;
  s.busy_ms = st.busy_ms;
  s.prompt_tokens_per_s = st.prompt_tokens_per_s;
  s.generated_tokens_per_s = st.generated_tokens_per_s;
  s.kv_page_tokens = st.kv.page_tokens;
  s.kv_pages_total = st.kv.total_pages;
  s.kv_pages_used = st.kv.used_pages;
  s.vram_budget = st.engine.vram_budget;
  s.vram_bytes = st.engine.device_bytes;
  s.peak_vram_bytes = st.engine.sessions.peak_device_bytes;
  s.bytes_streamed = st.engine.sessions.bytes_streamed;
  s.n_plans = st.engine.sessions.plans.size();
  s.cached_prompt_tokens = st.cached_prompt_tokens;
  s.kv_pages_cached = st.kv.cached_pages;
  s.draft_tokens = st.draft_tokens;
  s.accepted_draft_tokens = st.accepted_draft_tokens;
  s.kv_window_pages_total = st.kv.window_total_pages;
  s.kv_window_pages_used = st.kv.window_used_pages;
  s.images_encoded = batch->images.misses();
  s.images_reused = batch->images.hits();
  s.draft_passes = st.draft_passes;
  s.n_progress = st.running.size();
  {
    std::lock_guard lock(core.stats_mutex);
    core.snapshot = st;
  }
  capi::write_out(out, s);
  return PSHARD_OK;
}

pshard_status pshard_batch_get_plan_stats(pshard_batch* batch, size_t index,
                                          pshard_plan_stats* out) {
  if (!batch)
    return capi::null_argument("pshard_batch_get_plan_stats", "batch");
  if (!out)
    return capi::null_argument("pshard_batch_get_plan_stats", "out");
  capi::BatchCore& core = *batch->core;
  std::lock_guard lock(core.stats_mutex);
  const auto& plans = core.snapshot.engine.sessions.plans;
  if (index >= plans.size())
    return fail(out_of_range("plan index " + std::to_string(index) + " is past the " +
                             std::to_string(plans.size()) +
                             " plans of the last pshard_batch_get_stats"));
  const PlanUse& u = plans[index];
  pshard_plan_stats s = capi::plan_stats(u);
  s.strategy = core.strategies.insert(u.strategy).first->c_str();
  capi::write_out(out, s);
  return PSHARD_OK;
}

pshard_seq_progress pshard_seq_progress_init(void) {
  pshard_seq_progress p{};
  p.size = sizeof p;
  return p;
}

pshard_status pshard_batch_get_progress(pshard_batch* batch, size_t index,
                                        pshard_seq_progress* out) {
  if (!batch)
    return capi::null_argument("pshard_batch_get_progress", "batch");
  if (!out)
    return capi::null_argument("pshard_batch_get_progress", "out");
  capi::BatchCore& core = *batch->core;
  std::lock_guard lock(core.stats_mutex);
  const std::vector<SequenceProgress>& running = core.snapshot.running;
  if (index >= running.size())
    return fail(out_of_range("progress index " + std::to_string(index) + " is past the " +
                             std::to_string(running.size()) +
                             " running requests of the last pshard_batch_get_stats"));
  const SequenceProgress& r = running[index];
  pshard_seq_progress p = pshard_seq_progress_init();
  p.seq_id = r.id;
  p.n_prompt = r.n_prompt;
  p.n_prompt_read = r.n_prompt_read;
  p.n_cached = r.n_cached;
  p.n_generated = r.n_generated;
  p.generating = r.generating;
  p.ms_running = r.ms_running;
  capi::write_out(out, p);
  return PSHARD_OK;
}

} // extern "C"
