// Verifiers of pshard.schedule and what it holds: the runtime's contract, checked on
// the IR — one cost per sub-layer per (context, tier), plans resident exactly on their
// resident set, placements that cover the model, and layouts that never overlap nor
// exceed the budget.
#include "pshard/Dialect/PShard/IR/PShardOps.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>

using namespace mlir;

namespace pshard::ir {
namespace {

// The model a nested op plans for, or null while the schedule's symbol does not resolve
// (the schedule's own verifier reports that once).
ModelOp modelOf(Operation* op) {
  auto schedule = op->getParentOfType<ScheduleOp>();
  return schedule ? schedule.getModelOp() : ModelOp();
}

SmallVector<StringRef> sublayerNames(ModelOp model) {
  SmallVector<StringRef> names;
  for (SubLayerOpInterface s : model.getSubLayers())
    names.push_back(s.getSubLayerName());
  return names;
}

} // namespace

//===-- schedule and tiers -----------------------------------------------------===//

ModelOp ScheduleOp::getModelOp() {
  return SymbolTable::lookupNearestSymbolFrom<ModelOp>(*this, getModelAttr());
}

LogicalResult ScheduleOp::verifyRegions() {
  if (!getModelOp())
    return emitOpError("plans for ") << getModelAttr() << ", which is not a 'pshard.model'";
  ArrayRef<int64_t> tiers = getTiers();
  if (tiers.empty())
    return emitOpError("needs at least one tier");
  for (size_t i = 0; i < tiers.size(); ++i)
    if (tiers[i] <= 0 || (i > 0 && tiers[i] <= tiers[i - 1]))
      return emitOpError("tiers must be positive and strictly ascending");
  ArrayRef<int64_t> contexts = getContexts();
  if (contexts.empty())
    return emitOpError("needs at least one context range");
  for (size_t i = 0; i < contexts.size(); ++i)
    if (contexts[i] <= 0 || (i > 0 && contexts[i] <= contexts[i - 1]))
      return emitOpError("context ranges must be positive and strictly ascending");
  if (getLink().size() != 4)
    return emitOpError("link must hold [h2d latency ns, h2d ns per MiB, d2h latency ns, d2h ns "
                       "per MiB]");

  // Tiers first, by (context, tier), each context with all tiers in order; then budgets
  // ascending by (budget, context): the runtime looks plans up by position.
  std::optional<std::pair<uint64_t, uint64_t>> lastTier, lastBudget;
  size_t tiersOfContext = 0;
  auto closeContext = [&](Operation* at) -> LogicalResult {
    if (lastTier && tiersOfContext != tiers.size())
      return at->emitOpError("follows costs for ")
             << tiersOfContext << " of the schedule's " << tiers.size()
             << " tiers at context " << lastTier->first;
    return success();
  };
  for (Operation& op : getBody().front()) {
    if (auto tier = dyn_cast<TierOp>(op)) {
      if (lastBudget)
        return tier.emitOpError("must come before every 'pshard.budget'");
      if (!lastTier || tier.getContext() != lastTier->first) {
        if (failed(closeContext(tier)))
          return failure();
        if (lastTier && tier.getContext() < lastTier->first)
          return tier.emitOpError("contexts must ascend");
        tiersOfContext = 0;
      }
      if (tiersOfContext >= tiers.size() ||
          static_cast<int64_t>(tier.getTier()) != tiers[tiersOfContext])
        return tier.emitOpError("is tier ")
               << tier.getTier() << " but the schedule's tiers, in order, expect "
               << (tiersOfContext < tiers.size() ? std::to_string(tiers[tiersOfContext]) : "none");
      ++tiersOfContext;
      lastTier = {tier.getContext(), tier.getTier()};
    } else if (auto budget = dyn_cast<BudgetOp>(op)) {
      if (!lastBudget && failed(closeContext(budget)))
        return failure();
      const std::pair<uint64_t, uint64_t> key{budget.getBudget(), budget.getContext()};
      if (lastBudget && key <= *lastBudget)
        return budget.emitOpError("budgets must be strictly ascending by (budget, context)");
      if (std::find(contexts.begin(), contexts.end(), static_cast<int64_t>(budget.getContext())) ==
          contexts.end())
        return budget.emitOpError("is for context ")
               << budget.getContext() << ", which is not one of the schedule's ranges";
      lastBudget = key;
    } else {
      return op.emitOpError("cannot appear in 'pshard.schedule'");
    }
  }
  if (!lastBudget)
    return closeContext(getOperation());
  return success();
}

LogicalResult TierOp::verifyRegions() {
  ModelOp model = modelOf(*this);
  if (!model)
    return success();
  SmallVector<StringRef> names = sublayerNames(model);
  size_t i = 0;
  for (Operation& op : getBody().front()) {
    auto cost = dyn_cast<CostOp>(op);
    if (!cost)
      return op.emitOpError("cannot appear in 'pshard.tier'");
    if (i >= names.size() || cost.getSublayer() != names[i])
      return cost.emitOpError("is for '")
             << cost.getSublayer() << "' but the model's sub-layer #" << i << " is '"
             << (i < names.size() ? names[i] : StringRef("none")) << "'";
    ++i;
  }
  if (i != names.size())
    return emitOpError("has costs for ")
           << i << " of the model's " << names.size() << " sub-layers";
  return success();
}

//===-- budgets ----------------------------------------------------------------===//

LogicalResult BudgetOp::verifyRegions() {
  ModelOp model = modelOf(*this);
  if (!model)
    return success();
  SmallVector<StringRef> names = sublayerNames(model);
  // Each resident set as a placement mask, to compare with its plans' letters.
  SmallVector<std::string> masks;
  llvm::DenseSet<std::pair<uint64_t, uint64_t>> selected;
  for (Operation& op : getBody().front()) {
    if (auto set = dyn_cast<ResidentSetOp>(op)) {
      if (set.getIndex() != masks.size())
        return set.emitOpError("is numbered ") << set.getIndex() << " but is set #" << masks.size()
                                               << " of its budget";
      std::string mask(names.size(), '-');
      for (Attribute a : set.getResident()) {
        StringRef name = a.cast<StringAttr>().getValue();
        auto it = std::find(names.begin(), names.end(), name);
        if (it == names.end())
          return set.emitOpError("keeps '") << name << "' resident but the model has no such sub-layer";
        char& slot = mask[it - names.begin()];
        if (slot == PlanOp::kResident)
          return set.emitOpError("lists '") << name << "' twice";
        slot = PlanOp::kResident;
      }
      masks.push_back(std::move(mask));
      continue;
    }
    if (isa<SwitchOp, TradeOp>(op))
      continue;
    auto plan = dyn_cast<PlanOp>(op);
    if (!plan)
      return op.emitOpError("cannot appear in 'pshard.budget'");
    if (plan.getSet() >= masks.size())
      return plan.emitOpError("is on resident set #")
             << plan.getSet() << ", which its budget does not list before it";
    const std::string& mask = masks[plan.getSet()];
    StringRef letters = plan.getPlacements();
    for (size_t i = 0; i < letters.size() && i < mask.size(); ++i)
      if ((letters[i] == PlanOp::kResident) != (mask[i] == PlanOp::kResident))
        return plan.emitOpError("places '")
               << names[i] << "' " << (letters[i] == PlanOp::kResident ? "" : "not ")
               << "resident, unlike its resident set #" << plan.getSet();
    if (plan.getSelected() && !selected.insert({plan.getTier(), 0}).second)
      return plan.emitOpError("is a second selected plan for tier ") << plan.getTier();
    if (plan.getVram() > getBudget())
      return plan.emitOpError("needs ")
             << plan.getVram() << " bytes of VRAM, over its budget of " << getBudget();
  }
  return success();
}

//===-- plans ------------------------------------------------------------------===//

LogicalResult PlanOp::verify() {
  StringRef letters = getPlacements();
  for (char c : letters)
    if (c != kResident && c != kStreamed && c != kCpu)
      return emitOpError("placement letter '") << c << "' is not R, S or C";
  if (getTier() == 0)
    return emitOpError("tier must be at least 1");
  if (getBusyNs().size() != 3)
    return emitOpError("busy_ns must hold [cpu, gpu, copy]");
  if (ModelOp model = modelOf(*this)) {
    size_t n = sublayerNames(model).size();
    if (letters.size() != n)
      return emitOpError("has ") << letters.size() << " placements but the model has " << n
                                 << " sub-layers";
  }
  // The copy order must name each streamed sub-layer exactly once.
  size_t streamed = std::count(letters.begin(), letters.end(), kStreamed);
  llvm::DenseSet<int64_t> seen;
  for (int64_t index : getOrder()) {
    if (index < 0 || index >= static_cast<int64_t>(letters.size()) || letters[index] != kStreamed)
      return emitOpError("streams sub-layer #") << index << ", which is not placed S";
    if (!seen.insert(index).second)
      return emitOpError("streams sub-layer #") << index << " twice";
  }
  if (seen.size() != streamed)
    return emitOpError("has ") << streamed << " streamed sub-layers but its order lists "
                               << seen.size();
  if (streamed > 0 && (getSlots() == 0 || getSlotBytes() == 0))
    return emitOpError("streams weights but has no streaming slot");
  if (getStrategy() == Strategy::CpuOnly && letters.find_first_not_of(kCpu) != StringRef::npos)
    return emitOpError("is cpu_only but places sub-layers on the GPU");
  return success();
}

// The layout, once pshard-layout-vram wrote it: buffers inside the arena, disjoint,
// weights and KV caches only for resident sub-layers, slots only up to `slots`.
LogicalResult PlanOp::verifyRegions() {
  Block& block = getLayout().front();
  if (block.empty())
    return success();
  ModelOp model = modelOf(*this);
  SmallVector<StringRef> names = model ? sublayerNames(model) : SmallVector<StringRef>();
  SmallVector<std::pair<uint64_t, uint64_t>> extents;
  for (Operation& op : block) {
    auto buffer = dyn_cast<BufferOp>(op);
    if (!buffer)
      return op.emitOpError("cannot appear in a plan's layout");
    if (buffer.getOffset() + buffer.getSize() > getVram())
      return buffer.emitOpError("ends at ") << buffer.getOffset() + buffer.getSize()
                                            << ", past the arena's " << getVram() << " bytes";
    BufferKind kind = buffer.getKind();
    bool perSublayer = kind == BufferKind::weights || kind == BufferKind::kv_cache ||
                       kind == BufferKind::expert;
    if (perSublayer != buffer.getSublayer().has_value())
      return buffer.emitOpError(perSublayer ? "needs" : "cannot have")
             << " 'of <sub-layer>' for a " << stringifyBufferKind(kind) << " buffer";
    if (perSublayer && !names.empty()) {
      auto it = std::find(names.begin(), names.end(), *buffer.getSublayer());
      const char wanted = kind == BufferKind::expert ? kStreamed : kResident;
      if (it == names.end() || getPlacements()[it - names.begin()] != wanted)
        return buffer.emitOpError("holds ")
               << stringifyBufferKind(kind) << " of '" << *buffer.getSublayer()
               << "', which the plan does not place "
               << (kind == BufferKind::expert ? "streamed (expert by expert)" : "resident");
    }
    if (kind == BufferKind::stream_slot && (!buffer.getIndex() || *buffer.getIndex() >= getSlots()))
      return buffer.emitOpError("is a streaming slot outside the plan's ")
             << getSlots() << " slots";
    extents.push_back({buffer.getOffset(), buffer.getOffset() + buffer.getSize()});
  }
  std::sort(extents.begin(), extents.end());
  for (size_t i = 1; i < extents.size(); ++i)
    if (extents[i].first < extents[i - 1].second)
      return emitOpError("has overlapping buffers at [")
             << extents[i].first << ", " << extents[i - 1].second << ")";
  return success();
}

} // namespace pshard::ir
