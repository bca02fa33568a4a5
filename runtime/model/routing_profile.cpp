#include "runtime/model/routing_profile.h"

#include "runtime/core/file_bytes.h"
#include "runtime/model/hparams.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>

namespace pshard {
namespace {

constexpr const char* kFormat = "pshard-routing";
constexpr int kVersion = 1;

Status bad_file(const std::string& path, const std::string& what) {
  return Status(StatusCode::kInvalidFormat,
                "routing profile '" + path + "': " + what +
                    " (write one with pshard-profile --routing -m MODEL -f TEXT -o FILE)");
}

} // namespace

Result<RoutingProfile> RoutingProfile::empty_for(const ModelHParams& hp, std::string model,
                                                 std::string architecture) {
  if (!hp.is_moe())
    return invalid_argument("a routing profile needs a mixture-of-experts model; '" + model +
                            "' is dense");
  RoutingProfile r;
  r.model = std::move(model);
  r.architecture = std::move(architecture);
  r.n_expert = hp.n_expert;
  r.n_expert_used = hp.n_expert_used;
  for (int64_t l = 0; l < hp.n_layer; ++l)
    if (hp.is_moe_layer(l))
      r.layers.push_back({l, 0, std::vector<uint64_t>(static_cast<size_t>(hp.n_expert), 0)});
  return r;
}

const RoutingLayer* RoutingProfile::find(int64_t layer) const {
  auto it = std::find_if(layers.begin(), layers.end(),
                         [&](const RoutingLayer& l) { return l.layer == layer; });
  return it == layers.end() ? nullptr : &*it;
}

Status RoutingProfile::add(int64_t layer, std::span<const int64_t> experts) {
  auto it = std::find_if(layers.begin(), layers.end(),
                         [&](const RoutingLayer& l) { return l.layer == layer; });
  if (it == layers.end())
    return invalid_argument("routing: layer " + std::to_string(layer) + " is not a MoE layer");
  if (static_cast<int64_t>(experts.size()) != n_expert_used)
    return invalid_argument("routing: a token takes " + std::to_string(n_expert_used) +
                            " experts, got " + std::to_string(experts.size()));
  for (int64_t e : experts) {
    if (e < 0 || e >= n_expert)
      return invalid_argument("routing: expert " + std::to_string(e) + " out of range");
    ++it->counts[static_cast<size_t>(e)];
  }
  ++it->tokens;
  return Status::ok_status();
}

std::vector<double> RoutingProfile::probabilities(int64_t layer) const {
  const RoutingLayer* l = find(layer);
  const double k = static_cast<double>(n_expert_used);
  std::vector<double> p(static_cast<size_t>(n_expert), k / static_cast<double>(n_expert));
  if (!l || l->tokens == 0)
    return p;
  for (size_t e = 0; e < p.size(); ++e)
    p[e] = static_cast<double>(l->counts[e]) / static_cast<double>(l->tokens);
  return p;
}

Status RoutingProfile::validate() const {
  if (n_expert <= 0 || n_expert_used <= 0 || n_expert_used > n_expert)
    return invalid_argument("routing profile: n_expert " + std::to_string(n_expert) +
                            " and n_expert_used " + std::to_string(n_expert_used) +
                            " must satisfy 0 < n_expert_used <= n_expert");
  for (size_t i = 0; i < layers.size(); ++i) {
    const RoutingLayer& l = layers[i];
    const std::string at = "routing profile: layer " + std::to_string(l.layer);
    if (l.layer < 0 || (i > 0 && l.layer <= layers[i - 1].layer))
      return invalid_argument(at + ": layers must be distinct, ascending and >= 0");
    if (static_cast<int64_t>(l.counts.size()) != n_expert)
      return invalid_argument(at + " has " + std::to_string(l.counts.size()) +
                              " counts, expected n_expert = " + std::to_string(n_expert));
    const uint64_t sum = std::accumulate(l.counts.begin(), l.counts.end(), uint64_t{0});
    if (sum != l.tokens * static_cast<uint64_t>(n_expert_used))
      return invalid_argument(at + ": its counts sum to " + std::to_string(sum) +
                              ", expected tokens x n_expert_used = " +
                              std::to_string(l.tokens * static_cast<uint64_t>(n_expert_used)));
    for (uint64_t c : l.counts)
      if (c > l.tokens)
        return invalid_argument(at + ": an expert chosen " + std::to_string(c) +
                                " times in " + std::to_string(l.tokens) + " tokens");
  }
  return Status::ok_status();
}

Result<RoutingProfile> RoutingProfile::load(const std::string& path) {
  PSHARD_ASSIGN_OR_RETURN(std::string text, read_text_file(path, "routing profile"));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return bad_file(path, "not a JSON object");
  RoutingProfile r;
  try { // a missing key or a wrong type throws, and is reported as malformed
    if (j.value("format", std::string()) != kFormat)
      return bad_file(path, "\"format\" is not \"pshard-routing\"");
    if (j.at("version").get<int>() != kVersion)
      return bad_file(path, "version " + j.at("version").dump() + "; this build reads 1");
    r.model = j.value("model", std::string());
    r.architecture = j.value("architecture", std::string());
    r.n_expert = j.at("n_expert").get<int64_t>();
    r.n_expert_used = j.at("n_expert_used").get<int64_t>();
    r.text_tokens = j.value("text_tokens", uint64_t{0});
    for (const nlohmann::json& l : j.at("layers"))
      r.layers.push_back({l.at("layer").get<int64_t>(), l.at("tokens").get<uint64_t>(),
                          l.at("counts").get<std::vector<uint64_t>>()});
  } catch (const nlohmann::json::exception& e) {
    return bad_file(path, std::string("malformed: ") + e.what());
  }
  if (Status s = r.validate(); !s.ok())
    return bad_file(path, s.message());
  return r;
}

Status RoutingProfile::save(const std::string& path) const {
  PSHARD_RETURN_IF_ERROR(validate());
  nlohmann::json j = {{"format", kFormat},         {"version", kVersion},
                      {"model", model},            {"architecture", architecture},
                      {"n_expert", n_expert},      {"n_expert_used", n_expert_used},
                      {"text_tokens", text_tokens}, {"layers", nlohmann::json::array()}};
  for (const RoutingLayer& l : layers)
    j["layers"].push_back({{"layer", l.layer}, {"tokens", l.tokens}, {"counts", l.counts}});
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << j.dump() << "\n";
    if (!out.flush())
      return Status(StatusCode::kIoError, "cannot write '" + tmp + "'");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    return Status(StatusCode::kIoError, "cannot rename '" + tmp + "' to '" + path + "'");
  }
  return Status::ok_status();
}

} // namespace pshard
