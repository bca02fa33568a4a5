#include "runtime/sampler/sampler_order.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace pshard {

namespace {

struct StageName {
  SamplerStage stage;
  std::string_view name;
  char letter;
};

constexpr std::array<StageName, 9> kStages = {{
    {SamplerStage::kPenalties, "penalties", 'e'},
    {SamplerStage::kDry, "dry", 'd'},
    {SamplerStage::kTopNSigma, "top_n_sigma", 's'},
    {SamplerStage::kTopK, "top_k", 'k'},
    {SamplerStage::kTypicalP, "typ_p", 'y'},
    {SamplerStage::kTopP, "top_p", 'p'},
    {SamplerStage::kMinP, "min_p", 'm'},
    {SamplerStage::kXtc, "xtc", 'x'},
    {SamplerStage::kTemperature, "temperature", 't'},
}};

std::string without(std::string_view s, char c) {
  std::string out;
  for (char x : s)
    if (x != c)
      out += x;
  return out;
}

// A name in llama.cpp's spellings, lower case; nullptr when none matches.
const StageName* find_name(const std::string& lower) {
  if (lower == "nucleus")
    return &kStages[5];
  if (lower == "temp")
    return &kStages[8];
  if (lower == "typ")
    return &kStages[4];
  for (const StageName& s : kStages) {
    std::string kebab(s.name);
    std::replace(kebab.begin(), kebab.end(), '_', '-');
    if (lower == s.name || lower == kebab || lower == without(s.name, '_'))
      return &s;
  }
  return nullptr;
}

std::string known_names() {
  std::string out;
  for (const StageName& s : kStages)
    out += (out.empty() ? "" : ", ") + std::string(s.name);
  return out;
}

// Appends `stage`, refusing a second of the same (the temperature would apply twice).
Status append_once(SamplerOrder& order, SamplerStage stage) {
  if (std::find(order.begin(), order.end(), stage) != order.end())
    return invalid_argument("sampler order names " + std::string(sampler_stage_name(stage)) +
                            " twice; name each stage once");
  order.push_back(stage);
  return Status::ok_status();
}

} // namespace

const SamplerOrder& default_sampler_order() {
  static const SamplerOrder order = {
      SamplerStage::kPenalties, SamplerStage::kDry,         SamplerStage::kTopNSigma,
      SamplerStage::kTopK,      SamplerStage::kTemperature, SamplerStage::kTypicalP,
      SamplerStage::kTopP,      SamplerStage::kMinP,        SamplerStage::kXtc};
  return order;
}

const SamplerOrder& llama_cpp_sampler_order() {
  static const SamplerOrder order = {
      SamplerStage::kPenalties, SamplerStage::kDry,      SamplerStage::kTopNSigma,
      SamplerStage::kTopK,      SamplerStage::kTypicalP, SamplerStage::kTopP,
      SamplerStage::kMinP,      SamplerStage::kXtc,      SamplerStage::kTemperature};
  return order;
}

Result<SamplerOrder> parse_sampler_names(std::span<const std::string> names) {
  SamplerOrder order;
  for (const std::string& name : names) {
    std::string lower = name;
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (lower == "infill" || without(without(lower, '_'), '-') == "adaptivep")
      return invalid_argument("sampler '" + name +
                              "' is one of llama.cpp's that pshard does not have; leave it out");
    const StageName* s = find_name(lower);
    if (!s)
      return invalid_argument("unknown sampler '" + name + "'; the samplers are " + known_names() +
                              " (or llama.cpp's other spellings of them)");
    PSHARD_RETURN_IF_ERROR(append_once(order, s->stage));
  }
  return order;
}

Result<SamplerOrder> parse_sampler_names(std::string_view list) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(';', start), list.size());
    if (end > start)
      names.emplace_back(list.substr(start, end - start));
    start = end + 1;
  }
  return parse_sampler_names(names);
}

Result<SamplerOrder> parse_sampler_letters(std::string_view letters) {
  SamplerOrder order;
  for (char c : letters) {
    const auto* s = std::find_if(kStages.begin(), kStages.end(),
                                 [c](const StageName& n) { return n.letter == c; });
    if (s == kStages.end()) {
      std::string known;
      for (const StageName& n : kStages)
        known += n.letter;
      return invalid_argument("unknown sampler letter '" + std::string(1, c) + "' in \"" +
                              std::string(letters) + "\"; the letters are " + known + " (" +
                              known_names() + ")");
    }
    PSHARD_RETURN_IF_ERROR(append_once(order, s->stage));
  }
  return order;
}

std::string_view sampler_stage_name(SamplerStage stage) {
  return kStages[static_cast<size_t>(stage)].name;
}

std::string sampler_order_names(const SamplerOrder& order) {
  std::string out;
  for (SamplerStage s : order)
    out += (out.empty() ? "" : ";") + std::string(sampler_stage_name(s));
  return out;
}

} // namespace pshard
