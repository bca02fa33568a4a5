#include "runtime/executor/hybrid_session.h"

#include "runtime/model/kv_ring.h"
#include "runtime/model/kv_types.h"

#include <algorithm>

namespace pshard {
namespace {

const fb::schedule::CompileOptions* options_of(const Schedule& s) { return s.root().options(); }

// The checks an artifact must pass besides its own verification and the model
// fingerprint: what it was compiled for must cover what the session asks.
Status check_compile_options(const Schedule& s, int64_t n_ctx) {
  const auto* o = options_of(s);
  if (!o)
    return invalid_format("the schedule has no compile options; recompile it with pshard-compile");
  if (n_ctx > o->n_ctx())
    return invalid_argument("a context of " + std::to_string(n_ctx) +
                            " tokens is longer than the schedule was compiled for (" +
                            std::to_string(o->n_ctx()) + "); use a context of at most " +
                            std::to_string(o->n_ctx()) + " or recompile with --ctx " +
                            std::to_string(n_ctx));
  const TensorType planned = static_cast<TensorType>(o->kv_type());
  if (!is_kv_type(planned))
    return unsupported("the schedule plans a KV cache of ggml type " +
                       std::to_string(o->kv_type()) +
                       ", which this runtime does not keep; recompile with --kv-type f16");
  return Status::ok_status();
}

// The session's KV types: the caller's, else the schedule's, else the default; a
// schedule sized its device KV buffers for its type, so another one is refused.
Result<std::pair<TensorType, TensorType>> kv_types_of(const Schedule* s, const HybridParams& p) {
  const TensorType planned =
      s && options_of(*s) ? static_cast<TensorType>(options_of(*s)->kv_type()) : kDefaultKvType;
  const TensorType k = p.kv_type_k.value_or(planned), v = p.kv_type_v.value_or(planned);
  if (s && (k != planned || v != planned))
    return invalid_argument(
        std::string("the schedule was compiled for a ") + tensor_type_name(planned) +
        " KV cache, not " + tensor_type_name(k) + "/" + tensor_type_name(v) +
        "; recompile with pshard-compile --kv-type " + tensor_type_name(k) + ", or run with -ctk " +
        tensor_type_name(planned) + " -ctv " + tensor_type_name(planned));
  return std::make_pair(k, v);
}

// The rows of the sliding-window layers' caches (kv_ring.h): the schedule's, which sized
// the device caches and priced their moves, if it still holds every window of the
// largest pass; without one, the ring these passes need. A batch's page pool has none:
// its sliding-window layers may have a pool of their own (kv_window_pool_rows).
Result<int64_t> kv_ring_for(const ModelHParams& hp, const Schedule* s, const HybridParams& p,
                            int64_t max_chunk, int64_t n_ctx) {
  const int64_t window = widest_attention_window(hp);
  const int64_t ring = s ? s->kv_ring_positions() : 0;
  if (p.swa_full && ring > 0)
    return invalid_argument("whole sliding-window caches (--swa-full) asked for, but the "
                            "schedule keeps them as rings of " +
                            std::to_string(ring) +
                            " positions; recompile it with pshard-compile --swa-full");
  if (p.kv_pool_rows > 0)
    return p.kv_window_pool_rows;
  if (p.swa_full)
    return int64_t{0};
  if (!s)
    return kv_ring_positions(window, max_chunk, n_ctx);
  if (ring > 0 && (window == 0 || !kv_ring_serves(ring, window, max_chunk)))
    return invalid_format(
        "the schedule keeps sliding-window caches as rings of " + std::to_string(ring) +
        " positions, but this model's windows of " + std::to_string(window) +
        " in passes of up to " + std::to_string(max_chunk) + " tokens need " +
        (window == 0 ? std::string("none") : std::to_string(window + max_chunk - 1)) +
        "; recompile it with pshard-compile for this model");
  return ring;
}

} // namespace

HybridSession::HybridSession(const Model& model, const Schedule* schedule, Device* device,
                             KvCache kv, int32_t threads)
    : model_(model), schedule_(schedule), device_(device), kv_(std::move(kv)),
      pool_(std::make_unique<ThreadPool>(threads)), cpu_(std::make_unique<CpuOps>(*pool_)) {}

HybridSession::~HybridSession() {
  if (device_) {
    (void)device_->synchronize();
    device_->free_arena();
    for (const void* host : registered_host_)
      device_->unregister_host_memory(host);
    for (const void* host : mapped_host_) // before kv_, which holds them, is freed
      device_->unregister_host_memory(host);
  }
}

Result<std::unique_ptr<HybridSession>> HybridSession::create(const Model& model,
                                                             const Schedule* schedule,
                                                             Device* device,
                                                             const HybridParams& params) {
  const ModelHParams& hp = model.hparams();
  if (params.n_ctx < 0)
    return invalid_argument("context length must be positive, got " + std::to_string(params.n_ctx));
  if (params.n_threads < 0)
    return invalid_argument("thread count must be positive, got " +
                            std::to_string(params.n_threads));
  if (params.n_batch <= 0)
    return invalid_argument("batch size must be positive");
  if (params.kv_pool_rows < 0 || params.kv_page_tokens < 0 || params.sequences < 1 ||
      params.max_logit_rows < 1 || (params.kv_pool_rows > 0) != (params.kv_page_tokens > 0) ||
      params.kv_window_pool_rows < 0 || params.kv_window_pool_rows > params.kv_pool_rows)
    return invalid_argument("a batch session needs a KV pool of positive rows in pages of "
                            "positive tokens, at least one sequence and one logits row");
  int64_t n_ctx = params.n_ctx > 0 ? params.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  std::vector<SubLayerTensors> tensors;
  PSHARD_RETURN_IF_ERROR(check_context_fits(hp, n_ctx));
  if (schedule) {
    if (params.n_ctx == 0)
      n_ctx =
          std::min<int64_t>(n_ctx, options_of(*schedule) ? options_of(*schedule)->n_ctx() : n_ctx);
    PSHARD_RETURN_IF_ERROR(schedule->check_model(model.file()));
    PSHARD_RETURN_IF_ERROR(check_compile_options(*schedule, n_ctx));
    PSHARD_ASSIGN_OR_RETURN(tensors, bind_sublayer_tensors(*schedule, model));
  }
  const int32_t threads = params.n_threads > 0 ? params.n_threads : ThreadPool::hardware_threads();
  PSHARD_ASSIGN_OR_RETURN(auto kv_types, kv_types_of(schedule, params));
  PSHARD_RETURN_IF_ERROR(check_kv_types(kv_types.first, kv_types.second, hp.attn_key_dim(),
                                        hp.attn_value_dim()));
  const int64_t kv_rows = params.kv_pool_rows > 0 ? params.kv_pool_rows : n_ctx;
  const int64_t max_chunk = schedule ? schedule->tiers().back()
                                     : std::min(pass_tokens_for(hp, params.n_batch, n_ctx), n_ctx);
  PSHARD_ASSIGN_OR_RETURN(const int64_t ring, kv_ring_for(hp, schedule, params, max_chunk, n_ctx));
  // A model that attends both ways keeps no keys past a pass: without a plan (every layer on
  // the host, one after another) its layers share one layer's rows. A plan keeps them apart:
  // layers' caches move and are mapped for the device one by one.
  PSHARD_ASSIGN_OR_RETURN(KvCache kv,
                          model_kv_cache(hp, kv_rows, kv_types.first, kv_types.second, ring,
                                         /*one_layer_for_all=*/!hp.causal && !schedule,
                                         params.kv_pool_rows > 0 ? params.sequences : 1));
  auto s = std::unique_ptr<HybridSession>(
      new HybridSession(model, schedule, device, std::move(kv), threads));
  s->n_ctx_ = n_ctx;
  s->kv_page_tokens_ = params.kv_page_tokens;
  s->tensors_ = std::move(tensors);
  for (const SubLayer& sl : model.sublayers())
    s->host_weights_.push_back(host_sublayer_weights(model.weights(), sl));
  s->max_chunk_ = max_chunk;
  if (params.force_tier > 0) {
    const auto& tiers = schedule ? schedule->tiers() : std::vector<int64_t>{};
    if (std::find(tiers.begin(), tiers.end(), params.force_tier) == tiers.end())
      return invalid_argument("tier " + std::to_string(params.force_tier) +
                              " is not one the schedule was compiled for");
    s->max_chunk_ = s->force_tier_ = params.force_tier;
  }
  s->max_logit_rows_ = params.max_logit_rows;
  s->act_.reserve(hp, s->max_chunk_, params.max_logit_rows);
  if (device && schedule) {
    for (size_t b = 0; b < schedule->budgets().size(); ++b)
      for (size_t c = 0; c < schedule->contexts().size(); ++c)
        for (size_t t = 0; t < schedule->tiers().size(); ++t)
          PSHARD_RETURN_IF_ERROR(check_kernel_workspace(
              schedule->plan({b, t, c}), device->kernel_workspace_bytes(), device->info().backend));
    s->events_ = std::make_unique<EventPool>(*device);
    for (const gguf::GgufShard& shard : model.file().shards()) { // each file of a split model
      PSHARD_RETURN_IF_ERROR(device->register_host_memory(shard.bytes.data(), shard.bytes.size()));
      s->registered_host_.push_back(shard.bytes.data());
    }
  }
  if (schedule) {
    if (device && params.kv_pool_rows > 0)
      PSHARD_RETURN_IF_ERROR(s->check_batch_capacity(params.sequences));
    PSHARD_RETURN_IF_ERROR(s->set_budget(params.vram_budget));
    const uint64_t peak = s->stats_.peak_device_bytes;
    s->stats_ = {}; // the first upload is no switch
    s->stats_.peak_device_bytes = peak;
  }
  return s;
}

Result<std::span<const float>> HybridSession::decode(std::span<const TokenId> tokens) {
  return decode(tokens, DecodeExtras{});
}

Result<std::span<const float>> HybridSession::decode(std::span<const TokenId> tokens,
                                                     const DecodeExtras& extra) {
  const ModelHParams& hp = model_.hparams();
  if (kv_page_tokens_ > 0 && (extra.embeddings || !extra.rope_positions.empty()))
    return invalid_argument("a batch session takes no image rows; use a one-sequence session");
  PSHARD_RETURN_IF_ERROR(check_decode_extras(hp, tokens, extra, n_past_, n_ctx_));
  const size_t chunk = static_cast<size_t>(max_chunk_);
  for (size_t begin = 0; begin < tokens.size(); begin += chunk) {
    const size_t n = std::min(chunk, tokens.size() - begin);
    DecodeExtras part = extra;
    if (!extra.rope_positions.empty())
      part.rope_positions = extra.rope_positions.subspan(3 * begin, 3 * n);
    PSHARD_RETURN_IF_ERROR(
        forward_chunk(tokens.subspan(begin, n), begin + n == tokens.size(), part));
  }
  return std::span<const float>(act_.ptrs().logits, static_cast<size_t>(hp.n_vocab));
}

int64_t HybridSession::max_logit_rows() const {
  return kv_page_tokens_ > 0 ? 1 : std::min(max_logit_rows_, max_chunk_);
}

Result<std::span<const float>> HybridSession::decode_all(std::span<const TokenId> tokens) {
  const ModelHParams& hp = model_.hparams();
  if (kv_page_tokens_ > 0)
    return invalid_argument("a batch session decodes through decode_batch");
  PSHARD_RETURN_IF_ERROR(check_generates(hp));
  PSHARD_RETURN_IF_ERROR(check_decode_all(tokens, hp.n_vocab, n_past_, n_ctx_, max_logit_rows()));
  const std::vector<int64_t> rows = every_row(tokens.size());
  PassContext ctx = pass_context(tokens, n_past_, /*compute_logits=*/true);
  ctx.logit_rows = rows;
  const auto n = static_cast<int64_t>(tokens.size());
  PSHARD_RETURN_IF_ERROR(run_and_record(ctx, n_past_ + n));
  n_past_ += n;
  return std::span<const float>(act_.ptrs().logits,
                                tokens.size() * static_cast<size_t>(hp.n_vocab));
}

int64_t HybridSession::max_embedding_rows() const { return kv_page_tokens_ > 0 ? 0 : max_chunk_; }

Result<std::span<const float>> HybridSession::decode_embeddings(std::span<const TokenId> tokens) {
  const ModelHParams& hp = model_.hparams();
  if (kv_page_tokens_ > 0)
    return invalid_argument("a batch session returns embeddings through decode_batch");
  PSHARD_RETURN_IF_ERROR(
      check_decode_embeddings(tokens, hp.n_vocab, n_past_, n_ctx_, max_embedding_rows()));
  PSHARD_RETURN_IF_ERROR(check_one_pass_text(hp, n_past_, max_embedding_rows()));
  PassContext ctx = pass_context(tokens, n_past_, /*compute_logits=*/false);
  ctx.hidden_to_host = true;
  const auto n = static_cast<int64_t>(tokens.size());
  PSHARD_RETURN_IF_ERROR(run_and_record(ctx, n_past_ + n));
  n_past_ += n;
  final_norm_rows(*cpu_, model_, act_.ptrs().hidden, every_row(tokens.size()), embeddings_);
  return std::span<const float>(embeddings_);
}

Status HybridSession::restore_positions(int64_t n_past) {
  if (n_past < 0 || n_past > n_ctx_)
    return out_of_range("a saved sequence of " + std::to_string(n_past) +
                        " positions does not fit a context of " + std::to_string(n_ctx_));
  if (kv_page_tokens_ > 0)
    return unsupported("a batch session's sequences are not restored from a saved state");
  if (resident_layout_)
    return internal_error("restore_positions needs the device released first");
  n_past_ = n_past;
  kv_.restore(n_past);
  return Status::ok_status();
}

Status HybridSession::rewind(int64_t n_past) {
  PSHARD_RETURN_IF_ERROR(kv_.rewind(n_past, n_past_));
  n_past_ = n_past;
  return Status::ok_status();
}

Result<PlanRuntime*> HybridSession::plan_runtime(PlanIndex at) {
  const auto key = std::make_tuple(at.budget, at.context, at.tier);
  auto it = plans_.find(key);
  if (it == plans_.end()) {
    const PlanInputs in{model_,   tensors_,         host_weights_, kv_,
                        *device_, device_->arena(), kv_.n_ctx(), mapped_host_};
    PSHARD_ASSIGN_OR_RETURN(PlanRuntime r, build_plan_runtime(schedule_->plan(at), in));
    it = plans_.emplace(key, std::move(r)).first;
  }
  return &it->second;
}

Result<const SchedulePlan*> HybridSession::plan_for_pass(int64_t n_tokens, int64_t positions,
                                                         PlanIndex* at) {
  if (!schedule_)
    return nullptr;
  const int64_t n_select = force_tier_ > 0 ? force_tier_ : n_tokens;
  if (budget_index_ < 0) { // CPU only: the schedule's CPU-only plan, when it has one
    PlanIndex cpu;
    PSHARD_ASSIGN_OR_RETURN(cpu,
                            schedule_->select(n_select, schedule_->budgets().back(), positions));
    return schedule_->cpu_only_plan(cpu.context, cpu.tier);
  }
  PSHARD_ASSIGN_OR_RETURN(*at, schedule_->select(n_select, budget_, positions));
  if (device_) {
    if (static_cast<int>(at->budget) != budget_index_)
      return internal_error("the plan's budget is not the one the arena holds");
    PSHARD_RETURN_IF_ERROR(move_residency(*at, /*budget_switch=*/false));
  }
  return &schedule_->plan(*at);
}

PassContext HybridSession::pass_context(std::span<const TokenId> tokens, int64_t pos0,
                                        bool compute_logits) {
  PassContext c{model_,        host_weights_, schedule_ ? &tensors_ : nullptr,
                *cpu_,         act_.ptrs(),   kv_,
                nullptr,       nullptr,       nullptr,
                timeline_,     tokens,        pos0,
                compute_logits};
  c.n_ctx = n_ctx_;
  return c;
}

Status HybridSession::forward_chunk(std::span<const TokenId> tokens, bool compute_logits,
                                    const DecodeExtras& extra) {
  PassContext ctx = pass_context(tokens, n_past_, compute_logits);
  ctx.embed_rows = extra.embeddings;
  ctx.rope_positions = extra.rope_positions;
  const std::vector<DeepstackRow> deepstack =
      deepstack_rows(extra.deepstack, tokens, model_.hparams().n_embd);
  ctx.deepstack = deepstack;
  const auto n = static_cast<int64_t>(tokens.size());
  PSHARD_RETURN_IF_ERROR(run_and_record(ctx, n_past_ + n));
  n_past_ += n;
  return Status::ok_status();
}

Result<const float*> HybridSession::decode_batch(const BatchPassInput& in) {
  if (kv_page_tokens_ == 0)
    return internal_error("decode_batch needs a session created for a batch (kv_pool_rows)");
  if (static_cast<int64_t>(in.tokens.size()) > max_chunk_ || in.tokens.empty())
    return invalid_argument("a batch pass carries 1 to " + std::to_string(max_chunk_) +
                            " tokens, not " + std::to_string(in.tokens.size()));
  if (in.rows_in_use > kv_.n_ctx() || in.window_rows_in_use > kv_.widest_ring())
    return internal_error("the batch's pages lie outside the KV pool");
  PassContext ctx = pass_context(in.tokens, 0, !in.logit_rows.empty());
  ctx.segments = in.segments;
  ctx.device_segments = in.device_segments;
  ctx.logit_rows = in.logit_rows;
  ctx.page_tokens = kv_page_tokens_;
  ctx.rope_positions = in.rope_positions;
  ctx.replace_rows = in.embedding_rows;
  ctx.deepstack = in.deepstack;
  ctx.hidden_to_host = !in.hidden_rows.empty();
  ctx.window_segments = in.window_segments;
  ctx.device_window_segments = in.device_window_segments;
  batch_rows_ = in.rows_in_use;
  batch_window_rows_ = in.window_rows_in_use;
  PSHARD_RETURN_IF_ERROR(run_and_record(ctx, in.longest));
  final_norm_rows(*cpu_, model_, act_.ptrs().hidden, in.hidden_rows, embeddings_);
  return act_.ptrs().logits;
}

Status HybridSession::check_batch_capacity(int64_t sequences) const {
  const size_t c = schedule_->context_index(n_ctx_);
  for (size_t b = 0; b < schedule_->budgets().size(); ++b)
    for (size_t t = 0; t < schedule_->tiers().size(); ++t) {
      const SchedulePlan& p = schedule_->plan({b, t, c});
      bool resident_attention = false;
      for (size_t i = 0; i < model_.sublayers().size(); ++i)
        resident_attention |= model_.sublayers()[i].kind == SubLayerKind::kAttention &&
                              p.placements[i] == fb::schedule::Placement::GpuResident;
      if (!resident_attention)
        continue;
      // The sliding-window layers' device caches hold the schedule's rows: a batch's pool
      // of window pages (pshard-compile --parallel) must be that pool.
      const int64_t ring = schedule_->kv_ring_positions();
      if (ring > 0 && kv_.widest_ring() != ring)
        return invalid_argument(
            "the schedule keeps the sliding-window layers' device caches in " +
            std::to_string(ring) + " rows (" +
            (p.sequences > 1 ? "the window pages of " + std::to_string(p.sequences) +
                                   " sequences in passes of up to " +
                                   std::to_string(schedule_->tiers().back()) + " tokens"
                             : std::string("one session's ring, pshard-run")) +
            ") and its plan for budget " + std::to_string(p.budget_bytes) +
            " B keeps attention resident, but this engine's " + std::to_string(sequences) +
            " sequences need " +
            (kv_.widest_ring() > 0 ? std::to_string(kv_.widest_ring()) + " rows"
                                   : std::string("whole caches")) +
            "; recompile with pshard-compile --parallel " +
            std::to_string(std::max<int64_t>(sequences, 2)) +
            " (with --swa-full for whole caches), or serve with the compiled -np and pages");
      if (device_kv_positions(p, kv_) >= kv_.n_ctx())
        continue;
      return invalid_argument(
          "the schedule's plan for budget " + std::to_string(p.budget_bytes) + " B, tier " +
          std::to_string(p.tier) + " keeps attention resident with device KV pages for " +
          std::to_string(p.sequences) + " sequence(s) of " + std::to_string(p.context) +
          " positions, but this engine serves " + std::to_string(sequences) + " sequences of " +
          std::to_string(n_ctx_) + " (" + std::to_string(kv_.n_ctx()) +
          " pooled positions); recompile with pshard-compile --parallel " +
          std::to_string(sequences) + ", or serve fewer sequences (-np) or a shorter context (-c)");
    }
  return Status::ok_status();
}

Status HybridSession::run_and_record(PassContext& ctx, int64_t positions) {
  const auto n = static_cast<int64_t>(ctx.tokens.size());
  PlanIndex at;
  PSHARD_ASSIGN_OR_RETURN(const SchedulePlan* plan,
                          plan_for_pass(n, select_positions(positions), &at));
  if (plan && device_ && budget_index_ >= 0) {
    PSHARD_ASSIGN_OR_RETURN(ctx.plan, plan_runtime(at));
    ctx.device = device_;
    ctx.events = events_.get();
  }
  if (timeline_)
    timeline_->set_pass(stats_.passes);
  auto pass = run_pass(ctx);
  if (!pass.ok()) {
    if (device_)
      (void)device_->synchronize(); // leave no work queued on a failed pass
    return pass.status();
  }
  if (plan) {
    pass->budget_bytes = plan->budget_bytes;
    pass->tier = plan->tier;
    pass->context = plan->context;
    pass->predicted_ms = plan->predicted_ms_at(positions);
    if (ctx.plan) // on a device: its expert-level blocks ran split
      for (const SchedulePlan::Experts& e : plan->experts)
        pass->predicted_host_experts += e.expected_cpu_experts;
  } else if (schedule_) { // an artifact without CPU-only plans: the tier, unpredicted
    PSHARD_ASSIGN_OR_RETURN(PlanIndex cpu, schedule_->select(force_tier_ > 0 ? force_tier_ : n,
                                                             schedule_->budgets().back(),
                                                             select_positions(positions)));
    pass->tier = schedule_->tiers()[cpu.tier];
    pass->context = schedule_->contexts()[cpu.context];
  }
  stats_.add(*pass, plan ? plan->strategy : "cpu-only");
  return Status::ok_status();
}

} // namespace pshard
