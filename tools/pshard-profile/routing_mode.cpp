#include "tools/pshard-profile/routing_mode.h"

#include "runtime/core/file_bytes.h"
#include "runtime/model/model.h"
#include "runtime/model/routing_recorder.h"
#include "runtime/tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>
#include <ostream>

namespace pshard::profiling {
namespace {

Result<std::string> read_text(const std::string& path) {
  PSHARD_ASSIGN_OR_RETURN(std::string text, read_text_file(path, "the text file (-f)"));
  if (text.empty())
    return invalid_argument("the text file '" + path + "' (-f) is empty");
  return text;
}

// Share of a layer's routed slots taken by its busiest quarter of experts (uniform: 25%).
double top_quarter_share(const RoutingLayer& l) {
  std::vector<uint64_t> c = l.counts;
  std::sort(c.begin(), c.end(), std::greater<>());
  const size_t quarter = std::max<size_t>(1, c.size() / 4);
  const uint64_t top = std::accumulate(c.begin(), c.begin() + quarter, uint64_t{0});
  const uint64_t all = std::accumulate(c.begin(), c.end(), uint64_t{0});
  return all ? static_cast<double>(top) / static_cast<double>(all) : 0.0;
}

} // namespace

Status run_routing_profile(const RoutingOptions& o, std::ostream& report) {
  if (o.model_path.empty() || o.text_path.empty())
    return invalid_argument("--routing needs -m MODEL and -f TEXT");
  PSHARD_ASSIGN_OR_RETURN(std::string text, read_text(o.text_path));
  PSHARD_ASSIGN_OR_RETURN(auto model, Model::load(o.model_path));
  const ModelHParams& hp = model->hparams();
  auto name = model->file().get_string("general.name");
  auto arch = model->file().get_string("general.architecture");
  PSHARD_ASSIGN_OR_RETURN(RoutingProfile profile,
                          RoutingProfile::empty_for(hp, name.ok() ? *name : o.model_path,
                                                    arch.ok() ? *arch : ""));
  PSHARD_ASSIGN_OR_RETURN(auto tok, Tokenizer::from_gguf(model->file()));
  std::vector<TokenId> ids = tok->encode(text, /*add_bos=*/false);
  if (o.max_tokens > 0 && static_cast<int64_t>(ids.size()) > o.max_tokens)
    ids.resize(static_cast<size_t>(o.max_tokens));

  SessionParams sp;
  sp.n_ctx = o.n_ctx;
  sp.n_threads = o.threads;
  PSHARD_ASSIGN_OR_RETURN(auto session, CpuSession::create(*model, sp));
  RoutingRecorder recorder(&profile);
  session->set_routing_recorder(&recorder);
  // Each window starts with BOS at position 0, as a request would.
  const int64_t bos = tok->bos();
  const size_t window = static_cast<size_t>(session->n_ctx() - (bos >= 0 ? 1 : 0));
  for (size_t begin = 0; begin < ids.size(); begin += window) {
    const size_t end = std::min(ids.size(), begin + window);
    std::vector<TokenId> chunk;
    chunk.reserve(end - begin + 1);
    if (bos >= 0)
      chunk.push_back(static_cast<TokenId>(bos));
    for (size_t i = begin; i < end; ++i)
      chunk.push_back(ids[i]);
    session->reset();
    PSHARD_RETURN_IF_ERROR(session->decode(chunk).status());
    PSHARD_RETURN_IF_ERROR(recorder.status());
    profile.text_tokens += chunk.size();
  }
  PSHARD_RETURN_IF_ERROR(profile.save(o.output));

  char line[160];
  std::snprintf(line, sizeof line, "%s: %lld tokens through %zu MoE layers, %lld of %lld experts a token\n",
                profile.model.c_str(), static_cast<long long>(profile.text_tokens),
                profile.layers.size(), static_cast<long long>(profile.n_expert_used),
                static_cast<long long>(profile.n_expert));
  report << line;
  for (const RoutingLayer& l : profile.layers) {
    std::snprintf(line, sizeof line, "  layer %3lld: busiest quarter of experts take %5.1f%%\n",
                  static_cast<long long>(l.layer), 100.0 * top_quarter_share(l));
    report << line;
  }
  report << "wrote " << o.output << "\n";
  return Status::ok_status();
}

} // namespace pshard::profiling
