// Names of the planner's enums, as artifacts store them and users type them.
#include "pshard/Planner/Plan.h"

#include <algorithm>
#include <optional>
#include <tuple>

namespace pshard::planner {

const char* placement_name(Placement p) {
  switch (p) {
  case Placement::kGpuResident: return "gpu_resident";
  case Placement::kGpuStreamed: return "gpu_streamed";
  case Placement::kCpu: return "cpu";
  }
  return "?";
}

const char* buffer_kind_name(BufferKind k) {
  switch (k) {
  case BufferKind::kWeights: return "weights";
  case BufferKind::kKvCache: return "kv_cache";
  case BufferKind::kStreamSlot: return "stream_slot";
  case BufferKind::kActivations: return "activations";
  case BufferKind::kWorkspace: return "workspace";
  case BufferKind::kExpert: return "expert";
  }
  return "?";
}

const char* strategy_name(Strategy s) {
  switch (s) {
  case Strategy::kAuto: return "auto";
  case Strategy::kGpuOnly: return "gpu-only";
  case Strategy::kStatic: return "static";
  case Strategy::kDynamic: return "dynamic";
  case Strategy::kLayers: return "layers";
  case Strategy::kSearch: return "search";
  case Strategy::kCpuOnly: return "cpu-only";
  }
  return "?";
}

Result<Strategy> parse_strategy(const std::string& name) {
  for (Strategy s : {Strategy::kAuto, Strategy::kGpuOnly, Strategy::kStatic, Strategy::kDynamic,
                     Strategy::kLayers})
    if (name == strategy_name(s))
      return s;
  return invalid_argument("unknown strategy '" + name +
                          "': use auto, gpu-only, static, dynamic or layers");
}

namespace {

// A token count: digits with an optional K (×1024) suffix.
std::optional<int64_t> parse_count(const std::string& text) {
  if (text.empty())
    return std::nullopt;
  int64_t scale = 1;
  std::string digits = text;
  if (digits.back() == 'K' || digits.back() == 'k') {
    scale = 1024;
    digits.pop_back();
  }
  if (digits.empty() || digits.size() > 12 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stoll(digits) * scale;
}

} // namespace

Result<Workload> parse_workload(const std::string& text) {
  const size_t colon = text.find(':');
  const std::optional<int64_t> prompt =
      colon == std::string::npos ? std::nullopt : parse_count(text.substr(0, colon));
  const std::optional<int64_t> generated =
      colon == std::string::npos ? std::nullopt : parse_count(text.substr(colon + 1));
  if (!prompt || !generated || *prompt < 1)
    return invalid_argument("cannot read the workload '" + text +
                            "': give PROMPT:GENERATED token counts, a prompt of at least one "
                            "token, e.g. 1024:256");
  return Workload{*prompt, *generated};
}

void sort_trades(std::vector<Trade>* trades) {
  std::stable_sort(trades->begin(), trades->end(), [](const Trade& a, const Trade& b) {
    return std::tie(a.budget_bytes, a.context, a.tier) < std::tie(b.budget_bytes, b.context, b.tier);
  });
}

int Plan::count(Placement p) const {
  int n = 0;
  for (Placement q : placements)
    n += q == p;
  return n;
}

} // namespace pshard::planner
