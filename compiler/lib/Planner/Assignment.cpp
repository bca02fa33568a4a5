// Step 5 of plan_grid: which resident set each tier of a (budget, context) gets.
//
// Every tier has its own best set, but two tiers on different sets pay a switch each time
// the runtime moves between them: the weights that enter are uploaded, the KV caches
// that enter or leave move their cached positions. Whether that pays depends on how the
// tiers are used, so the choice is priced against a workload (CompileOptions::workload):
// a request runs its prompt in chunks of the largest tier (the remainder at its own
// tier), then decodes token by token, and the next request starts again. The assignment
// with the least total time for that cycle wins; a tier the workload never runs takes
// the set that costs least for one pass between two decode passes.
//
// Before the assignment each set's best plan per tier may become expert-level MoE
// (ExpertPlacement.cpp; both compile paths call this step, so the MLIR pass picks the
// same); a switch then also uploads the resident experts the next plan holds.
//
// Monotonicity: the smaller budget's chosen plans fit this budget too, so they are
// candidates here, and no tier may get a plan slower than the smaller budget's (for the
// first budget: than the CPU-only plan). A larger budget is never predicted slower.
#include "PlannerInternal.h"

#include <algorithm>
#include <set>

namespace pshard::planner::detail {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr Strategy kForced[] = {Strategy::kStatic, Strategy::kDynamic, Strategy::kGpuOnly,
                                Strategy::kLayers};

// The options of one (budget, context) as a table the assignment searches.
class Assignment {
public:
  Assignment(const ModelGraph& graph, const ContextCosts& cc, const std::vector<SetOptions>& sets,
             const std::vector<double>& cap, const LinkPricing& link)
      : sets_(sets), link_(link), steps_(workload_steps(cc.options, cc.context)) {
    const size_t k = sets.size();
    bytes_.resize(k * k);
    for (size_t a = 0; a < k; ++a)
      for (size_t b = 0; b < k; ++b)
        if (a != b)
          bytes_[a * k + b] = switch_bytes(graph, cc.options, sets[a].set, sets[b].set);
    time_.assign(k, std::vector<double>(cc.tiers.size(), kInf));
    for (size_t s = 0; s < k; ++s)
      for (size_t t = 0; t < cc.tiers.size(); ++t) {
        const double v = sets[s].best[t].seconds;
        time_[s][t] = v <= cap[t] ? v : kInf; // never slower than the smaller budget
      }
    for (const WorkloadStep& step : steps_)
      if (std::find(used_.begin(), used_.end(), step.tier) == used_.end())
        used_.push_back(step.tier);
    decode_positions_ = steps_.empty() ? 0 : steps_.back().positions_after;
  }

  size_t set_count() const { return sets_.size(); }
  double time(size_t set, size_t tier) const { return time_[set][tier]; }
  // Resident experts the next plan holds (expert-level MoE) and the previous plan's
  // layout does not keep in place: all of them, unless both keep the same experts on
  // the same set (each plan lays its experts out after its set's resident region).
  double experts_s(size_t from, size_t from_tier, size_t to, size_t to_tier) const {
    const ExpertSplit& a = sets_[from].best[from_tier].experts;
    const ExpertSplit& b = sets_[to].best[to_tier].experts;
    if (b.bytes == 0 || (from == to && a.level == b.level && a.hot == b.hot))
      return 0;
    return link_.h2d_seconds(b.bytes);
  }
  double switch_s(size_t from, size_t to, int64_t positions) const {
    return from == to ? 0.0 : bytes_[from * sets_.size() + to].seconds(positions, link_);
  }
  const std::vector<size_t>& used_tiers() const { return used_; }
  size_t decode_tier() const { return steps_.empty() ? 0 : steps_.back().tier; }

  // The workload's cycle with `set_of[tier]` for the used tiers.
  double cycle(const std::vector<int>& set_of) const {
    double total = 0;
    for (size_t i = 0; i < steps_.size(); ++i) {
      const WorkloadStep& s = steps_[i];
      const auto here = static_cast<size_t>(set_of[s.tier]);
      total += static_cast<double>(s.passes) * time_[here][s.tier];
      const WorkloadStep& next = steps_[(i + 1) % steps_.size()];
      const auto there = static_cast<size_t>(set_of[next.tier]);
      total += switch_s(here, there, s.positions_after) + experts_s(here, s.tier, there, next.tier);
    }
    return total;
  }
  // One pass of an unused tier on `set` between decode passes on `decode_set`.
  double visit(size_t tier, size_t set, size_t decode_set) const {
    return time_[set][tier] + switch_s(decode_set, set, decode_positions_) +
           switch_s(set, decode_set, decode_positions_) +
           experts_s(decode_set, decode_tier(), set, tier) +
           experts_s(set, tier, decode_set, decode_tier());
  }

  // The best assignment of the used tiers; fills set_of for them, returns its time.
  double best_cycle(std::vector<int>* set_of) const {
    const size_t k = sets_.size();
    // Each used tier tries its own fastest sets and the others' fastest (to share them);
    // every set shared by all used tiers is tried too.
    constexpr size_t kTop = 8;
    std::set<size_t> pool;
    for (size_t t : used_) {
      std::vector<size_t> order;
      for (size_t s = 0; s < k; ++s)
        if (time_[s][t] < kInf)
          order.push_back(s);
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t a, size_t b) { return time_[a][t] < time_[b][t]; });
      for (size_t i = 0; i < std::min(kTop, order.size()); ++i)
        pool.insert(order[i]);
    }
    double best = kInf;
    std::vector<int> trial = *set_of;
    auto consider = [&]() {
      const double v = cycle(trial);
      if (v < best) {
        best = v;
        *set_of = trial;
      }
    };
    for (size_t s = 0; s < k; ++s) { // shared by all used tiers
      bool ok = true;
      for (size_t t : used_)
        ok = ok && time_[s][t] < kInf;
      if (!ok)
        continue;
      for (size_t t : used_)
        trial[t] = static_cast<int>(s);
      consider();
    }
    const std::vector<size_t> candidates(pool.begin(), pool.end());
    std::vector<size_t> pick(used_.size(), 0);
    while (!candidates.empty()) { // every combination of the pool over the used tiers
      bool ok = true;
      for (size_t i = 0; i < used_.size(); ++i) {
        trial[used_[i]] = static_cast<int>(candidates[pick[i]]);
        ok = ok && time_[candidates[pick[i]]][used_[i]] < kInf;
      }
      if (ok)
        consider();
      size_t i = 0;
      while (i < pick.size() && ++pick[i] == candidates.size())
        pick[i++] = 0;
      if (i == pick.size())
        break;
    }
    // Then one tier at a time over every set, until no move helps: no single tier could
    // do better on a set of its own (what the trade notes rely on).
    for (bool moved = true; moved && best < kInf;) {
      moved = false;
      for (size_t t : used_)
        for (size_t s = 0; s < k; ++s) {
          if (time_[s][t] == kInf || static_cast<int>(s) == (*set_of)[t])
            continue;
          trial = *set_of;
          trial[t] = static_cast<int>(s);
          const double v = cycle(trial);
          if (v < best) {
            best = v;
            *set_of = trial;
            moved = true;
          }
        }
    }
    return best;
  }

private:
  const std::vector<SetOptions>& sets_;
  const LinkPricing& link_;
  std::vector<WorkloadStep> steps_;
  std::vector<SwitchBytes> bytes_; // [from * k + to]
  std::vector<std::vector<double>> time_;
  std::vector<size_t> used_;
  int64_t decode_positions_ = 0;
};

// The options' entry for `rs`; a set not among them joins with its fixed strategies, so
// a plan carried over on it still competes with them.
size_t find_or_add(std::vector<SetOptions>& options, const ResidentSet& rs, const ContextCosts& cc,
                   uint64_t budget) {
  for (size_t i = 0; i < options.size(); ++i)
    if (options[i].set.resident == rs.resident)
      return i;
  SetOptions added{rs, std::vector<Candidate>(cc.tiers.size())};
  for (size_t t = 0; t < cc.tiers.size(); ++t)
    for (Candidate& c : fixed_candidates(cc.options, cc.tiers[t], budget, rs))
      if (c.seconds < added.best[t].seconds)
        added.best[t] = std::move(c);
  options.push_back(std::move(added));
  return options.size() - 1;
}

// What each forced strategy predicts at every tier of this (budget, context), as a
// forced compile would plan it: its one shared set, its own placement rule.
std::vector<std::pair<Strategy, std::vector<double>>>
forced_times(const ModelGraph& graph, const ContextCosts& cc, uint64_t budget) {
  std::vector<std::pair<Strategy, std::vector<double>>> out;
  for (Strategy f : kForced) {
    CompileOptions o = cc.options;
    o.strategy = f;
    const ResidentSet rs = shared_resident_set(graph, o, cc.tiers, budget, f);
    std::vector<double> times;
    for (const TierCosts& tc : cc.tiers)
      times.push_back(strategy_candidate(o, tc, budget, rs).seconds);
    out.emplace_back(f, std::move(times));
  }
  return out;
}

void note_trades(const ModelGraph& graph, const ContextCosts& cc, uint64_t budget,
                 const Assignment& a, const std::vector<int>& set_of, double total,
                 std::vector<Trade>* trades) {
  const auto forced = forced_times(graph, cc, budget);
  const size_t decode_set = static_cast<size_t>(set_of[a.decode_tier()]);
  for (size_t t = 0; t < cc.tiers.size(); ++t) {
    const auto chosen_set = static_cast<size_t>(set_of[t]);
    const double chosen = a.time(chosen_set, t);
    const std::pair<Strategy, std::vector<double>>* faster = nullptr;
    for (const auto& f : forced)
      if (f.second[t] < chosen && (!faster || f.second[t] < faster->second[t]))
        faster = &f;
    if (!faster)
      continue;
    // The fastest set for this tier alone, and the workload with the tier moved to it
    // (a tier the workload does not run: plus one visit between decode passes).
    size_t own = chosen_set;
    for (size_t s = 0; s < a.set_count(); ++s)
      if (a.time(s, t) < a.time(own, t))
        own = s;
    double shared_total = total, own_total = total;
    if (std::find(a.used_tiers().begin(), a.used_tiers().end(), t) != a.used_tiers().end()) {
      std::vector<int> moved = set_of;
      moved[t] = static_cast<int>(own);
      own_total = a.cycle(moved);
    } else {
      shared_total += a.visit(t, chosen_set, decode_set);
      own_total += a.visit(t, own, decode_set);
    }
    Trade trade;
    trade.budget_bytes = budget;
    trade.context = cc.context;
    trade.tier = cc.tiers[t].tier;
    trade.auto_ms = quantize_ns(chosen) * 1e3;
    trade.forced_strategy = strategy_name(faster->first);
    trade.forced_ms = quantize_ns(faster->second[t]) * 1e3;
    trade.own_ms = quantize_ns(a.time(own, t)) * 1e3;
    trade.workload_ms = quantize_ns(shared_total) * 1e3;
    trade.workload_own_ms = quantize_ns(own_total) * 1e3;
    trades->push_back(std::move(trade));
  }
}

} // namespace

BudgetChoice cpu_only_choice(const ModelGraph& graph, const ContextCosts& cc) {
  BudgetChoice c;
  c.sets.push_back(empty_resident_set(graph));
  for (const TierCosts& tc : cc.tiers) {
    c.set_of_tier.push_back(0);
    c.plan_of_tier.push_back(fixed_candidates(cc.options, tc, 0, c.sets[0]).front());
  }
  return c;
}

BudgetChoice select_plans(const ModelGraph& graph, const ContextCosts& cc, uint64_t budget,
                          std::vector<SetOptions> options, const BudgetChoice& smaller,
                          const LinkPricing& link, std::vector<Trade>* trades) {
  const size_t n_tiers = cc.tiers.size();
  BudgetChoice out;
  if (budget == 0 || cc.options.strategy != Strategy::kAuto) {
    // One set for every tier: CPU only, or a forced strategy's shared set.
    out.sets.push_back(options.front().set);
    for (size_t t = 0; t < n_tiers; ++t) {
      out.set_of_tier.push_back(0);
      out.plan_of_tier.push_back(options.front().best[t]);
    }
    return out;
  }
  // Expert-level MoE where it is faster than each set's best whole-block plan.
  if (cc.options.expert_level)
    for (SetOptions& o : options)
      for (size_t t = 0; t < n_tiers; ++t)
        o.best[t] = expert_level(graph, cc.tiers[t], budget, o.set, o.best[t]);
  // The smaller budget's plans, given this budget's room for slots.
  std::vector<double> cap(n_tiers, kInf);
  for (size_t t = 0; t < n_tiers; ++t) {
    const ResidentSet& rs = smaller.sets[static_cast<size_t>(smaller.set_of_tier[t])];
    Candidate carried = smaller.plan_of_tier[t];
    cap[t] = carried.seconds;
    const Strategy name = carried.strategy;
    finish_candidate(cc.tiers[t], budget, rs, &carried);
    carried.strategy = name;
    const size_t at = find_or_add(options, rs, cc, budget);
    if (carried.seconds < options[at].best[t].seconds)
      options[at].best[t] = std::move(carried);
  }
  for (SetOptions& o : options)
    for (Candidate& c : o.best)
      if (c.feasible())
        c.strategy = describe(c);

  const Assignment a(graph, cc, options, cap, link);
  std::vector<int> set_of(n_tiers, -1);
  const double total = a.best_cycle(&set_of);
  const size_t decode_set = static_cast<size_t>(set_of[a.decode_tier()]);
  for (size_t t = 0; t < n_tiers; ++t) {
    if (set_of[t] >= 0)
      continue;
    // Unused by the workload: the decode set unless another wins one visit, switches
    // included.
    size_t best = decode_set;
    double best_v = a.visit(t, decode_set, decode_set);
    for (size_t s = 0; s < options.size(); ++s) {
      const double v = a.visit(t, s, decode_set);
      if (v < best_v) {
        best_v = v;
        best = s;
      }
    }
    set_of[t] = static_cast<int>(best);
  }
  if (trades)
    note_trades(graph, cc, budget, a, set_of, total, trades);
  // Keep the sets in use, numbered by first use.
  std::vector<int> renumber(options.size(), -1);
  for (size_t t = 0; t < n_tiers; ++t) {
    const auto s = static_cast<size_t>(set_of[t]);
    if (renumber[s] < 0) {
      renumber[s] = static_cast<int>(out.sets.size());
      out.sets.push_back(options[s].set);
    }
    out.set_of_tier.push_back(renumber[s]);
    out.plan_of_tier.push_back(options[s].best[t]);
  }
  return out;
}

} // namespace pshard::planner::detail
