// Runs llama-bench's tests on one loaded model: ppN (one forward pass over N
// prompt tokens) and tgN (N tokens decoded one at a time from an empty context),
// each repeated, after one untimed warm-up — on the CPU or under a schedule.
#pragma once

#include "runtime/core/status.h"
#include "runtime/model/model.h"
#include "tools/pshard-bench/bench_session.h"
#include "tools/pshard-bench/bench_types.h"

#include <functional>

namespace pshard::bench {

ModelFacts describe_model(const Model& model, const std::string& filename);

// Fills row.samples_ns, backend and plans, running in `target`'s session (the CPU alone,
// or a schedule on a device). `progress` is called before each repetition (0 = warm-up).
Status run_test(const Model& model, const HybridTarget& target, int repetitions, BenchRow& row,
                const std::function<void(int rep)>& progress);

} // namespace pshard::bench
