// What the embedding-row tests share: random token texts, a text's rows, and every plan of a model's
// auto and GPU-only schedules run as a session on cpu and on emu.
#pragma once

#include "tests/runtime/executor/executor_test_util.h"

#include <functional>
#include <random>

namespace pshard::testing {

inline std::vector<TokenId> random_tokens(size_t n, int64_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<TokenId> p(n);
  for (TokenId& t : p)
    t = static_cast<TokenId>(rng() % static_cast<uint32_t>(n_vocab));
  return p;
}

// The text's rows in one decode_embeddings call, from position 0.
inline std::vector<float> rows_of(Decoder& d, std::span<const TokenId> text) {
  EXPECT_TRUE(d.rewind(0).ok());
  auto rows = d.decode_embeddings(text);
  EXPECT_TRUE(rows.ok()) << rows.status().to_string();
  return rows.ok() ? std::vector<float>(rows->begin(), rows->end()) : std::vector<float>{};
}

// For auto and GPU-only schedules of the model at `path` compiled for `tiers`: every budget,
// each tier of `forced` (0: looked up per pass), on cpu and on emu, a HybridSession handed
// to `check`. Prints and returns how many runs streamed weights (a test expects some, or
// it would not cover streaming).
inline int for_each_plan_session(const std::string& path, const Model& model,
                                 std::vector<int64_t> tiers, std::vector<int64_t> forced,
                                 int64_t n_ctx, const std::function<void(HybridSession&)>& check) {
  int runs = 0, streamed = 0;
  for (planner::Strategy strategy : {planner::Strategy::kAuto, planner::Strategy::kGpuOnly}) {
    auto compiled = compile_schedule(path, strategy, tiers, n_ctx);
    EXPECT_TRUE(compiled.ok()) << compiled.status().to_string();
    if (!compiled.ok())
      return streamed;
    const Schedule& sched = compiled->schedule;
    for (uint64_t budget : sched.budgets())
      for (int64_t tier : forced)
        for (bool emu : {false, true}) {
          SCOPED_TRACE(std::string(planner::strategy_name(strategy)) + " budget " +
                       std::to_string(budget) + " tier " + std::to_string(tier) +
                       (emu ? " emu" : " cpu"));
          std::unique_ptr<Device> device = emu_or_none(emu, budget);
          auto s = HybridSession::create(model, &sched, device.get(),
                                         forced_params(n_ctx, budget, tier));
          EXPECT_TRUE(s.ok()) << s.status().to_string();
          if (!s.ok())
            continue;
          check(**s);
          ++runs;
          streamed += (*s)->stats().bytes_streamed > 0;
        }
  }
  std::cout << model.hparams().name << ": " << runs << " runs, " << streamed
            << " streamed weights\n";
  return streamed;
}

} // namespace pshard::testing
