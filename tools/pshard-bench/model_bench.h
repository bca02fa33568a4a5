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

// The tokens of a text in the model's vocabulary (no BOS), for tests whose routing should
// follow real text, as a MoE's routing profile of that text expects; an error when the
// file cannot be read or gives no tokens.
Result<std::vector<TokenId>> text_tokens(const Model& model, const std::string& path);

// Fills row.samples_ns, backend and plans, running in `target`'s session (the CPU alone,
// or a schedule on a device). The tests' tokens are `text`'s, from its start and cycled
// when the test is longer, or random ids when `text` is empty. `progress` is called
// before each repetition (0 = warm-up).
Status run_test(const Model& model, const HybridTarget& target, int repetitions, BenchRow& row,
                const std::vector<TokenId>& text, const std::function<void(int rep)>& progress);

} // namespace pshard::bench
