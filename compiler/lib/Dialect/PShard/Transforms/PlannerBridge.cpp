// Conversions between the schedule IR and pshard_planner's structs (see PlannerBridge.h).
#include "PlannerBridge.h"

#include "pshard/Import/ModelGraphIR.h"

#include <cmath>

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

uint64_t toNs(double seconds) {
  return seconds <= 0 || !std::isfinite(seconds)
             ? 0
             : static_cast<uint64_t>(std::llround(seconds * 1e9));
}

static double fromNs(uint64_t ns) { return static_cast<double>(ns) * 1e-9; }

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
  o.kernel_workspace_bytes = schedule.getKernelWorkspace().value_or(0);
  for (BudgetOp budget : schedule.getBody().front().getOps<BudgetOp>())
    o.budgets.push_back(budget.getBudget());

  for (TierOp tier : schedule.getBody().front().getOps<TierOp>()) {
    pd::TierCosts tc;
    tc.tier = static_cast<int64_t>(tier.getTier());
    tc.gpu_fixed_bytes = pd::gpu_fixed_bytes_of(state.graph, tc.tier, *o.kernel_workspace_bytes);
    tc.workspace_bytes = pd::workspace_bytes_of(state.graph, tc.tier, *o.kernel_workspace_bytes);
    planner::SubLayerCosts& costs = tc.costs;
    costs.tier = tc.tier;
    costs.n_ctx = o.n_ctx;
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
      costs.sublayers.push_back(s);
    }
    state.tiers.push_back(std::move(tc));
  }
  return state;
}

const pd::TierCosts* ScheduleState::costsOf(int64_t tier) const {
  for (const pd::TierCosts& tc : tiers)
    if (tc.tier == tier)
      return &tc;
  return nullptr;
}

pd::ResidentSet ScheduleState::residentSetOf(BudgetOp budget) const {
  std::vector<bool> mask(graph.sublayers.size(), false);
  for (Attribute name : budget.getResident()) {
    int index = graph.index_of(name.cast<StringAttr>().str());
    if (index >= 0)
      mask[static_cast<size_t>(index)] = true;
  }
  return pd::make_resident_set(graph, options, std::move(mask));
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

//===-- writing ----------------------------------------------------------------===//

TierOp writeTier(OpBuilder& b, Location loc, const planner::ModelGraph& graph,
                 const pd::TierCosts& tc) {
  const planner::SubLayerCosts& costs = tc.costs;
  auto tier = b.create<TierOp>(loc, tc.tier, toNs(costs.h2d_hidden_s), toNs(costs.d2h_hidden_s),
                               toNs(costs.d2h_logits_s), toNs(costs.h2d_tokens_s));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&tier.getBody().emplaceBlock());
  for (size_t i = 0; i < graph.sublayers.size(); ++i) {
    const planner::SubLayerCost& s = costs.sublayers[i];
    b.create<CostOp>(loc, graph.sublayers[i].name, toNs(s.cpu_s), toNs(s.cpu_loaded_s),
                     toNs(s.gpu_s), toNs(s.copy_s), toNs(s.copy_loaded_s), s.stream_bytes,
                     s.slot_bytes, s.copy_needs_input);
  }
  return tier;
}

PlanOp writeCandidate(OpBuilder& b, Location loc, int64_t tier, int64_t threads,
                      const pd::Candidate& c) {
  SmallVector<int64_t> order;
  for (size_t i = 0; i < c.placements.size(); ++i)
    if (c.placements[i] == Placement::kGpuStreamed)
      order.push_back(static_cast<int64_t>(i));
  auto strategy = static_cast<Strategy>(static_cast<uint32_t>(c.strategy));
  // Before layout: prefetch as deep as the slots allow, busy times and arena unknown.
  auto plan = b.create<PlanOp>(loc, tier, strategy, lettersOf(c.placements), order, c.slots,
                               c.slots, c.slot_bytes, threads, toNs(c.seconds),
                               ArrayRef<int64_t>{0, 0, 0}, /*vram=*/0, /*selected=*/false);
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

} // namespace pshard::ir
