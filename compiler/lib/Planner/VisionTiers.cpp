// Image-size tiers (--image-sizes) and the Table-8-shaped summary of the vision plans.
#include "pshard/Planner/VisionPlanner.h"
#include "runtime/profile/profile_report.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <sstream>

namespace pshard::planner {
namespace {

struct NamedSize {
  const char* name;
  int64_t width, height;
};
// 16:9 frames, as video and screens have them.
constexpr NamedSize kNamedSizes[] = {{"360p", 640, 360},    {"480p", 854, 480},
                                     {"720p", 1280, 720},   {"1080p", 1920, 1080},
                                     {"1440p", 2560, 1440}, {"2160p", 3840, 2160}};

Result<int64_t> parse_patches(const std::string& item) {
  std::string digits = item;
  int64_t scale = 1;
  if (!digits.empty() && (digits.back() == 'K' || digits.back() == 'k')) {
    scale = 1024;
    digits.pop_back();
  }
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n <= 0 || n > (1 << 22) / scale)
    return invalid_argument("image size '" + item +
                            "' is neither a named size (360p, 480p, 720p, 1080p, 1440p, 2160p) "
                            "nor a patch count between 1 and 4M");
  return n * scale;
}

std::string cell(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string gib(uint64_t bytes) {
  return cell("%.2f GiB", static_cast<double>(bytes) / (1ull << 30));
}

} // namespace

Result<std::vector<ImageTier>> parse_image_tiers(const std::string& text, const VisionGraph& g) {
  std::vector<ImageTier> tiers;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto named = std::find_if(std::begin(kNamedSizes), std::end(kNamedSizes),
                                    [&](const NamedSize& s) { return item == s.name; });
    if (named != std::end(kNamedSizes)) {
      tiers.push_back({item, g.patches_for({named->width, named->height})});
      continue;
    }
    PSHARD_ASSIGN_OR_RETURN(int64_t patches, parse_patches(item));
    tiers.push_back({item, patches});
  }
  if (tiers.empty())
    return invalid_argument(
        "--image-sizes is empty: give sizes such as 480p,1080p or patch counts");
  std::stable_sort(tiers.begin(), tiers.end(),
                   [](const ImageTier& a, const ImageTier& b) { return a.patches < b.patches; });
  return tiers;
}

std::string vision_table(const VisionGraph& g, const MachineModel& machine,
                         const std::vector<ImageTier>& tiers, const std::vector<uint64_t>& budgets,
                         uint64_t language_minimum, const VisionPlanOptions& options) {
  std::string out = "| image | patches | min VRAM without VLMOpt | with VLMOpt | reduction |";
  std::string rule = "| --- | ---: | ---: | ---: | ---: |";
  for (uint64_t b : budgets) {
    out += " vision ms at " + format_bytes(static_cast<double>(b)) + " |";
    rule += " ---: |";
  }
  out += "\n" + rule + "\n";
  for (const ImageTier& t : tiers) {
    const VlmMinimum m =
        vlm_minimum(g, t.patches, language_minimum, options.kernel_workspace_bytes);
    const VisionPlan baseline = plan_vision_baseline(g, machine, t, options);
    out += "| " + t.name + " | " + std::to_string(t.patches) + " | " + gib(m.baseline()) + " (" +
           cell("%.0f ms", baseline.predicted_ms) + ") | " + gib(m.vlmopt()) + " | " +
           cell("%.1fx", static_cast<double>(m.baseline()) / static_cast<double>(m.vlmopt())) +
           " |";
    for (uint64_t b : budgets) {
      const VisionPlan p = plan_vision(g, machine, b, t, options);
      std::string c = cell("%.0f", p.predicted_ms);
      if (p.attention_tile == 0)
        c += " (cpu)";
      if (b < m.language) // the language phase does not fit: no GPU plan at all
        c = "OOM";
      else if (b < m.baseline())
        c += " (baseline OOM)";
      out += " " + c + " |";
    }
    out += "\n";
  }
  return out;
}

} // namespace pshard::planner
