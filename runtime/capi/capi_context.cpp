// pshard.h: the context handle — creation, decoding, the VRAM budget, statistics.
#include "runtime/capi/capi_internal.h"
#include "runtime/generate/prompt_lookup.h"
#include "runtime/model/kv_types.h"

#include <new>

using namespace pshard;
using pshard::capi::fail;

namespace pshard::capi {

Result<HybridParams> hybrid_params(const pshard_context_params& p) {
  HybridParams hp;
  hp.n_ctx = p.n_ctx;
  hp.n_threads = p.n_threads;
  hp.vram_budget = p.vram_budget;
  hp.n_batch = p.n_batch;
  PSHARD_RETURN_IF_ERROR(check_draft_max(p.draft_max));
  hp.max_logit_rows = p.draft_max + 1;
  hp.swa_full = p.swa_full;
  PSHARD_RETURN_IF_ERROR(read_kv_types(p.kv_type_k, p.kv_type_v, hp.kv_type_k, hp.kv_type_v));
  return hp;
}

Status read_kv_types(pshard_kv_type k, pshard_kv_type v, std::optional<TensorType>& out_k,
                     std::optional<TensorType>& out_v) {
  for (auto [in, out] : {std::pair{k, &out_k}, std::pair{v, &out_v}}) {
    if (in == PSHARD_KV_DEFAULT)
      continue;
    const TensorType t = static_cast<TensorType>(in);
    if (!is_kv_type(t))
      return invalid_argument("kv_type " + std::to_string(static_cast<int>(in)) +
                              " is not a KV cache type: use PSHARD_KV_F32, _F16 or _Q8_0");
    *out = t;
  }
  return Status::ok_status();
}

// pshard_context_decode and _decode_all: the argument checks, the call, the logits out.
template <typename Decode>
pshard_status decode_into(const char* function, pshard_context* c, const pshard_token* tokens,
                          size_t n_tokens, const float** logits, Decode decode) {
  if (!c)
    return null_argument(function, "context");
  if (!tokens && n_tokens > 0)
    return null_argument(function, "tokens");
  auto l = decode(*c->session, std::span<const TokenId>(tokens, n_tokens));
  if (!l.ok())
    return fail(l.status());
  if (logits)
    *logits = l->data();
  return PSHARD_OK;
}

pshard_plan_stats plan_stats(const PlanUse& u) {
  pshard_plan_stats s = pshard_plan_stats_init();
  s.budget_bytes = u.budget_bytes;
  s.tier = u.tier;
  s.passes = u.passes;
  s.tokens = u.tokens;
  s.predicted_ms_per_pass = u.predicted_ms_per_pass;
  s.measured_ms_per_pass = u.measured_ms_per_pass();
  s.bytes_streamed = u.bytes_streamed;
  s.context = u.context;
  s.experts_resident = u.experts.resident;
  s.experts_copied = u.experts.copied;
  s.experts_host = u.experts.host;
  s.predicted_experts_host = u.predicted_host_experts;
  return s;
}

Status check_draft_model(const pshard_model& target, const pshard_model& draft, float p_min) {
  PSHARD_RETURN_IF_ERROR(check_draft_p_min(p_min));
  if (draft.model->hparams().has_recurrent_layers()) // it could only start over each pass
    return unsupported("the draft model has layers that keep a recurrent state (Qwen3-Next, "
                       "Qwen3.5), which cannot drop its rejected drafts: use a transformer "
                       "draft model of the same vocabulary");
  return check_draft_vocabulary(*target.tokenizer, *draft.tokenizer);
}

} // namespace pshard::capi

extern "C" {

pshard_context_params pshard_context_default_params(void) {
  pshard_context_params p{};
  p.size = sizeof p;
  capi::set_device_defaults(p);
  p.kv_type_k = PSHARD_KV_DEFAULT;
  p.kv_type_v = PSHARD_KV_DEFAULT;
  p.keep_image_sequence = true;
  p.draft_p_min = kDefaultDraftPMin;
  return p;
}

pshard_status pshard_context_create(pshard_model* model, const pshard_context_params* params,
                                    pshard_context** out_context) {
  if (!model)
    return capi::null_argument("pshard_context_create", "model");
  if (!out_context)
    return capi::null_argument("pshard_context_create", "out_context");
  *out_context = nullptr;
  const pshard_context_params p = capi::read_params(params, pshard_context_default_params());
  auto c = std::unique_ptr<pshard_context>(new (std::nothrow) pshard_context());
  if (!c)
    return fail(Status(StatusCode::kOutOfMemory, "pshard_context_create: out of host memory"));
  c->model = model;
  c->params = p;
  auto device = capi::make_device(p, *model);
  if (!device.ok())
    return fail(device.status());
  c->device = std::move(device).value();
  auto hp = capi::hybrid_params(p);
  if (!hp.ok())
    return fail(hp.status());
  const Schedule* schedule = model->schedule ? &*model->schedule : nullptr;
  auto session = HybridSession::create(*model->model, schedule, c->device.get(), *hp);
  if (!session.ok())
    return fail(session.status());
  c->session = std::move(session).value();
  if (p.draft_model) {
    if (Status st = capi::check_draft_model(*model, *p.draft_model, p.draft_p_min); !st.ok())
      return fail(st.with_context("pshard_context_params.draft_model"));
    SessionParams dp; // the draft model's session on the CPU, as large as the context
    dp.n_ctx = c->session->n_ctx();
    dp.n_threads = c->session->n_threads();
    dp.n_batch = p.n_batch;
    auto draft = CpuSession::create(*p.draft_model->model, dp);
    if (!draft.ok())
      return fail(draft.status().with_context("pshard_context_params.draft_model"));
    c->draft_session = std::move(draft).value();
    c->drafter = std::make_unique<ModelDrafter>(*c->draft_session, model->model->hparams().n_vocab,
                                                p.draft_p_min);
  }
  if (p.trace) {
    c->timeline = std::make_unique<Timeline>();
    c->session->set_timeline(c->timeline.get());
  }
  *out_context = c.release();
  return PSHARD_OK;
}

void pshard_context_free(pshard_context* context) {
  if (!context)
    return;
  context->session.reset(); // before the device it runs on
  delete context;
}

int64_t pshard_context_n_ctx(const pshard_context* c) { return c ? c->session->n_ctx() : 0; }
int64_t pshard_context_n_past(const pshard_context* c) { return c ? c->session->n_past() : 0; }
int32_t pshard_context_n_threads(const pshard_context* c) {
  return c ? c->session->n_threads() : 0;
}
uint64_t pshard_context_host_bytes(const pshard_context* c) {
  if (!c)
    return 0;
  return c->session->host_bytes() + (c->image_session ? c->image_session->host_bytes() : 0);
}

void pshard_context_reset(pshard_context* c) {
  if (c)
    c->session->reset();
}

pshard_status pshard_context_set_vram_budget(pshard_context* c, uint64_t bytes) {
  if (!c)
    return capi::null_argument("pshard_context_set_vram_budget", "context");
  if (Status st = c->session->set_budget(bytes); !st.ok())
    return fail(st);
  return PSHARD_OK;
}

pshard_status pshard_context_decode(pshard_context* c, const pshard_token* tokens, size_t n_tokens,
                                    const float** logits) {
  return capi::decode_into(
      "pshard_context_decode", c, tokens, n_tokens, logits,
      [](HybridSession& s, std::span<const TokenId> t) { return s.decode(t); });
}

pshard_status pshard_context_decode_all(pshard_context* c, const pshard_token* tokens,
                                        size_t n_tokens, const float** logits) {
  return capi::decode_into(
      "pshard_context_decode_all", c, tokens, n_tokens, logits,
      [](HybridSession& s, std::span<const TokenId> t) { return s.decode_all(t); });
}

pshard_status pshard_context_rewind(pshard_context* c, int64_t n_past) {
  if (!c)
    return capi::null_argument("pshard_context_rewind", "context");
  const Status s = c->session->rewind(n_past);
  return s.ok() ? PSHARD_OK : fail(s);
}

pshard_stats pshard_stats_init(void) {
  pshard_stats s{};
  s.size = sizeof s;
  return s;
}

pshard_plan_stats pshard_plan_stats_init(void) {
  pshard_plan_stats s{};
  s.size = sizeof s;
  return s;
}

pshard_status pshard_context_get_stats(const pshard_context* c, pshard_stats* out) {
  if (!c)
    return capi::null_argument("pshard_context_get_stats", "context");
  if (!out)
    return capi::null_argument("pshard_context_get_stats", "out");
  const SessionStats& st = c->session->stats();
  pshard_stats s = pshard_stats_init();
  s.passes = st.passes;
  s.vram_budget = c->session->budget();
  s.peak_vram_bytes = st.peak_device_bytes;
  s.bytes_streamed = st.bytes_streamed;
  s.bytes_crossed = st.bytes_crossed;
  s.bytes_switched = st.bytes_switched;
  s.budget_switches = st.budget_switches;
  s.n_plans = st.plans.size();
  s.plan_switches = st.plan_switches;
  s.switch_ms = st.switch_ms;
  s.switch_predicted_ms = st.switch_predicted_ms;
  s.graph_passes = st.graph_passes;
  capi::write_out(out, s);
  return PSHARD_OK;
}

pshard_status pshard_context_get_plan_stats(const pshard_context* c, size_t index,
                                            pshard_plan_stats* out) {
  if (!c)
    return capi::null_argument("pshard_context_get_plan_stats", "context");
  if (!out)
    return capi::null_argument("pshard_context_get_plan_stats", "out");
  const auto& plans = c->session->stats().plans;
  if (index >= plans.size())
    return fail(out_of_range("plan index " + std::to_string(index) + " is past the " +
                             std::to_string(plans.size()) + " plans used"));
  const PlanUse& u = plans[index];
  pshard_plan_stats s = capi::plan_stats(u);
  s.strategy = u.strategy.c_str();
  capi::write_out(out, s);
  return PSHARD_OK;
}

void pshard_context_reset_stats(pshard_context* c) {
  if (c)
    c->session->reset_stats();
}

pshard_status pshard_context_write_trace(const pshard_context* c, const char* path) {
  if (!c)
    return capi::null_argument("pshard_context_write_trace", "context");
  if (!path)
    return capi::null_argument("pshard_context_write_trace", "path");
  if (!c->timeline)
    return fail(invalid_argument("the context records no trace: create it with params.trace"));
  if (Status st = c->timeline->write_json(path); !st.ok())
    return fail(st);
  return PSHARD_OK;
}

} // extern "C"
