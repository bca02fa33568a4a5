// pshard.h: generation — prefill, sampling and decoding with a per-token callback, for
// token prompts and text prompts with images.
#include "runtime/batch/cache_key.h"
#include "runtime/capi/capi_internal.h"
#include "runtime/capi/sampler_params_c.h"
#include "runtime/executor/vision_phase.h"
#include "runtime/generate/generator.h"
#include "runtime/sampler/dry_breaker_tokens.h"
#include "runtime/vision/image_prompt.h"

#include <chrono>

using namespace pshard;
using pshard::capi::fail;

namespace pshard::capi {

namespace {

// The tokens that end a DRY repeat: those holding one of the params' breakers (or where
// one begins), or the defaults' (found once per model; one byte each, none spans tokens).
Result<DryBreakerTokens> dry_breakers(const pshard_model& model, const pshard_generate_params& p,
                                      const char* function) {
  if (!p.dry_sequence_breakers) {
    std::call_once(model.dry_breakers_once, [&] {
      model.default_dry_breakers = std::make_shared<const std::vector<bool>>(
          tokens_containing(*model.tokenizer, default_dry_sequence_breakers()));
    });
    return DryBreakerTokens{model.default_dry_breakers, nullptr};
  }
  std::vector<std::string> texts;
  for (size_t i = 0; i < p.n_dry_sequence_breakers; ++i) {
    if (!p.dry_sequence_breakers[i])
      return invalid_argument(std::string(function) + ": dry_sequence_breakers[" +
                              std::to_string(i) + "] is NULL; pass NUL-terminated strings");
    texts.emplace_back(p.dry_sequence_breakers[i]);
  }
  return dry_breaker_tokens(*model.tokenizer, texts);
}

} // namespace

Result<Sampling> sampling(const pshard_model& model, const pshard_generate_params& p,
                          const char* function) {
  if (!p.logit_bias && p.n_logit_bias > 0)
    return invalid_argument(std::string(function) +
                            ": `logit_bias` must not be NULL when n_logit_bias > 0");
  Sampling s;
  SamplerParams& sp = s.params;
  sampler_from_c(p, sp);
  sp.seed = p.seed;
  for (size_t i = 0; i < p.n_logit_bias; ++i)
    sp.logit_bias.push_back({p.logit_bias[i].token, p.logit_bias[i].bias});
  if (sp.dry.multiplier != 0.0f) {
    PSHARD_ASSIGN_OR_RETURN(DryBreakerTokens breakers, dry_breakers(model, p, function));
    sp.dry_breakers = std::move(breakers.within);
    sp.dry_spans = std::move(breakers.spans);
  }
  if (p.samplers) {
    Result<SamplerOrder> order = parse_sampler_names(std::string_view(p.samplers));
    if (!order.ok())
      return invalid_argument(std::string(function) + ": samplers: " + order.status().message());
    sp.order = std::move(*order);
  }
  PSHARD_ASSIGN_OR_RETURN(s.filter, token_filter(model, p));
  return s;
}

} // namespace pshard::capi

namespace {

// An image prompt's extras (pshard_generate_result's image fields): what preparing its
// images took, and the prompt's start the decoder already holds (its tokens; not fed).
struct ImageWork {
  int64_t n_images = 0, n_reused = 0;
  double ms = 0;
  std::span<const TokenId> held;
  std::vector<TokenId>* generated = nullptr; // receives the generated tokens
};

// Prefill, sampling and decoding on `decoder`, each token through the C callback;
// `drafter` (may be null): the context's draft model, for params' draft_max.
pshard_status run_generation(Decoder& decoder, const pshard_model& model,
                             std::span<const TokenId> prompt, const pshard_generate_params* params,
                             pshard_token_callback on_token, void* user_data,
                             pshard_generate_result* result, const ImageWork& images = {},
                             Drafter* drafter = nullptr) {
  const pshard_generate_params p = capi::read_params(params, pshard_generate_default_params());
  if (!p.held && p.n_held > 0)
    return capi::null_argument("pshard_context_generate", "held");
  auto sampling = capi::sampling(model, p, "pshard_context_generate");
  if (!sampling.ok())
    return fail(sampling.status());
  auto sampler = Sampler::create(sampling->params);
  if (!sampler.ok())
    return fail(sampler.status());
  sampler->set_filter(sampling->filter);
  GenerateParams gp;
  gp.n_predict = p.n_predict;
  gp.ignore_eos = p.ignore_eos;
  gp.top_logprobs = p.top_logprobs;
  gp.lookup.draft_max = p.draft_max;
  gp.lookup.ngram_min = p.lookup_ngram_min;
  gp.lookup.ngram_max = p.lookup_ngram_max;
  gp.lookup.adaptive = p.lookup_adaptive;
  gp.drafter = drafter;
  // An image prompt's kept sequence, or what the caller says the context held.
  gp.held = images.held.empty() ? std::span<const TokenId>(p.held, p.n_held) : images.held;
  TokenCallback callback = nullptr;
  std::vector<pshard_token> top_ids;
  std::vector<float> top_lp;
  if (on_token)
    callback = [&](const TokenEvent& e) {
      pshard_token_event ev{};
      ev.token = e.id;
      ev.text = e.text.data();
      ev.text_len = e.text.size();
      if (e.top) {
        top_ids.clear();
        top_lp.clear();
        for (const TokenLogprob& t : *e.top) {
          top_ids.push_back(t.id);
          top_lp.push_back(t.logprob);
        }
        ev.n_top = static_cast<int32_t>(top_ids.size());
        ev.top_ids = top_ids.data();
        ev.top_logprobs = top_lp.data();
      }
      return on_token(&ev, user_data);
    };
  auto r = generate(decoder, *model.tokenizer, *sampler, prompt, gp, callback);
  if (!r.ok())
    return fail(r.status());
  if (images.generated)
    *images.generated = r->generated;
  if (result) {
    pshard_generate_result out = pshard_generate_result_init();
    out.n_prompt = r->timings.n_prompt + static_cast<int64_t>(images.held.size());
    out.n_cached = static_cast<int64_t>(images.held.size());
    out.n_generated = r->timings.n_generated;
    out.prompt_ms = r->timings.prompt_ms;
    out.generation_ms = r->timings.generation_ms;
    out.first_token_ms = r->timings.first_token_ms;
    out.n_decode_passes = r->timings.n_decode_passes;
    out.n_drafted = r->timings.n_drafted;
    out.n_accepted = r->timings.n_accepted;
    out.n_images = images.n_images;
    out.n_images_reused = images.n_reused;
    out.image_ms = images.ms;
    capi::write_out(result, out);
  }
  return PSHARD_OK;
}

// The sequence an image prompt runs in, and how many of `names` (the prompt's positions by
// prefix-cache names) it holds already: the context's kept one rewound to the longest start
// it shares with the prompt (never the last position: it is decoded for its logits) — or
// restarted, where it shares none or cannot rewind that far (recurrent layers, a sliding
// window's ring) — else a new
// one of the context's kind (backend, schedule, budget, size and KV types), so that the
// context's own sequence is left alone.
Result<std::pair<HybridSession*, int64_t>> image_session(pshard_context& c,
                                                         std::span<const TokenId> names) {
  if (HybridSession* s = c.image_session.get(); s && s->budget() == c.session->budget()) {
    const size_t most = std::min(c.image_names.size(), names.size() - 1);
    size_t same = 0;
    while (same < most && c.image_names[same] == names[same])
      ++same;
    auto kept = static_cast<int64_t>(same);
    if (kept < s->n_past() && !s->rewinds_anywhere())
      kept = 0;
    // A cache that cannot go back that far (a sliding window's ring) starts over instead.
    if (kept < s->n_past() && (kept == 0 || !s->rewind(kept).ok())) {
      s->reset();
      kept = 0;
    }
    return std::pair{s, kept};
  }
  PSHARD_ASSIGN_OR_RETURN(HybridParams hp, capi::hybrid_params(c.params));
  hp.n_ctx = c.session->n_ctx();
  hp.vram_budget = c.session->budget();
  const Schedule* schedule = c.model->schedule ? &*c.model->schedule : nullptr;
  c.image_session.reset(); // its memory first
  PSHARD_ASSIGN_OR_RETURN(c.image_session,
                          HybridSession::create(*c.model->model, schedule, c.device.get(), hp));
  return std::pair{c.image_session.get(), int64_t{0}};
}

} // namespace

extern "C" {

pshard_generate_params pshard_generate_default_params(void) {
  const SamplerParams sp;
  pshard_generate_params p{};
  p.size = sizeof p;
  p.n_predict = 128;
  sampler_to_c(sp, p);
  p.seed = sp.seed;
  const PromptLookup lookup;
  p.draft_max = lookup.draft_max;
  p.lookup_ngram_min = lookup.ngram_min;
  p.lookup_ngram_max = lookup.ngram_max;
  p.lookup_adaptive = lookup.adaptive;
  return p;
}

pshard_generate_result pshard_generate_result_init(void) {
  pshard_generate_result r{};
  r.size = sizeof r;
  return r;
}

pshard_status pshard_context_generate(pshard_context* c, const pshard_token* prompt,
                                      size_t n_prompt, const pshard_generate_params* params,
                                      pshard_token_callback on_token, void* user_data,
                                      pshard_generate_result* result) {
  if (!c)
    return capi::null_argument("pshard_context_generate", "context");
  if (!prompt && n_prompt > 0)
    return capi::null_argument("pshard_context_generate", "prompt");
  return run_generation(*c->session, *c->model, std::span<const TokenId>(prompt, n_prompt), params,
                        on_token, user_data, result, {}, c->drafter.get());
}

pshard_status pshard_context_generate_with_images(
    pshard_context* c, const char* text, size_t text_len, const pshard_image* const* images,
    size_t n_images, const pshard_tokenize_params* tokenize, const pshard_generate_params* params,
    pshard_token_callback on_token, void* user_data, pshard_generate_result* result) {
  if (!c)
    return capi::null_argument("pshard_context_generate_with_images", "context");
  if (!text && text_len > 0)
    return capi::null_argument("pshard_context_generate_with_images", "text");
  const pshard_tokenize_params tp = capi::read_params(tokenize, pshard_tokenize_default_params());
  const Schedule* schedule = c->model->schedule ? &*c->model->schedule : nullptr;
  // Under a schedule with vision plans the image is encoded by its vision phase on the
  // context's device, after the language arena is released: the phases share the device
  // memory in time. Without vision plans (or a device) it is encoded on the host.
  const bool vision_phase = n_images > 0 && schedule && schedule->vision() && c->model->projector;
  std::unique_ptr<ThreadPool> pool; // the vision phase's host threads
  capi::ImageEncoder encoder;
  if (vision_phase) {
    pool = std::make_unique<ThreadPool>(c->session->n_threads());
    encoder = [&](const VisionInput& in) -> Result<ImageEmbeddings> {
      PSHARD_RETURN_IF_ERROR(c->session->release_device());
      VisionPhaseInputs vi{*schedule, *c->model->projector, in, c->session->budget(),
                           c->device.get(), *pool};
      PSHARD_ASSIGN_OR_RETURN(VisionPhaseResult r, run_vision_phase(vi));
      return std::move(r.embeddings);
    };
  }
  const int64_t reused_before = c->images.hits();
  const auto t0 = std::chrono::steady_clock::now();
  auto prompt = capi::prepare_image_prompt(*c->model, std::string_view(text ? text : "", text_len),
                                           images, n_images, tp.add_special, tp.parse_special,
                                           c->session->n_threads(), encoder, &c->images);
  ImageWork work;
  work.n_images = static_cast<int64_t>(n_images);
  work.n_reused = c->images.hits() - reused_before;
  work.ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (!prompt.ok())
    return fail(prompt.status());
  if (n_images == 0) // a text prompt: the context's own sequence, as pshard_context_generate
    return run_generation(*c->session, *c->model, prompt->ids.ids, params, on_token, user_data,
                          result);
  if (Status st = c->session->release_device(); !st.ok()) // the phases share the device in time
    return fail(st);
  // The prompt's names in the prefix cache's terms: a kept sequence that holds the same
  // start — the same text, the same images at the same places — keeps it.
  std::vector<TokenId> names = prompt->ids.ids;
  for (size_t i = 0; i < prompt->images.size(); ++i)
    name_image_rows(names, prompt->ids.image_pos[i], prompt->images[i].n_tokens(), prompt->keys[i]);
  auto session = image_session(*c, names);
  if (!session.ok())
    return fail(session.status());
  const auto [decoder_session, kept] = *session;
  c->image_names.clear(); // valid again once the call ends well
  ImagePromptDecoder decoder(*decoder_session, std::move(prompt->images), prompt->ids.image_pos);
  std::vector<TokenId> generated;
  const std::span<const TokenId> ids(prompt->ids.ids);
  work.held = ids.first(static_cast<size_t>(kept));
  work.generated = &generated;
  const pshard_status status =
      run_generation(decoder, *c->model, ids.subspan(static_cast<size_t>(kept)), params, on_token,
                     user_data, result, work);
  if (!c->params.keep_image_sequence) {
    c->image_session.reset();
    return status;
  }
  if (status == PSHARD_OK) {
    names.insert(names.end(), generated.begin(), generated.end());
    names.resize(static_cast<size_t>(
        std::min<int64_t>(decoder_session->n_past(), static_cast<int64_t>(names.size()))));
    c->image_names = std::move(names);
  }
  // The context's own sequence may take the device next: the kept sequence's KV goes to
  // the host, its next pass uploads its plan's resident set again.
  if (Status st = decoder_session->release_device(); !st.ok() && status == PSHARD_OK)
    return fail(st);
  return status;
}

} // extern "C"
