// PerSequenceDecoder: interleaved sequences in one pass give each sequence's own logits
// (the same as decoding it alone), rows in batch order; bad passes change nothing.
#include "runtime/batch/per_sequence_decoder.h"
#include "runtime/model/model.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace pshard {
namespace {

const std::string kModel = std::string(PSHARD_SHARED_DIR) + "/models/stories260K.gguf";

class PerSequence : public ::testing::Test {
protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel))
      GTEST_SKIP() << "shared model " << kModel << " is not present";
    auto m = Model::load(kModel);
    ASSERT_TRUE(m.ok()) << m.status().to_string();
    model_ = std::move(*m);
  }
  Result<std::unique_ptr<Decoder>> session() {
    PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(*model_, {64, 1, 16}));
    return std::unique_ptr<Decoder>(std::move(s));
  }
  std::vector<float> alone(const std::vector<TokenId>& ids) {
    auto s = session();
    EXPECT_TRUE(s.ok());
    auto l = (*s)->decode(ids);
    EXPECT_TRUE(l.ok());
    return {l->begin(), l->end()};
  }
  std::unique_ptr<Model> model_;
};

TEST_F(PerSequence, InterleavedSequencesGetTheirOwnLogits) {
  PerSequenceDecoder engine(2, 64, model_->hparams().n_vocab, [this] { return session(); });
  auto a = engine.open_sequence(), b = engine.open_sequence();
  ASSERT_TRUE(a.ok() && b.ok());
  const std::vector<BatchEntry> pass = {
      {*a, 1, false}, {*b, 1, false}, {*a, 403, true}, {*b, 407, false}, {*b, 261, true}};
  auto out = engine.decode(pass);
  ASSERT_TRUE(out.ok()) << out.status().to_string();
  ASSERT_EQ(out->rows, 2);
  const std::vector<float> want_a = alone({1, 403}), want_b = alone({1, 407, 261});
  EXPECT_TRUE(std::equal(want_a.begin(), want_a.end(), out->row(0).begin()));
  EXPECT_TRUE(std::equal(want_b.begin(), want_b.end(), out->row(1).begin()));
  EXPECT_EQ(engine.sequence_length(*a), 2);
  EXPECT_EQ(engine.sequence_length(*b), 3);
}

TEST_F(PerSequence, BadPassesAreRefusedBeforeAnySequenceMoves) {
  PerSequenceDecoder engine(1, 4, model_->hparams().n_vocab, [this] { return session(); });
  auto a = engine.open_sequence();
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(engine.open_sequence().status().code(), StatusCode::kOutOfMemory);
  EXPECT_FALSE(engine.decode(std::vector<BatchEntry>{{*a, 1, false}, {*a + 7, 1, true}}).ok());
  EXPECT_FALSE(engine.decode(std::vector<BatchEntry>{{*a, 1, false}, {*a, 999999, true}}).ok());
  EXPECT_FALSE(engine.decode(std::vector<BatchEntry>(5, BatchEntry{*a, 1, false})).ok());
  EXPECT_EQ(engine.sequence_length(*a), 0);
  engine.close_sequence(*a);
  EXPECT_TRUE(engine.open_sequence().ok()) << "a closed slot is free again";
}

} // namespace
} // namespace pshard
