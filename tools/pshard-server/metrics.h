// /metrics: Prometheus' text format (version 0.0.4) from the batch's statistics and the
// HTTP layer's counts — requests by outcome, tokens and tokens/s, queue length, KV pages,
// VRAM budget and use, passes per plan (budget, tier).
#pragma once

#include "tools/pshard-server/serving_engine.h"

#include <map>
#include <mutex>
#include <string>

namespace pshard::server {

// HTTP responses by route and status, counted by the server's logger.
class HttpCounters {
public:
  void count(const std::string& route, int status);
  std::map<std::pair<std::string, int>, int64_t> snapshot() const;

private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, int64_t> counts_;
};

std::string prometheus_metrics(ServingEngine& engine, const HttpCounters& http);

} // namespace pshard::server
