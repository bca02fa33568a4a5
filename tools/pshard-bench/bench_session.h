// The session one ppN / tgN test runs in: the CPU alone, or a schedule's plans on a
// device (emu or cuda) — the same -s / --backend / --vram / --emu-pcie as pshard-run,
// so a schedule is benchmarked llama-bench style, not only in batched mode.
//
//   HybridTarget t{"model.pshard", "emu", "900M", 0};  // empty schedule_path: the CPU
//   PSHARD_ASSIGN_OR_RETURN(auto s, BenchSession::open(model, t, n_ctx, threads, n_batch));
//   s->reset(); s->decoder().decode(tokens);
#pragma once

#include "runtime/model/model.h"
#include "tools/common/hybrid_target.h"

#include <memory>
#include <string>

namespace pshard::bench {

class BenchSession {
public:
  // A device backend without a schedule is refused (what main checks before the probe).
  static Status check_target(const HybridTarget& t);
  static Result<std::unique_ptr<BenchSession>> open(const Model& model, const HybridTarget& t,
                                                    int64_t n_ctx, int n_threads, int64_t n_batch);
  Decoder& decoder() { return hybrid_.session ? static_cast<Decoder&>(*hybrid_.session) : *cpu_; }
  void reset();
  // Forgets the plans used so far (the warm-up's), so plans() covers the timed runs.
  void reset_stats();
  // "cpu", or "emu 900M" / "cuda 2048M": where the test ran.
  const std::string& label() const { return label_; }
  // The plans the timed runs used, e.g. "dynamic tier 16 (12 passes, predicted 9.1 ms,
  // measured 8.7 ms per pass)"; empty on the CPU alone.
  std::string plans() const;

private:
  std::unique_ptr<CpuSession> cpu_;
  OpenedHybrid hybrid_;
  std::string label_ = "cpu";
};

} // namespace pshard::bench
