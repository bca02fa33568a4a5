// Prefix caching keeps batch invariance: sequences whose prompts start like ones an
// engine ran before read those KV pages instead of decoding them, and still get — bit for
// bit — the logits of the same sequence decoded alone by a CpuSession; on the batched CPU
// engine (dense, quantized, MoE, Qwen) and on the batched hybrid engine under every plan
// of a schedule, on cpu and emu.
#include "runtime/batch/batched_cpu_session.h"
#include "runtime/batch/batched_hybrid_session.h"
#include "tests/runtime/batch/batch_script.h"
#include "tests/runtime/executor/executor_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 256; // the windowed models' pool smaller than the full one
constexpr int kSequences = 8;

// Prompts of 17 to 56 tokens (past one page of 16), then the same prompts extended.
struct Scripts {
  Script base, extended;
};
Scripts scripts(int64_t n_vocab) {
  Scripts s;
  s.base = make_script(kSequences, 3, n_vocab, 21u);
  for (auto& p : s.base.prompts)
    while (p.size() < 17)
      p.insert(p.end(), p.begin(), p.end());
  for (auto& p : s.base.prompts)
    p.resize(std::min<size_t>(p.size(), 56));
  s.extended = extend_script(s.base, n_vocab, 22u);
  return s;
}

Rows alone_on_cpu(const Model& model, const Script& s) {
  return alone(
      [&]() -> Result<std::unique_ptr<Decoder>> {
        PSHARD_ASSIGN_OR_RETURN(auto session, CpuSession::create(model, {kCtx, 2, 256}));
        return std::unique_ptr<Decoder>(std::move(session));
      },
      s);
}

// A model, its scripts and the logits each script's sequences get alone.
struct Case {
  std::unique_ptr<Model> model;
  Scripts s;
  Rows want_base, want;
};
void load_case(const std::string& path, Case* c) {
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  c->model = std::move(*model);
  c->s = scripts(c->model->hparams().n_vocab);
  c->want_base = alone_on_cpu(*c->model, c->s.base);
  c->want = alone_on_cpu(*c->model, c->s.extended);
}

BatchParams batch_params() {
  BatchParams bp;
  bp.max_sequences = kSequences;
  bp.n_ctx = kCtx;
  bp.max_batch_tokens = 48;
  bp.page_tokens = 16;
  bp.n_threads = 2;
  return bp;
}

class PrefixInvariance : public ::testing::TestWithParam<std::string> {};

TEST_P(PrefixInvariance, CachedPromptStartsGiveTheLogitsAlone) {
  const std::string path = invariance_model_path(GetParam(), "prefix-");
  PSHARD_SKIP_IF_MISSING(path);
  Case c;
  ASSERT_NO_FATAL_FAILURE(load_case(path, &c));
  auto& [model, s, want_base, want] = c;
  auto engine = BatchedCpuSession::create(*model, batch_params());
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  int64_t reused = 0;
  EXPECT_TRUE(same_rows(want_base, batched(**engine, s.base, 48, &reused)));
  EXPECT_EQ(reused, 0) << "nothing was cached before";
  EXPECT_GT((*engine)->kv_pages().cached_pages, 0);
  EXPECT_TRUE(same_rows(want, batched(**engine, s.extended, 48, &reused)));
  EXPECT_GE(reused, 16 * kSequences) << "every extended prompt reads at least one page";
  // Again: the extended prompts' own pages are cached now too.
  int64_t again = 0;
  EXPECT_TRUE(same_rows(want, batched(**engine, s.extended, 48, &again)));
  EXPECT_GT(again, reused) << "the second run reads more than the first";
  EXPECT_EQ((*engine)->kv_pages().used_pages, 0);
}

INSTANTIATE_TEST_SUITE_P(Models, PrefixInvariance,
                         ::testing::Values("stories260K.gguf", "stories260K-Q8_0-mixed.gguf",
                                           "mk-qwen3moe", "mk-qwen2", "mk-gemma3",
                                           "mk-gpt-oss"),
                         model_param_name);

TEST(PrefixInvariance, TheHybridEngineOnEveryPlan) {
  const std::string path = invariance_model_path("mk-dense6", "prefix-");
  PSHARD_SKIP_IF_MISSING(path);
  Case c;
  ASSERT_NO_FATAL_FAILURE(load_case(path, &c));
  auto& [model, s, want_base, want] = c;
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, kCtx, {},
                                   test_machine(), {}, kDefaultKvType, kSequences);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  int runs = 0;
  for (uint64_t budget : sched.budgets())
    for (bool emu : {false, true}) {
      SCOPED_TRACE("budget " + std::to_string(budget) + (emu ? " emu" : " cpu"));
      std::unique_ptr<Device> device = emu_or_none(emu, budget);
      BatchedHybridOptions o;
      o.vram_budget = budget;
      auto engine =
          BatchedHybridSession::create(*model, &sched, std::move(device), batch_params(), o);
      ASSERT_TRUE(engine.ok()) << engine.status().to_string();
      int64_t reused = 0;
      const int64_t per_pass = (*engine)->max_batch_tokens();
      EXPECT_TRUE(same_rows(want_base, batched(**engine, s.base, per_pass, &reused)));
      EXPECT_TRUE(same_rows(want, batched(**engine, s.extended, per_pass, &reused)));
      EXPECT_GE(reused, 16 * kSequences);
      ++runs;
    }
  EXPECT_GT(runs, 2);
}

} // namespace
} // namespace pshard
