// Conversions between the schedule IR and pshard_planner's structs (see PlannerBridge.h).
#include "PlannerBridge.h"

#include "pshard/Import/ModelGraphIR.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;
namespace pd = pshard::planner::detail;
using pshard::planner::Placement;

namespace pshard::ir {

FailureOr<std::unique_ptr<LoadedMachine>> loadMachine(StringRef spec, Operation* anchor) {
  auto machine = std::make_unique<LoadedMachine>();
  if (spec == "fixed") {
    machine->model = std::make_unique<planner::FixedMachineModel>(planner::FixedMachineParams{});
    return machine;
  }
  Result<Profile> profile = Profile::load_file(spec.str());
  if (!profile.ok())
    return anchor->emitError("cannot load the machine profile: ") << profile.status().message();
  machine->profile.emplace(std::move(*profile));
  auto model = planner::ProfileMachineModel::create(*machine->profile);
  if (!model.ok())
    return anchor->emitError("the profile '")
           << spec << "' cannot drive the estimator: " << model.status().message();
  machine->model = std::move(*model);
  return machine;
}

FailureOr<planner::Strategy> parseStrategy(StringRef name, Operation* anchor) {
  Result<planner::Strategy> s = planner::parse_strategy(name.str());
  if (!s.ok())
    return anchor->emitError(s.status().message());
  return *s;
}

std::optional<uint64_t> parseBudget(StringRef text) {
  text = text.trim();
  uint64_t scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
    case 'K':
    case 'k':
      scale = 1ull << 10;
      break;
    case 'M':
    case 'm':
      scale = 1ull << 20;
      break;
    case 'G':
    case 'g':
      scale = 1ull << 30;
      break;
    default:
      break;
    }
    if (scale != 1)
      text = text.drop_back();
  }
  uint64_t value = 0;
  if (text.empty() || text.getAsInteger(10, value) || value > UINT64_MAX / scale)
    return std::nullopt;
  return value * scale;
}

char placementLetter(Placement p) {
  switch (p) {
  case Placement::kGpuResident:
    return PlanOp::kResident;
  case Placement::kGpuStreamed:
    return PlanOp::kStreamed;
  case Placement::kCpu:
    return PlanOp::kCpu;
  }
  return '?';
}

std::vector<Placement> placementsOf(StringRef letters) {
  std::vector<Placement> out;
  for (char c : letters)
    out.push_back(c == PlanOp::kResident   ? Placement::kGpuResident
                  : c == PlanOp::kStreamed ? Placement::kGpuStreamed
                                           : Placement::kCpu);
  return out;
}

std::string lettersOf(const std::vector<Placement>& placements) {
  std::string out;
  for (Placement p : placements)
    out.push_back(placementLetter(p));
  return out;
}

namespace {

uint64_t toNs(double seconds) { return pd::to_ns(seconds); }
double fromNs(uint64_t ns) { return pd::from_ns(ns); }

planner::SubLayerCosts tierCostsOf(TierOp tier, int64_t context) {
  planner::SubLayerCosts costs;
  costs.tier = static_cast<int64_t>(tier.getTier());
  costs.n_ctx = context;
  costs.h2d_hidden_s = fromNs(tier.getH2dHiddenNs());
  costs.d2h_hidden_s = fromNs(tier.getD2hHiddenNs());
  costs.d2h_logits_s = fromNs(tier.getD2hLogitsNs());
  costs.h2d_tokens_s = fromNs(tier.getH2dTokensNs());
  for (CostOp c : tier.getBody().front().getOps<CostOp>()) {
    planner::SubLayerCost s;
    s.cpu_s = fromNs(c.getCpuNs());
    s.cpu_loaded_s = fromNs(c.getCpuLoadedNs());
    s.gpu_s = fromNs(c.getGpuNs());
    s.copy_s = fromNs(c.getCopyNs());
    s.copy_loaded_s = fromNs(c.getCopyLoadedNs());
    s.stream_bytes = c.getStreamBytes();
    s.slot_bytes = c.getSlotBytes();
    s.copy_needs_input = c.getCopyNeedsInput();
    s.gpu_graph_saving_s = fromNs(c.getGpuGraphSavingNs().value_or(0));
    s.gpu_fixed_s = fromNs(c.getGpuFixedNs().value_or(0));
    costs.sublayers.push_back(s);
  }
  return costs;
}

} // namespace

//===-- reading a schedule -----------------------------------------------------===//

FailureOr<ScheduleState> ScheduleState::load(ScheduleOp schedule, StringRef strategy) {
  ScheduleState state;
  state.model = schedule.getModelOp();
  if (!state.model)
    return schedule.emitOpError("plans for ")
           << schedule.getModelAttr() << ", which is not a 'pshard.model'";
  FailureOr<planner::ModelGraph> graph = readModelGraph(state.model);
  if (failed(graph))
    return failure();
  state.graph = std::move(*graph);
  FailureOr<planner::Strategy> s = parseStrategy(strategy, schedule);
  if (failed(s))
    return failure();
  planner::CompileOptions& o = state.options;
  o.strategy = *s;
  o.n_ctx = contextOf(state.model);
  o.kv_type = kvTypeOf(state.model);
  o.threads = static_cast<int>(schedule.getThreads());
  o.tiers.assign(schedule.getTiers().begin(), schedule.getTiers().end());
  o.contexts.assign(schedule.getContexts().begin(), schedule.getContexts().end());
  o.workload = {static_cast<int64_t>(schedule.getWorkloadPrompt()),
                static_cast<int64_t>(schedule.getWorkloadGenerated())};
  o.kernel_workspace_bytes = schedule.getKernelWorkspace().value_or(0);
  o.expert_level = !schedule.getWholeMoe();
  for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>())
    if (o.budgets.empty() || o.budgets.back() != budget.getBudget())
      o.budgets.push_back(budget.getBudget());
  if (o.contexts.empty() || o.contexts.back() != o.n_ctx)
    return schedule.emitOpError("context ranges must end at the model's context ") << o.n_ctx;
  ArrayRef<int64_t> link = schedule.getLink();
  state.link = {static_cast<uint64_t>(link[0]), static_cast<uint64_t>(link[1]),
                static_cast<uint64_t>(link[2]), static_cast<uint64_t>(link[3])};

  // Costs by context: each range takes the tiers at its end and at its start (absent, as
  // in a hand-written schedule: the end's costs serve its start too).
  std::map<int64_t, std::vector<planner::SubLayerCosts>> byContext;
  for (TierOp tier : schedule.getBody().front().getOps<TierOp>()) {
    const auto context = static_cast<int64_t>(tier.getContext());
    byContext[context].push_back(tierCostsOf(tier, context));
  }
  if (byContext.empty())
    return state;
  for (size_t k = 0; k < o.contexts.size(); ++k) {
    const int64_t end = o.contexts[k], start = k == 0 ? 1 : o.contexts[k - 1] + 1;
    if (!byContext.count(end))
      return schedule.emitOpError("has no costs at context ")
             << end << ", the end of one of its ranges: run pshard-annotate-costs with these contexts";
    const auto& at_start = byContext.count(start) ? byContext[start] : byContext[end];
    state.contexts.push_back(
        pd::context_costs_from(state.graph, o, end, start, byContext[end], at_start));
  }
  return state;
}

size_t ScheduleState::contextIndexOf(BudgetOp budget) const {
  for (size_t k = 0; k < contexts.size(); ++k)
    if (contexts[k].context == static_cast<int64_t>(budget.getContext()))
      return k;
  return contexts.size();
}

const pd::ContextCosts* ScheduleState::costsOf(BudgetOp budget) const {
  const size_t k = contextIndexOf(budget);
  return k < contexts.size() ? &contexts[k] : nullptr;
}

size_t ScheduleState::tierIndexOf(uint64_t tier) const {
  const auto it = std::find(options.tiers.begin(), options.tiers.end(), static_cast<int64_t>(tier));
  return static_cast<size_t>(it - options.tiers.begin());
}

std::vector<pd::ResidentSet> ScheduleState::residentSetsOf(BudgetOp budget) const {
  planner::CompileOptions o = options;
  o.n_ctx = static_cast<int64_t>(budget.getContext());
  std::vector<pd::ResidentSet> out;
  for (ResidentSetOp set : budget.getBody().front().getOps<ResidentSetOp>()) {
    std::vector<bool> mask(graph.sublayers.size(), false);
    for (Attribute name : set.getResident()) {
      int index = graph.index_of(name.cast<StringAttr>().str());
      if (index >= 0)
        mask[static_cast<size_t>(index)] = true;
    }
    out.push_back(pd::make_resident_set(graph, o, std::move(mask)));
  }
  return out;
}

pd::Candidate ScheduleState::candidateOf(PlanOp plan) const {
  pd::Candidate c;
  c.strategy = static_cast<planner::Strategy>(static_cast<uint32_t>(plan.getStrategy()));
  c.placements = placementsOf(plan.getPlacements());
  c.slots = static_cast<int>(plan.getSlots());
  c.slot_bytes = plan.getSlotBytes();
  c.seconds = fromNs(plan.getTimeNs());
  return c;
}

pd::Candidate ScheduleState::candidateOf(BudgetOp budget, PlanOp plan) const {
  pd::Candidate c = candidateOf(plan);
  const pd::ContextCosts* cc = costsOf(budget);
  const size_t t = tierIndexOf(plan.getTier());
  if (!plan.getExperts() || !cc || t >= cc->tiers.size())
    return c;
  const size_t n = graph.sublayers.size();
  std::vector<bool> level(n, false);
  std::vector<int64_t> hot(n, 0), copied(n, 0);
  ArrayRef<int64_t> triples = *plan.getExperts();
  for (size_t k = 0; k + 2 < triples.size(); k += 3) {
    const int64_t i = triples[k];
    if (i < 0 || static_cast<size_t>(i) >= n || graph.sublayers[static_cast<size_t>(i)].kind != planner::SubLayerKind::kMoe)
      continue; // the verifier of a hand-written schedule does not know the model's MoE
    const int64_t e = graph.sublayers[static_cast<size_t>(i)].n_expert;
    level[static_cast<size_t>(i)] = true;
    hot[static_cast<size_t>(i)] = std::clamp<int64_t>(triples[k + 1], 0, e);
    copied[static_cast<size_t>(i)] = std::clamp<int64_t>(triples[k + 2], 0, e - hot[static_cast<size_t>(i)]);
  }
  c.experts = pd::make_split(graph, cc->tiers[t], std::move(level), std::move(hot), std::move(copied));
  return c;
}

pd::Candidate ScheduleState::finishedCandidateOf(BudgetOp budget, PlanOp plan,
                                                 const pd::ResidentSet& rs) const {
  pd::Candidate c = candidateOf(budget, plan);
  const pd::ContextCosts* cc = costsOf(budget);
  const size_t t = tierIndexOf(plan.getTier());
  if (cc && t < cc->tiers.size())
    pd::finish_candidate(cc->tiers[t], budget.getBudget(), rs, &c);
  return c;
}

FailureOr<pd::BudgetChoice> ScheduleState::choiceOf(BudgetOp budget) const {
  const std::vector<pd::ResidentSet> sets = residentSetsOf(budget);
  pd::BudgetChoice choice;
  choice.set_of_tier.assign(options.tiers.size(), -1);
  choice.plan_of_tier.resize(options.tiers.size());
  std::vector<int> renumber(sets.size(), -1);
  std::vector<PlanOp> selected(options.tiers.size());
  for (PlanOp plan : budget.getBody().front().getOps<PlanOp>()) {
    if (!plan.getSelected())
      continue;
    const size_t t = tierIndexOf(plan.getTier());
    if (t == options.tiers.size())
      return plan.emitOpError("is for tier ") << plan.getTier() << ", which the schedule lacks";
    selected[t] = plan;
  }
  for (size_t t = 0; t < selected.size(); ++t) {
    if (!selected[t])
      return budget.emitOpError("has no selected plan for tier ")
             << options.tiers[t] << ": run pshard-select-plans first";
    const size_t s = selected[t].getSet();
    if (renumber[s] < 0) {
      renumber[s] = static_cast<int>(choice.sets.size());
      choice.sets.push_back(sets[s]);
    }
    choice.set_of_tier[t] = renumber[s];
    // As selected: its slots are what the layout places (a plan that no longer fits is
    // reported by the layout, naming the arena it would need).
    choice.plan_of_tier[t] = candidateOf(budget, selected[t]);
  }
  return choice;
}

pd::ResidentOffsets ScheduleState::offsetsOf(PlanOp plan) const {
  pd::ResidentOffsets at;
  at.tensor.resize(graph.sublayers.size());
  at.kv.assign(graph.sublayers.size(), pd::kNoOffset);
  for (size_t i = 0; i < graph.sublayers.size(); ++i)
    at.tensor[i].assign(graph.sublayers[i].tensors.size(), pd::kNoOffset);
  for (BufferOp buffer : plan.getLayout().front().getOps<BufferOp>()) {
    if (!buffer.getSublayer() || buffer.getKind() == BufferKind::expert)
      continue; // resident experts follow the resident region (finalize_plan)
    const int i = graph.index_of(buffer.getSublayer()->str());
    if (i < 0)
      continue;
    const auto end = static_cast<uint64_t>(buffer.getOffset()) + pd::align_up(buffer.getSize());
    at.end = std::max(at.end, end);
    if (buffer.getKind() == BufferKind::kv_cache)
      at.kv[static_cast<size_t>(i)] = buffer.getOffset();
    else if (buffer.getIndex() && *buffer.getIndex() < at.tensor[static_cast<size_t>(i)].size())
      at.tensor[static_cast<size_t>(i)][*buffer.getIndex()] = buffer.getOffset();
  }
  return at;
}

//===-- writing ----------------------------------------------------------------===//

TierOp writeTier(OpBuilder& b, Location loc, const planner::ModelGraph& graph, int64_t context,
                 const pd::TierCosts& tc) {
  const planner::SubLayerCosts& costs = tc.costs;
  auto tier = b.create<TierOp>(loc, tc.tier, context, toNs(costs.h2d_hidden_s),
                               toNs(costs.d2h_hidden_s), toNs(costs.d2h_logits_s),
                               toNs(costs.h2d_tokens_s));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&tier.getBody().emplaceBlock());
  for (size_t i = 0; i < graph.sublayers.size(); ++i) {
    const planner::SubLayerCost& s = costs.sublayers[i];
    // The schema 1.3 figures only where the profile has them, so that older profiles'
    // IR stays as it was.
    auto optional = [&](double seconds) -> IntegerAttr {
      const uint64_t ns = toNs(seconds);
      return ns ? b.getI64IntegerAttr(static_cast<int64_t>(ns)) : IntegerAttr();
    };
    b.create<CostOp>(loc, graph.sublayers[i].name, toNs(s.cpu_s), toNs(s.cpu_loaded_s),
                     toNs(s.gpu_s), toNs(s.copy_s), toNs(s.copy_loaded_s), s.stream_bytes,
                     s.slot_bytes, s.copy_needs_input, optional(s.gpu_graph_saving_s),
                     optional(s.gpu_fixed_s));
  }
  return tier;
}

ResidentSetOp writeResidentSet(OpBuilder& b, Location loc, const planner::ModelGraph& graph,
                               size_t index, const pd::ResidentSet& rs) {
  SmallVector<StringRef> names;
  for (size_t i = 0; i < rs.resident.size(); ++i)
    if (rs.resident[i])
      names.push_back(graph.sublayers[i].name);
  return b.create<ResidentSetOp>(loc, index, b.getStrArrayAttr(names));
}

PlanOp writeCandidate(OpBuilder& b, Location loc, int64_t tier, size_t set, int64_t threads,
                      const pd::Candidate& c) {
  SmallVector<int64_t> order;
  for (size_t i = 0; i < c.placements.size(); ++i)
    if (c.placements[i] == Placement::kGpuStreamed)
      order.push_back(static_cast<int64_t>(i));
  auto strategy = static_cast<Strategy>(static_cast<uint32_t>(c.strategy));
  // Before layout: prefetch as deep as the slots allow, busy times and arena unknown.
  auto plan = b.create<PlanOp>(loc, tier, set, strategy, lettersOf(c.placements), order, c.slots,
                               c.slots, c.slot_bytes, threads, toNs(c.seconds), /*start=*/0,
                               ArrayRef<int64_t>{0, 0, 0}, /*vram=*/0, /*selected=*/false,
                               DenseI64ArrayAttr());
  if (!c.experts.empty()) {
    SmallVector<int64_t> triples;
    for (size_t i = 0; i < c.experts.level.size(); ++i)
      if (c.experts.level[i])
        triples.append({static_cast<int64_t>(i), c.experts.hot[i], c.experts.copied[i]});
    plan.setExpertsAttr(b.getDenseI64ArrayAttr(triples));
  }
  plan.getLayout().emplaceBlock();
  return plan;
}

void writeFinalPlan(PlanOp op, const planner::ModelGraph& graph, const planner::Plan& plan) {
  Builder b(op.getContext());
  op.setOrderAttr(b.getDenseI64ArrayAttr(
      SmallVector<int64_t>(plan.stream_order.begin(), plan.stream_order.end())));
  op.setPrefetch(static_cast<uint64_t>(plan.prefetch_depth));
  op.setSlots(static_cast<uint64_t>(plan.stream_slot_count));
  op.setSlotBytes(plan.stream_slot_bytes);
  op.setTimeNs(toNs(plan.predicted_ms_per_pass * 1e-3));
  op.setStartTimeNs(toNs(plan.predicted_ms_at_context_start * 1e-3));
  op.setBusyNsAttr(b.getDenseI64ArrayAttr({static_cast<int64_t>(toNs(plan.cpu_busy_ms * 1e-3)),
                                           static_cast<int64_t>(toNs(plan.gpu_busy_ms * 1e-3)),
                                           static_cast<int64_t>(toNs(plan.copy_busy_ms * 1e-3))}));
  op.setVram(plan.arena_bytes);

  Block& layout = op.getLayout().front();
  layout.clear();
  OpBuilder builder = OpBuilder::atBlockEnd(&layout);
  for (const planner::VramBuffer& buffer : plan.vram_layout) {
    StringAttr sublayer;
    if (buffer.sublayer >= 0)
      sublayer = b.getStringAttr(graph.sublayers[static_cast<size_t>(buffer.sublayer)].name);
    IntegerAttr index;
    if (buffer.tensor >= 0)
      index = b.getI64IntegerAttr(buffer.tensor);
    auto kind = static_cast<BufferKind>(static_cast<uint32_t>(buffer.kind));
    builder.create<BufferOp>(op.getLoc(), BufferKindAttr::get(op.getContext(), kind), sublayer,
                             index, b.getI64IntegerAttr(static_cast<int64_t>(buffer.offset)),
                             b.getI64IntegerAttr(static_cast<int64_t>(buffer.size)));
  }
}

SwitchOp writeSwitch(OpBuilder& b, Location loc, const planner::PlanSwitch& s) {
  return b.create<SwitchOp>(loc, s.from_tier, s.to_tier, s.from_context, s.to_context,
                            s.upload_bytes, s.evict_bytes, s.kv_upload_bytes_per_position,
                            s.kv_download_bytes_per_position, s.priced_positions,
                            toNs(s.predicted_ms * 1e-3));
}

TradeOp writeTrade(OpBuilder& b, Location loc, const planner::Trade& t) {
  Result<planner::Strategy> forced = planner::parse_strategy(t.forced_strategy);
  const auto strategy = static_cast<Strategy>(
      static_cast<uint32_t>(forced.ok() ? *forced : planner::Strategy::kStatic));
  return b.create<TradeOp>(loc, t.tier, toNs(t.auto_ms * 1e-3), strategy, toNs(t.forced_ms * 1e-3),
                           toNs(t.own_ms * 1e-3), toNs(t.workload_ms * 1e-3),
                           toNs(t.workload_own_ms * 1e-3));
}

planner::Trade tradeOf(TradeOp op) {
  auto budget = op->getParentOfType<BudgetOp>();
  planner::Trade t;
  t.budget_bytes = budget.getBudget();
  t.context = static_cast<int64_t>(budget.getContext());
  t.tier = static_cast<int64_t>(op.getTier());
  t.auto_ms = fromNs(op.getAutoNs()) * 1e3;
  t.forced_strategy =
      planner::strategy_name(static_cast<planner::Strategy>(static_cast<uint32_t>(op.getForced())));
  t.forced_ms = fromNs(op.getForcedNs()) * 1e3;
  t.own_ms = fromNs(op.getOwnNs()) * 1e3;
  t.workload_ms = fromNs(op.getWorkloadNs()) * 1e3;
  t.workload_own_ms = fromNs(op.getOwnWorkloadNs()) * 1e3;
  return t;
}

} // namespace pshard::ir
