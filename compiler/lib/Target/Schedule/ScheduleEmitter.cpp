// PlanGrid -> FlatBuffer via the generated object API: the T types mirror the schema
// one to one, so every field the schema has is visibly filled here.
#include "pshard/Target/ScheduleEmitter.h"

#include "runtime/profile/profile.h"
#include "runtime/schedule/schedule_file.h"

namespace pshard::planner {
namespace {

namespace sfb = fb::schedule;

std::unique_ptr<sfb::ModelInfoT> model_info(const ModelGraph& g) {
  auto m = std::make_unique<sfb::ModelInfoT>();
  m->name = g.name;
  m->architecture = g.architecture;
  m->fingerprint_hi = g.fingerprint.hi;
  m->fingerprint_lo = g.fingerprint.lo;
  m->file_size = g.file_size;
  m->total_weight_bytes = g.total_weight_bytes();
  const ModelHParams& hp = g.hparams;
  m->n_vocab = hp.n_vocab;
  m->n_embd = hp.n_embd;
  m->n_layer = hp.n_layer;
  m->n_head = hp.n_head;
  m->n_head_kv = hp.n_head_kv;
  m->head_dim = hp.head_dim;
  m->n_ff = hp.n_ff;
  m->n_expert = hp.n_expert;
  m->n_expert_used = hp.n_expert_used;
  return m;
}

std::unique_ptr<sfb::MachineInfoT> machine_info(const MachineSummary& s) {
  auto m = std::make_unique<sfb::MachineInfoT>();
  m->profile_fingerprint = s.profile_fingerprint;
  m->name = s.name;
  m->cpu = s.cpu;
  m->gpu = s.gpu;
  m->vram_bytes = s.vram_bytes;
  m->ram_bytes = s.ram_bytes;
  m->cpu_threads = s.cpu_threads;
  return m;
}

std::unique_ptr<sfb::CompileOptionsT> options_of(const ModelGraph& graph, const PlanGrid& grid) {
  auto o = std::make_unique<sfb::CompileOptionsT>();
  o->pshard_version = grid.options.pshard_version;
  o->n_ctx = grid.options.n_ctx;
  o->kv_type = static_cast<uint32_t>(grid.options.kv_type);
  o->threads = grid.options.threads;
  o->tiers = grid.tiers;
  o->budgets = grid.budgets;
  o->strategy = strategy_name(grid.options.strategy);
  o->minimum_budget_bytes = grid.minimum_budget_bytes;
  o->contexts = grid.contexts;
  o->workload_prompt_tokens = grid.options.workload.prompt_tokens;
  o->workload_generated_tokens = grid.options.workload.generated_tokens;
  o->link_h2d_latency_ns = grid.link.h2d_latency_ns;
  o->link_h2d_ns_per_mib = grid.link.h2d_ns_per_mib;
  o->link_d2h_latency_ns = grid.link.d2h_latency_ns;
  o->link_d2h_ns_per_mib = grid.link.d2h_ns_per_mib;
  o->parallel = grid.options.parallel;
  o->expert_level = grid.options.expert_level;
  o->kv_ring_positions = kv_ring_positions(graph, grid.options);
  return o;
}

void add_tensors(const std::vector<TensorRef>& tensors, sfb::SubLayerT* out) {
  for (const TensorRef& t : tensors) {
    auto tensor = std::make_unique<sfb::TensorT>();
    tensor->name = t.name;
    tensor->dims = t.dims;
    tensor->type = static_cast<uint32_t>(t.type);
    tensor->file_offset = t.file_offset;
    tensor->bytes = t.bytes;
    tensor->shard = t.shard;
    out->tensors.push_back(std::move(tensor));
  }
}

std::unique_ptr<sfb::SubLayerT> sublayer_of(const SubLayerInfo& s, TensorType kv_type) {
  auto out = std::make_unique<sfb::SubLayerT>();
  out->name = s.name;
  out->kind = static_cast<sfb::SubLayerKind>(s.kind);
  out->layer = static_cast<int32_t>(s.layer);
  add_tensors(s.tensors, out.get());
  out->weight_bytes = s.weight_bytes;
  out->kv_bytes_per_token = s.kv_bytes_per_token(kv_type);
  out->n_expert = static_cast<int32_t>(s.n_expert);
  out->n_expert_used = static_cast<int32_t>(s.n_expert_used);
  out->expert_bytes = s.expert_bytes;
  return out;
}

std::unique_ptr<sfb::PlanT> plan_of(const Plan& p) {
  auto out = std::make_unique<sfb::PlanT>();
  out->budget_bytes = p.budget_bytes;
  out->tier = p.tier;
  out->strategy = p.strategy;
  for (Placement q : p.placements)
    out->placements.push_back(static_cast<sfb::Placement>(q));
  out->stream_order = p.stream_order;
  out->prefetch_depth = p.prefetch_depth;
  out->stream_slot_count = p.stream_slot_count;
  out->stream_slot_bytes = p.stream_slot_bytes;
  for (const VramBuffer& b : p.vram_layout) {
    auto buf = std::make_unique<sfb::VramBufferT>();
    buf->kind = static_cast<sfb::BufferKind>(b.kind);
    buf->sublayer = b.sublayer;
    buf->index = b.tensor;
    buf->offset = b.offset;
    buf->size = b.size;
    out->vram_layout.push_back(std::move(buf));
  }
  out->arena_bytes = p.arena_bytes;
  out->cpu_threads = p.cpu_threads;
  out->predicted_ms_per_pass = p.predicted_ms_per_pass;
  out->predicted_tokens_per_s = p.predicted_tokens_per_s;
  out->vram_bytes = p.peak_vram_bytes();
  out->cpu_busy_ms = p.cpu_busy_ms;
  out->gpu_busy_ms = p.gpu_busy_ms;
  out->copy_busy_ms = p.copy_busy_ms;
  out->context = p.context;
  out->context_start = p.context_start;
  out->predicted_ms_at_context_start = p.predicted_ms_at_context_start;
  for (const PlanExperts& e : p.experts) {
    auto x = std::make_unique<sfb::PlanExpertsT>();
    x->sublayer = e.sublayer;
    x->resident = e.resident;
    x->copied = e.copied;
    x->resident_bytes = e.resident_bytes;
    x->expected_copy_bytes = e.expected_copy_bytes;
    x->expected_cpu_experts = e.expected_cpu_experts;
    out->experts.push_back(std::move(x));
  }
  return out;
}

std::unique_ptr<sfb::PlanSwitchT> switch_of(const PlanSwitch& s) {
  auto out = std::make_unique<sfb::PlanSwitchT>();
  out->from_context = s.from_context;
  out->from_tier = s.from_tier;
  out->to_context = s.to_context;
  out->to_tier = s.to_tier;
  out->upload_bytes = s.upload_bytes;
  out->evict_bytes = s.evict_bytes;
  out->kv_upload_bytes_per_position = s.kv_upload_bytes_per_position;
  out->kv_download_bytes_per_position = s.kv_download_bytes_per_position;
  out->kv_ring_upload_bytes_per_position = s.kv_ring_upload_bytes_per_position;
  out->kv_ring_download_bytes_per_position = s.kv_ring_download_bytes_per_position;
  out->state_upload_bytes = s.state_upload_bytes;
  out->state_download_bytes = s.state_download_bytes;
  out->priced_positions = s.priced_positions;
  out->predicted_ms = s.predicted_ms;
  return out;
}

// One budget's plans: those at n_ctx in `plans` (as 1.1 files have them), the shorter
// context ranges beside them.
std::unique_ptr<sfb::BudgetPlansT> budget_plans_of(uint64_t budget,
                                                   const std::vector<std::vector<Plan>>& rows,
                                                   const std::vector<int64_t>& contexts,
                                                   const std::vector<PlanSwitch>& switches) {
  auto out = std::make_unique<sfb::BudgetPlansT>();
  out->budget_bytes = budget;
  for (const Plan& p : rows.back())
    out->plans.push_back(plan_of(p));
  for (size_t c = 0; c + 1 < rows.size(); ++c) {
    auto range = std::make_unique<sfb::ContextPlansT>();
    range->context = contexts[c];
    for (const Plan& p : rows[c])
      range->plans.push_back(plan_of(p));
    out->shorter_contexts.push_back(std::move(range));
  }
  for (const PlanSwitch& s : switches)
    out->switches.push_back(switch_of(s));
  return out;
}

sfb::SubLayerKind vision_kind(VisionSubLayerKind k) {
  switch (k) {
  case VisionSubLayerKind::kPatchEmbed:
    return sfb::SubLayerKind::VisionPatch;
  case VisionSubLayerKind::kAttention:
    return sfb::SubLayerKind::VisionAttention;
  case VisionSubLayerKind::kFfn:
    return sfb::SubLayerKind::VisionFfn;
  case VisionSubLayerKind::kMerger:
    return sfb::SubLayerKind::VisionMerger;
  }
  return sfb::SubLayerKind::VisionPatch;
}

std::unique_ptr<sfb::VisionPlanT> vision_plan_of(const VisionPlan& p) {
  auto out = std::make_unique<sfb::VisionPlanT>();
  out->budget_bytes = p.budget_bytes;
  out->patches = p.tier.patches;
  out->strategy = p.strategy;
  for (Placement q : p.placements)
    out->placements.push_back(static_cast<sfb::Placement>(q));
  out->stream_order = p.stream_order;
  out->stream_slot_count = p.stream_slot_count;
  out->stream_slot_bytes = p.stream_slot_bytes;
  out->attention_tile = p.attention_tile;
  out->resident_bytes = p.resident_bytes;
  out->activation_bytes = p.activation_bytes;
  out->workspace_bytes = p.workspace_bytes;
  out->arena_bytes = p.arena_bytes;
  out->predicted_ms = p.predicted_ms;
  out->language_reload_ms = p.language_reload_ms;
  return out;
}

std::unique_ptr<sfb::VisionPhaseT> vision_phase_of(const VisionPhasePlans& phase) {
  const VisionGraph& g = *phase.graph;
  auto out = std::make_unique<sfb::VisionPhaseT>();
  out->projector_type = projector_type_name(g.hp.type);
  out->fingerprint_hi = g.fingerprint.hi;
  out->fingerprint_lo = g.fingerprint.lo;
  out->file_size = g.file_size;
  out->total_weight_bytes = g.total_weight_bytes();
  for (const VisionSubLayerInfo& s : g.sublayers) {
    auto sub = std::make_unique<sfb::SubLayerT>();
    sub->name = s.id.name;
    sub->kind = vision_kind(s.id.kind);
    sub->layer = static_cast<int32_t>(s.id.block);
    add_tensors(s.tensors, sub.get());
    sub->weight_bytes = s.weight_bytes;
    out->sublayers.push_back(std::move(sub));
  }
  for (const ImageTier& t : phase.tiers) {
    out->tier_names.push_back(t.name);
    out->tiers.push_back(t.patches);
  }
  for (const VisionPlan& p : phase.plans)
    out->plans.push_back(vision_plan_of(p));
  return out;
}

} // namespace

Result<std::vector<uint8_t>> serialize_schedule(const ModelGraph& graph, const PlanGrid& grid,
                                                const std::string& created_by,
                                                const VisionPhasePlans* vision) {
  PSHARD_RETURN_IF_ERROR(validate_grid(graph, grid));
  if (vision) {
    PSHARD_RETURN_IF_ERROR(validate_vision_phase(*vision));
    if (vision->budgets != grid.budgets)
      return internal_error("the vision phase was planned for other budgets than the grid's");
  }
  sfb::ScheduleT s;
  s.schema_major = kScheduleSchemaMajor;
  s.schema_minor = kScheduleSchemaMinor;
  s.created_by = created_by;
  s.model = model_info(graph);
  s.machine = machine_info(grid.machine);
  s.options = options_of(graph, grid);
  for (const SubLayerInfo& sub : graph.sublayers)
    s.sublayers.push_back(sublayer_of(sub, grid.options.kv_type));
  s.budgets = grid.budgets;
  s.tiers = grid.tiers;
  for (size_t b = 0; b < grid.budgets.size(); ++b)
    s.grid.push_back(budget_plans_of(grid.budgets[b], grid.plans[b], grid.contexts, grid.switches[b]));
  if (!grid.cpu_only.empty() && grid.budgets.front() != 0) // else grid[0] is it
    s.cpu_only = budget_plans_of(0, grid.cpu_only, grid.contexts, {});
  if (vision)
    s.vision = vision_phase_of(*vision);
  flatbuffers::FlatBufferBuilder builder(64 * 1024);
  sfb::FinishSizePrefixedScheduleBuffer(builder, sfb::Schedule::Pack(builder, &s));
  std::vector<uint8_t> bytes(builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize());
  // Read it back exactly as the runtime will.
  const Result<Schedule> check = Schedule::load_bytes(bytes);
  if (!check.ok())
    return internal_error("the emitted schedule does not load: " + check.status().message());
  return bytes;
}

Status write_schedule_file(const ModelGraph& graph, const PlanGrid& grid, const std::string& path,
                           const std::string& created_by, const VisionPhasePlans* vision) {
  PSHARD_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes,
                          serialize_schedule(graph, grid, created_by, vision));
  return write_file_atomically(path, bytes);
}

} // namespace pshard::planner
