// An encoder (BERT, "mk-bert"; EmbeddingGemma, "mk-gemma-embedding"; a decoder converted to attend
// both ways, "mk-qwen2-noncausal"):
// every query sees the whole text, so a text's rows are one pass's. Its rows are the same bits on
// every engine — the hybrid session under every plan of auto and GPU-only schedules on cpu and emu,
// both batched engines with other texts sharing the passes — and what an encoder cannot do is
// refused by name: generating, a text split over passes, a context past its position table, a
// shared prefix.
#include "runtime/batch/batched_hybrid_session.h"
#include "tests/runtime/batch/embedding_test_util.h"

namespace pshard {
namespace {

using namespace pshard::testing;

constexpr int64_t kCtx = 64;

class EncoderRows : public ::testing::TestWithParam<std::string> {
protected:
  void SetUp() override {
    path_ = invariance_model_path(GetParam(), "enc-");
    auto m = Model::load(path_);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(*m);
    ASSERT_FALSE(model_->hparams().causal);
    text_ = random_tokens(37, model_->hparams().n_vocab, 3u);
  }
  std::vector<float> cpu_rows(std::span<const TokenId> text) const {
    auto s = CpuSession::create(*model_, {kCtx, 2, kCtx});
    EXPECT_TRUE(s.ok()) << s.status().to_string();
    return s.ok() ? rows_of(**s, text) : std::vector<float>{};
  }
  std::string path_;
  std::unique_ptr<Model> model_;
  std::vector<TokenId> text_;
};

TEST_P(EncoderRows, EveryRowSeesTheTokensAfterIt) {
  const int64_t d = model_->hparams().n_embd;
  const std::vector<float> rows = cpu_rows(text_);
  std::vector<TokenId> changed = text_;
  changed.back() = (changed.back() + 1) % static_cast<TokenId>(model_->hparams().n_vocab);
  const std::vector<float> other = cpu_rows(changed);
  ASSERT_EQ(rows.size(), other.size());
  // A causal model's first row could not depend on the last token; an encoder's does.
  EXPECT_NE(std::vector<float>(rows.begin(), rows.begin() + d),
            std::vector<float>(other.begin(), other.begin() + d));
  // The same text twice: the same bits (no state left from the first).
  auto s = CpuSession::create(*model_, {kCtx, 2, kCtx});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(rows_of(**s, changed), other);
  EXPECT_EQ(rows_of(**s, text_), rows);
}

TEST_P(EncoderRows, EveryPlanGivesTheCpuRowsOnCpuAndEmu) {
  const std::vector<float> want = cpu_rows(text_);
  const int streamed =
      for_each_plan_session(path_, *model_, {1, 4, kCtx}, {0, kCtx}, kCtx,
                            [&](HybridSession& s) { EXPECT_EQ(rows_of(s, text_), want); });
  EXPECT_GT(streamed, 0) << "no plan streamed: the test would not cover streaming";
}

// Texts of several lengths in passes that mix them (each text whole in one pass): each
// gets its rows alone.
void expect_texts_alone(BatchDecoder& engine, const Model& m, const std::vector<float>& first,
                        std::span<const TokenId> first_text) {
  const int64_t n_vocab = m.hparams().n_vocab, n_embd = m.hparams().n_embd;
  std::vector<std::vector<TokenId>> texts = {
      std::vector<TokenId>(first_text.begin(), first_text.end())};
  for (uint32_t i = 0; i < 4; ++i)
    texts.push_back(random_tokens(3 + 5 * i, n_vocab, 10u + i));
  EXPECT_TRUE(engine.embeds_only());
  std::vector<std::vector<float>> got(texts.size());
  // Passes of two texts each, then one alone; sequences open and close as they go.
  for (size_t begin = 0; begin < texts.size(); begin += 2) {
    std::vector<BatchEntry> pass;
    std::vector<SeqId> ids;
    for (size_t i = begin; i < std::min(begin + 2, texts.size()); ++i) {
      auto id = engine.open_sequence_with_prefix(texts[i]);
      ASSERT_TRUE(id.ok()) << id.status().to_string();
      EXPECT_EQ(id->reused, 0) << "an encoder shares no start";
      ids.push_back(id->seq);
      for (TokenId t : texts[i]) {
        BatchEntry e{id->seq, t, false};
        e.hidden = true;
        pass.push_back(e);
      }
    }
    auto out = engine.decode(pass);
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    ASSERT_EQ(out->hidden_rows, static_cast<int64_t>(pass.size()));
    for (size_t r = 0; r < pass.size(); ++r) {
      const size_t i = begin + (std::find(ids.begin(), ids.end(), pass[r].seq) - ids.begin());
      const auto row = out->hidden_row(static_cast<int64_t>(r));
      got[i].insert(got[i].end(), row.begin(), row.end());
    }
    // A second pass on a sequence would see only part of its text: refused.
    BatchEntry more{ids[0], 1, false};
    more.hidden = true;
    auto again = engine.decode(std::span<const BatchEntry>(&more, 1));
    ASSERT_FALSE(again.ok());
    EXPECT_NE(again.status().message().find("one pass"), std::string::npos)
        << again.status().to_string();
    for (SeqId id : ids)
      engine.close_sequence(id);
  }
  EXPECT_EQ(got[0], first);
  auto alone = CpuSession::create(m, {kCtx, 2, kCtx});
  ASSERT_TRUE(alone.ok());
  for (size_t i = 1; i < texts.size(); ++i) {
    EXPECT_EQ(got[i], rows_of(**alone, texts[i])) << "text " << i;
    EXPECT_EQ(got[i].size(), texts[i].size() * static_cast<size_t>(n_embd));
  }
  // Logits are refused, naming what the model does instead.
  auto id = engine.open_sequence();
  ASSERT_TRUE(id.ok());
  BatchEntry asks{*id, 1, true};
  auto logits = engine.decode(std::span<const BatchEntry>(&asks, 1));
  ASSERT_FALSE(logits.ok());
  EXPECT_EQ(logits.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(logits.status().message().find("embeds text"), std::string::npos);
  engine.close_sequence(*id);
}

TEST_P(EncoderRows, BatchedCpuEngineGivesEachTextItsRowsAlone) {
  BatchParams bp;
  bp.max_sequences = 4;
  bp.n_ctx = kCtx;
  bp.max_batch_tokens = 2 * kCtx;
  bp.n_threads = 2;
  auto engine = BatchedCpuSession::create(*model_, bp);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  expect_texts_alone(**engine, *model_, cpu_rows(text_), text_);
}

TEST_P(EncoderRows, BatchedHybridEngineGivesEachTextItsRowsAloneOnEveryBudget) {
  auto compiled = compile_schedule(path_, planner::Strategy::kAuto, {1, 16, 2 * kCtx}, kCtx, {},
                                   test_machine(), {}, kDefaultKvType, 4);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const std::vector<float> want = cpu_rows(text_);
  for (uint64_t budget : compiled->schedule.budgets()) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    BatchParams bp;
    bp.max_sequences = 4;
    bp.n_ctx = kCtx;
    bp.max_batch_tokens = 2 * kCtx;
    bp.n_threads = 2;
    BatchedHybridOptions o;
    o.vram_budget = budget;
    auto engine = BatchedHybridSession::create(*model_, &compiled->schedule,
                                               emu_or_none(true, budget), bp, o);
    ASSERT_TRUE(engine.ok()) << engine.status().to_string();
    expect_texts_alone(**engine, *model_, want, text_);
  }
}

TEST_P(EncoderRows, WhatAnEncoderCannotDoIsRefusedByName) {
  auto s = CpuSession::create(*model_, {kCtx, 2, 16});
  ASSERT_TRUE(s.ok());
  auto logits = (*s)->decode(text_);
  ASSERT_FALSE(logits.ok());
  EXPECT_EQ(logits.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(logits.status().message().find("--embedding"), std::string::npos);
  // A pass holds the whole context whatever the batch size asked (16)...
  EXPECT_EQ((*s)->max_embedding_rows(), kCtx);
  // ... and a text given in two calls is refused: the second would see a part of it.
  auto first = (*s)->decode_embeddings(std::span<const TokenId>(text_).first(16));
  ASSERT_TRUE(first.ok());
  auto rest = (*s)->decode_embeddings(std::span<const TokenId>(text_).subspan(16, 16));
  ASSERT_FALSE(rest.ok());
  EXPECT_NE(rest.status().message().find("give the whole text in one call"), std::string::npos)
      << rest.status().to_string();
  if (!model_->hparams().family->encoder || model_->hparams().family->encoder_rope_glu)
    return; // no position table to outgrow
  // The position table holds 64 positions.
  auto longer = CpuSession::create(*model_, {2 * kCtx, 2, 16});
  ASSERT_FALSE(longer.ok());
  EXPECT_NE(longer.status().message().find("use -c 64"), std::string::npos)
      << longer.status().to_string();
  BatchParams bp;
  bp.n_ctx = 2 * kCtx;
  EXPECT_FALSE(BatchedCpuSession::create(*model_, bp).ok());
}

// BERT, Nomic Embed's NomicBert (RoPE, SwiGLU), Qwen2's decoder converted to attend both ways
// (gte-Qwen2: RoPE, pre-norms, grouped-query attention, a head it never runs) and EmbeddingGemma
// (Gemma 3's blocks, five local layers of six whose 7-position windows are centred on the query)
// and ModernBERT (pre-LayerNorms without biases, GeGLU with GELU's exact form, windows of 8).
INSTANTIATE_TEST_SUITE_P(Models, EncoderRows,
                         ::testing::Values("mk-bert", "mk-nomic-bert", "mk-qwen2-noncausal",
                                           "mk-gemma-embedding", "mk-modern-bert"),
                         model_param_name);

} // namespace
} // namespace pshard
