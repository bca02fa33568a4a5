#include "tools/pshard-bench/bench_session.h"

#include <cstdio>

namespace pshard::bench {

Status BenchSession::check_target(const HybridTarget& t) {
  if (t.schedule_path.empty() && t.backend != "auto" && t.backend != "cpu")
    return invalid_argument("--backend " + t.backend +
                            " runs a schedule's plans: give one with -s (pshard-compile makes "
                            "it), or drop --backend to run on the CPU alone");
  return Status::ok_status();
}

Result<std::unique_ptr<BenchSession>> BenchSession::open(const Model& model, const HybridTarget& t,
                                                         int64_t n_ctx, int n_threads,
                                                         int64_t n_batch) {
  PSHARD_RETURN_IF_ERROR(check_target(t));
  auto s = std::unique_ptr<BenchSession>(new BenchSession());
  if (t.schedule_path.empty()) {
    PSHARD_ASSIGN_OR_RETURN(s->cpu_, CpuSession::create(model, {n_ctx, n_threads, n_batch}));
    return s;
  }
  HybridParams hp;
  hp.n_ctx = n_ctx;
  hp.n_threads = n_threads;
  hp.n_batch = n_batch;
  PSHARD_ASSIGN_OR_RETURN(s->hybrid_, open_hybrid(model, t, hp));
  s->label_ = s->hybrid_.backend + " " + std::to_string(s->hybrid_.vram_budget >> 20) + "M";
  return s;
}

void BenchSession::reset() {
  if (hybrid_.session)
    hybrid_.session->reset();
  else
    cpu_->reset();
}

void BenchSession::reset_stats() {
  if (hybrid_.session)
    hybrid_.session->reset_stats();
}

std::string BenchSession::plans() const {
  if (!hybrid_.session)
    return "";
  std::string out;
  for (const PlanUse& p : hybrid_.session->stats().plans) {
    char buf[192];
    std::snprintf(buf, sizeof buf,
                  "%s%s tier %lld (%lld passes, predicted %.2f ms, measured %.2f ms per pass)",
                  out.empty() ? "" : "; ", p.strategy.c_str(), static_cast<long long>(p.tier),
                  static_cast<long long>(p.passes), p.predicted_ms_per_pass,
                  p.measured_ms_per_pass());
    out += buf;
    const std::string experts = describe_expert_uses(p.experts, p.predicted_host_experts, p.passes);
    if (!experts.empty())
      out += ", " + experts;
  }
  return out;
}

} // namespace pshard::bench
