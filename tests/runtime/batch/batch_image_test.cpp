// Image entries in the batched CPU engine (BatchEntry's embedding rows, DeepStack rows and
// M-RoPE positions): a qwen2vl or qwen3vl sequence with an image in its prompt, prefilled in chunks
// that cut through the image and share their passes with a text sequence, gets bit for bit the
// logits a CpuSession gives it alone through DecodeExtras — what ImagePromptDecoder
// drives — and the text sequence its own; engines that cannot take such entries refuse
// them.
#include "runtime/batch/batched_cpu_session.h"
#include "runtime/batch/per_sequence_decoder.h"
#include "tests/runtime/batch/batch_image_util.h"

namespace pshard {
namespace {

using namespace batch_image;

class BatchImage : public ::testing::TestWithParam<Arch> {};

TEST_P(BatchImage, ImageEntriesGetTheirLogitsAloneBitForBitNextToText) {
  const Fixture f = make_fixture(GetParam());
  BatchParams bp;
  bp.max_sequences = 2;
  bp.n_ctx = 128;
  bp.page_tokens = 4;
  bp.n_threads = 2;
  auto engine = BatchedCpuSession::create(*f.model, bp);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  Rows got_image, got_text;
  ASSERT_TRUE(run_both(**engine, f, got_image, got_text));
  EXPECT_EQ(got_image, alone(f));
  EXPECT_EQ(got_text, text_alone(f));
}

INSTANTIATE_TEST_SUITE_P(Archs, BatchImage, ::testing::Values(kQwen2Vl, kQwen3Vl),
                         [](const auto& info) { return std::string(info.param.arch); });

// The DeepStack rows reach the model: leaving them out changes the image's logits (and
// the check above compares engines that all add them).
TEST(BatchImageDeepstack, TheRowsChangeTheLogits) {
  const Fixture f = make_fixture(kQwen3Vl);
  EXPECT_NE(alone(f), alone(f, /*deepstack=*/false));
}

TEST(BatchImageRefusal, EnginesWithoutImageEntriesRefuseThem) {
  const Fixture f = make_fixture();
  PerSequenceDecoder engine(1, 16, f.n_vocab, [&]() -> Result<std::unique_ptr<Decoder>> {
    PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(*f.model, {128, 1, 256}));
    return std::unique_ptr<Decoder>(std::move(s));
  });
  auto seq = engine.open_sequence();
  ASSERT_TRUE(seq.ok());
  const std::vector<BatchEntry> pass = {image_entry(f, *seq, 0, kImage.begin, true)};
  auto out = engine.decode(pass);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(engine.sequence_length(*seq), 0) << "nothing was decoded";
}

} // namespace
} // namespace pshard
