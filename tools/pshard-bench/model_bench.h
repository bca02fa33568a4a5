// Runs llama-bench's tests on one loaded model: ppN (one forward pass over N
// prompt tokens) and tgN (N tokens decoded one at a time from an empty context),
// each repeated, after one untimed warm-up.
#pragma once

#include "runtime/core/status.h"
#include "runtime/model/model.h"
#include "tools/pshard-bench/bench_types.h"

#include <functional>

namespace pshard::bench {

ModelFacts describe_model(const Model& model, const std::string& filename);

// Fills row.samples_ns. `progress` is called before each repetition (0 = warm-up).
Status run_test(const Model& model, int repetitions, BenchRow& row,
                const std::function<void(int rep)>& progress);

} // namespace pshard::bench
