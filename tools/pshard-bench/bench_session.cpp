#include "tools/pshard-bench/bench_session.h"

#include "tools/common/size_parse.h"

#include <cstdio>

namespace pshard::bench {

Status BenchSession::check_target(const BenchTarget& t) {
  if (t.schedule_path.empty() && t.backend != "auto" && t.backend != "cpu")
    return invalid_argument("--backend " + t.backend +
                            " runs a schedule's plans: give one with -s (pshard-compile makes "
                            "it), or drop --backend to run on the CPU alone");
  return Status::ok_status();
}

Result<std::unique_ptr<BenchSession>> BenchSession::open(const Model& model, const BenchTarget& t,
                                                         int64_t n_ctx, int n_threads,
                                                         int64_t n_batch) {
  auto s = std::unique_ptr<BenchSession>(new BenchSession());
  const std::string backend =
      t.backend == "auto" ? (t.schedule_path.empty() ? "cpu" : "emu") : t.backend;
  PSHARD_RETURN_IF_ERROR(check_target(t));
  if (t.schedule_path.empty()) {
    PSHARD_ASSIGN_OR_RETURN(s->cpu_, CpuSession::create(model, {n_ctx, n_threads, n_batch}));
    return s;
  }
  PSHARD_ASSIGN_OR_RETURN(Schedule schedule, Schedule::load_file(t.schedule_path));
  PSHARD_RETURN_IF_ERROR(schedule.check_model(model.file()));
  s->schedule_ = std::make_unique<Schedule>(std::move(schedule));
  uint64_t vram = s->schedule_->budgets().back(); // default: the largest compiled budget
  if (!t.vram.empty()) {
    PSHARD_ASSIGN_OR_RETURN(vram, parse_size(t.vram));
  }
  DeviceOptions d;
  PSHARD_ASSIGN_OR_RETURN(d.backend, parse_device_backend(backend));
  d.vram_budget = vram;
  d.emu_pcie_gbps = t.emu_pcie_gbps;
  PSHARD_ASSIGN_OR_RETURN(s->device_, make_device(d, s->schedule_.get()));
  HybridParams hp;
  hp.n_ctx = n_ctx;
  hp.n_threads = n_threads;
  hp.vram_budget = vram;
  hp.n_batch = n_batch;
  PSHARD_ASSIGN_OR_RETURN(s->hybrid_, HybridSession::create(model, s->schedule_.get(),
                                                            s->device_.get(), hp));
  s->label_ = backend + " " + std::to_string(vram >> 20) + "M";
  return s;
}

void BenchSession::reset() {
  if (hybrid_)
    hybrid_->reset();
  else
    cpu_->reset();
}

void BenchSession::reset_stats() {
  if (hybrid_)
    hybrid_->reset_stats();
}

std::string BenchSession::plans() const {
  if (!hybrid_)
    return "";
  std::string out;
  for (const PlanUse& p : hybrid_->stats().plans) {
    char buf[192];
    std::snprintf(buf, sizeof buf,
                  "%s%s tier %lld (%lld passes, predicted %.2f ms, measured %.2f ms per pass)",
                  out.empty() ? "" : "; ", p.strategy.c_str(), static_cast<long long>(p.tier),
                  static_cast<long long>(p.passes), p.predicted_ms_per_pass,
                  p.measured_ms_per_pass());
    out += buf;
  }
  return out;
}

} // namespace pshard::bench
