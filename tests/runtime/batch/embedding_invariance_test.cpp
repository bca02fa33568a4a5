// Embedding rows (Decoder::decode_embeddings, BatchEntry::hidden): a prompt's rows are the
// head's inputs (its logits are the output matrix times the last row), they do not depend
// on how the prompt is split into passes, and every engine gives the CpuSession's rows
// bit for bit — the hybrid session under every plan of several strategies and budgets on
// cpu and emu, and both batched engines with other sequences (prompts and decoding ones)
// sharing the passes.
#include "runtime/batch/batched_hybrid_session.h"
#include "runtime/batch/per_sequence_decoder.h"
#include "tests/runtime/batch/batch_script.h"
#include "tests/runtime/batch/embedding_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 64;

// A prompt's rows through `d`, in passes of at most its max_embedding_rows().
std::vector<float> rows_of(Decoder& d, std::span<const TokenId> prompt) {
  std::vector<float> out;
  const auto step = static_cast<size_t>(d.max_embedding_rows());
  EXPECT_GT(step, 0u);
  for (size_t at = 0; step > 0 && at < prompt.size(); at += step) {
    auto rows = d.decode_embeddings(prompt.subspan(at, std::min(step, prompt.size() - at)));
    EXPECT_TRUE(rows.ok()) << rows.status().to_string();
    if (!rows.ok())
      return out;
    out.insert(out.end(), rows->begin(), rows->end());
  }
  return out;
}

std::vector<float> cpu_rows(const Model& m, std::span<const TokenId> prompt, int64_t n_batch) {
  auto s = CpuSession::create(m, {kCtx, 2, n_batch});
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  return s.ok() ? rows_of(**s, prompt) : std::vector<float>{};
}

class EmbeddingRows : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    path_ = invariance_model_path(GetParam(), "embd-");
    auto m = Model::load(path_);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(*m);
    prompt_ = random_tokens(37, model_->hparams().n_vocab, 3u);
  }
  std::string path_;
  std::unique_ptr<Model> model_;
  std::vector<TokenId> prompt_;
};

TEST_P(EmbeddingRows, AreTheHeadsInputsWhateverThePasses) {
  const ModelHParams& hp = model_->hparams();
  const std::vector<float> whole = cpu_rows(*model_, prompt_, 256);
  ASSERT_EQ(whole.size(), prompt_.size() * static_cast<size_t>(hp.n_embd));
  EXPECT_EQ(cpu_rows(*model_, prompt_, 5), whole); // passes of 5 tokens: the same bits
  // The head multiplies the last row by the output matrix: decode()'s logits.
  auto session = CpuSession::create(*model_, {kCtx, 2, 256});
  ASSERT_TRUE(session.ok());
  auto logits = (*session)->decode(prompt_);
  ASSERT_TRUE(logits.ok()) << logits.status().to_string();
  ThreadPool pool(1);
  CpuOps cpu(pool);
  const SubLayerWeights head = host_sublayer_weights(model_->weights(), model_->sublayers().back());
  std::vector<float> mine(static_cast<size_t>(hp.n_vocab));
  cpu.matmul(head.head.output, whole.data() + whole.size() - static_cast<size_t>(hp.n_embd), 1,
             mine.data());
  EXPECT_TRUE(std::equal(mine.begin(), mine.end(), logits->begin()));
}

TEST_P(EmbeddingRows, EveryPlanGivesTheCpuRowsOnCpuAndEmu) {
  const std::vector<float> want = cpu_rows(*model_, prompt_, 256);
  const int streamed =
      for_each_plan_session(path_, *model_, {1, 4, 16}, {0, 1, 16}, kCtx,
                            [&](HybridSession& s) { EXPECT_EQ(rows_of(s, prompt_), want); });
  EXPECT_GT(streamed, 0) << "no plan streamed: the test would not cover streaming";
}

// Sequences that ask for rows (prompts in chunks) beside sequences that decode: each
// asking sequence gets its CpuSession rows, the others their logits alone.
void expect_rows_alone(BatchDecoder& engine, const Model& m, int64_t per_pass) {
  const int64_t n_vocab = m.hparams().n_vocab, n_embd = m.hparams().n_embd;
  std::vector<std::vector<TokenId>> prompts;
  for (uint32_t i = 0; i < 5; ++i)
    prompts.push_back(random_tokens(3 + 9 * i, n_vocab, 10u + i));
  std::vector<std::vector<float>> want, got(prompts.size());
  for (const auto& p : prompts)
    want.push_back(cpu_rows(m, p, 256));
  const Script chat = make_script(3, 4, n_vocab, 7u); // decoding beside them
  const Rows chat_alone = alone(
      [&]() -> Result<std::unique_ptr<Decoder>> {
        PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(m, {kCtx, 2, 256}));
        return std::unique_ptr<Decoder>(std::move(s));
      },
      chat);
  std::vector<SeqId> ids;
  std::vector<size_t> done(prompts.size(), 0);
  for (size_t i = 0; i < prompts.size(); ++i) {
    auto id = engine.open_sequence();
    ASSERT_TRUE(id.ok()) << id.status().to_string();
    ids.push_back(*id);
  }
  // Two sequences' chunks per pass, alternating, so passes mix sequences and positions.
  for (size_t round = 0;; ++round) {
    std::vector<BatchEntry> pass;
    std::vector<size_t> owner;
    for (size_t i = round % prompts.size(), k = 0; k < prompts.size() && owner.size() < 2;
         ++k, i = (i + 1) % prompts.size()) {
      if (done[i] == prompts[i].size())
        continue;
      owner.push_back(i);
      for (int64_t c = 0; c < per_pass / 2 && done[i] < prompts[i].size(); ++c) {
        BatchEntry e{ids[i], prompts[i][done[i]++], false};
        e.hidden = true;
        pass.push_back(e);
      }
    }
    if (pass.empty())
      break;
    auto out = engine.decode(pass);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->hidden_rows, static_cast<int64_t>(pass.size()));
    ASSERT_EQ(out->n_embd, n_embd);
    EXPECT_EQ(out->rows, 0);
    for (size_t r = 0; r < pass.size(); ++r) {
      const size_t i = std::find(ids.begin(), ids.end(), pass[r].seq) - ids.begin();
      const auto row = out->hidden_row(static_cast<int64_t>(r));
      got[i].insert(got[i].end(), row.begin(), row.end());
    }
  }
  for (size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "sequence " << i;
    engine.close_sequence(ids[i]);
  }
  EXPECT_TRUE(same_rows(chat_alone, batched(engine, chat, per_pass)));
}

TEST_P(EmbeddingRows, BatchedCpuEngineGivesEachSequenceItsRowsAlone) {
  BatchParams bp;
  bp.max_sequences = 6;
  bp.n_ctx = kCtx;
  bp.max_batch_tokens = 16;
  bp.n_threads = 2;
  auto engine = BatchedCpuSession::create(*model_, bp);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  EXPECT_EQ((*engine)->n_embd(), model_->hparams().n_embd);
  expect_rows_alone(**engine, *model_, 16);
}

TEST_P(EmbeddingRows, BatchedHybridEngineGivesEachSequenceItsRowsAloneOnEveryBudget) {
  auto compiled = compile_schedule(path_, planner::Strategy::kAuto, {1, 4, 16}, kCtx, {},
                                   test_machine(), {}, kDefaultKvType, 6);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  for (uint64_t budget : compiled->schedule.budgets()) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    BatchParams bp;
    bp.max_sequences = 6;
    bp.n_ctx = kCtx;
    bp.max_batch_tokens = 16;
    bp.n_threads = 2;
    BatchedHybridOptions o;
    o.vram_budget = budget;
    auto engine = BatchedHybridSession::create(*model_, &compiled->schedule,
                                               emu_or_none(true, budget), bp, o);
    ASSERT_TRUE(engine.ok()) << engine.status().to_string();
    expect_rows_alone(**engine, *model_, 16);
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EmbeddingRows, ::testing::Values("mk-dense6", "mk-qwen3moe"),
                         model_param_name);

TEST(EmbeddingRows, EnginesWithoutRowsRefuseToReturnThem) {
  const std::string path = invariance_model_path("mk-dense6", "embd-");
  auto m = Model::load(path);
  ASSERT_TRUE(m.ok());
  PerSequenceDecoder engine(
      2, 16, (*m)->hparams().n_vocab, [&]() -> Result<std::unique_ptr<Decoder>> {
        PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(**m, {kCtx, 2, 256}));
        return std::unique_ptr<Decoder>(std::move(s));
      });
  auto id = engine.open_sequence();
  ASSERT_TRUE(id.ok());
  BatchEntry e{*id, 1, false};
  e.hidden = true;
  auto out = engine.decode(std::span<const BatchEntry>(&e, 1));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(out.status().message().find("embeddings"), std::string::npos)
      << out.status().to_string();
  // One pass holds at most max_embedding_rows tokens.
  auto s = CpuSession::create(**m, {kCtx, 2, 4});
  ASSERT_TRUE(s.ok());
  const std::vector<TokenId> five = {1, 2, 3, 4, 5};
  auto rows = (*s)->decode_embeddings(five);
  ASSERT_FALSE(rows.ok());
  EXPECT_NE(rows.status().message().find("pass them in parts"), std::string::npos);
  EXPECT_EQ((*s)->n_past(), 0);
}

} // namespace
} // namespace pshard
