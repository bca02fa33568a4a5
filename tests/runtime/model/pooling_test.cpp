// Pooling a sequence's embedding rows (runtime/model/pooling.h): each kind reads the rows
// it should, the result does not depend on how the rows arrive, normalizing and
// Matryoshka cuts, the GGUF values and names, and a model's pooling_type.
#include "gguf_rewrite.h"
#include "runtime/model/model.h"
#include "runtime/model/pooling.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

namespace pshard {
namespace {

// Row t of a 3-wide sequence: (t + 1, -2t, 0.5).
std::vector<float> row(int64_t t) { return {float(t + 1), float(-2 * t), 0.5f}; }

std::vector<float> pool(Pooling p, int64_t n, EmbeddingOptions o = {.normalize = false}) {
  Pooler pooler(p, 3, n, o);
  for (int64_t t = 0; t < n; ++t)
    if (pooler.wants(t))
      pooler.add(t, row(t));
  return pooler.finish(o);
}

TEST(Pooler, EachKindReadsItsRows) {
  EXPECT_EQ(pool(Pooling::kMean, 4), (std::vector<float>{2.5f, -3.0f, 0.5f}));
  EXPECT_EQ(pool(Pooling::kCls, 4), row(0));
  EXPECT_EQ(pool(Pooling::kLast, 4), row(3));
  std::vector<float> all;
  for (int64_t t = 0; t < 4; ++t) {
    const std::vector<float> r = row(t);
    all.insert(all.end(), r.begin(), r.end());
  }
  EXPECT_EQ(pool(Pooling::kNone, 4), all);
  Pooler last(Pooling::kLast, 3, 4, {}), cls(Pooling::kCls, 3, 4, {});
  EXPECT_FALSE(last.wants(2));
  EXPECT_TRUE(last.wants(3));
  EXPECT_TRUE(cls.wants(0));
  EXPECT_FALSE(cls.wants(1));
}

TEST(Pooler, NormalizesEachRowAfterTheCut) {
  const std::vector<float> v = pool(Pooling::kLast, 2, {.normalize = true, .dimensions = 2});
  ASSERT_EQ(v.size(), 2u); // (2, -2) cut from (2, -2, 0.5), then unit length
  EXPECT_FLOAT_EQ(v[0], 1.0f / std::sqrt(2.0f));
  EXPECT_FLOAT_EQ(v[1], -1.0f / std::sqrt(2.0f));
  const std::vector<float> rows = pool(Pooling::kNone, 3, {.normalize = true});
  ASSERT_EQ(rows.size(), 9u);
  for (size_t r = 0; r < 3; ++r) {
    double n2 = 0;
    for (size_t i = 0; i < 3; ++i)
      n2 += double(rows[3 * r + i]) * rows[3 * r + i];
    EXPECT_NEAR(n2, 1.0, 1e-6) << "row " << r;
  }
  // A zero vector stays zero instead of becoming NaN.
  Pooler zero(Pooling::kMean, 2, 1, {});
  zero.add(0, std::vector<float>{0.0f, 0.0f});
  EXPECT_EQ(zero.finish({}), (std::vector<float>{0.0f, 0.0f}));
}

TEST(Pooler, NamesValuesAndOptionsAreChecked) {
  for (Pooling p :
       {Pooling::kNone, Pooling::kMean, Pooling::kCls, Pooling::kLast, Pooling::kRank}) {
    auto back = parse_pooling(pooling_name(p));
    ASSERT_TRUE(back.ok());
    EXPECT_EQ(*back, p);
    auto from = pooling_from_gguf(static_cast<int64_t>(p));
    ASSERT_TRUE(from.ok());
    EXPECT_EQ(*from, p);
  }
  auto bad = parse_pooling("max");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mean, cls, last, rank or none"), std::string::npos);
  EXPECT_EQ(pooling_from_gguf(9).status().code(), StatusCode::kInvalidFormat);
  EXPECT_TRUE(check_embedding_options({.dimensions = 64}, 64).ok());
  const Status wide = check_embedding_options({.dimensions = 65}, 64);
  EXPECT_EQ(wide.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(wide.message().find("64"), std::string::npos) << wide.to_string();
  EXPECT_FALSE(check_embedding_options({.dimensions = -1}, 64).ok());
}

// A reranker's head: W row + b per label, softmaxed over several labels (in float64, so
// large logits do not overflow), the raw value for one; rank pooling reads the last row.
TEST(Pooler, RankScoresTheLastRowWithTheHead) {
  Classifier c;
  c.n_embd = 3;
  c.weight = {1, 0, 0, /**/ 0, 1, 0}; // "yes" reads x[0], "no" x[1]
  const std::vector<float> scores = c.scores(std::vector<float>{2.0f, 0.0f, 9.0f});
  ASSERT_EQ(scores.size(), 2u);
  EXPECT_NEAR(scores[0], 1.0 / (1.0 + std::exp(-2.0)), 1e-7);
  EXPECT_NEAR(scores[0] + scores[1], 1.0, 1e-7);
  EXPECT_NEAR(c.scores(std::vector<float>{1000.0f, 0.0f, 0.0f})[0], 1.0, 1e-7); // no overflow
  c.weight = {0.5f, 0.5f, 0.5f};
  c.bias = {-1.0f};
  EXPECT_EQ(c.scores(std::vector<float>{2.0f, 2.0f, 2.0f}), (std::vector<float>{2.0f}));
  c.weight = {1, 0, 0, /**/ 0, 1, 0};
  c.bias.clear();
  // The last row, (4, -6, 0.5): scores of 4 and -6, whatever the options say.
  const std::vector<float> ranked =
      pool(Pooling::kRank, 4, {.normalize = true, .dimensions = 1, .classifier = &c});
  ASSERT_EQ(ranked.size(), 2u);
  EXPECT_NEAR(ranked[0], 1.0 / (1.0 + std::exp(-10.0)), 1e-7);
  EXPECT_TRUE(pool(Pooling::kRank, 4).empty()) << "no head: no scores";
  Pooler rank(Pooling::kRank, 3, 4, {.classifier = &c});
  EXPECT_FALSE(rank.wants(0));
  EXPECT_TRUE(rank.wants(3));
}

// An encoder's head (bge-reranker: RoBERTa's classification head) reads the first row
// ([CLS], <s>) through a tanh pooler: W tanh(P row + p) + b.
TEST(Pooler, AnEncodersRankReadsTheFirstRowThroughItsPooler) {
  Classifier c;
  c.n_embd = 3;
  c.first_row = true;
  c.pooler = {1, 0, 0, /**/ 0, 2, 0, /**/ 0, 0, 0};
  c.pooler_bias = {0, 0, 0.25f};
  c.weight = {1, 1, 1};
  c.bias = {0.5f};
  // Row 0 is (1, 0, 0.5): tanh(1) + tanh(0) + tanh(0.25) + 0.5.
  const std::vector<float> scores = pool(Pooling::kRank, 4, {.classifier = &c});
  ASSERT_EQ(scores.size(), 1u);
  EXPECT_NEAR(scores[0], std::tanh(1.0) + std::tanh(0.25) + 0.5, 1e-6);
  Pooler rank(Pooling::kRank, 3, 4, {.classifier = &c});
  EXPECT_TRUE(rank.wants(0));
  EXPECT_FALSE(rank.wants(3));
}

// sentence-transformers' Dense modules (EmbeddingGemma's dense_2, dense_3) act on the
// pooled vector, before the cut and the normalizing; not on pooling none's rows.
TEST(Pooler, TheProjectionFollowsPoolingAndPrecedesTheCut) {
  EmbeddingProjection p;
  p.n_embd = 3;
  p.n_mid = 2;
  p.dense2 = {1, 1, 0, /**/ 0, 0, 2}; // (x0 + x1, 2 x2)
  p.dense2_bias = {0.5f, 0};
  p.dense3 = {1, 0, /**/ 0, 1, /**/ 1, -1}; // (a, b, a - b)
  // The mean, (2.5, -3, 0.5): a = 0, b = 1, so (0, 1, -1).
  EXPECT_EQ(pool(Pooling::kMean, 4, {.normalize = false, .projection = &p}),
            (std::vector<float>{0.0f, 1.0f, -1.0f}));
  // Cut to two after the projection, then unit length: (0, 1).
  EXPECT_EQ(pool(Pooling::kMean, 4, {.normalize = true, .dimensions = 2, .projection = &p}),
            (std::vector<float>{0.0f, 1.0f}));
  // The last row (4, -6, 0.5): a = -1.5, b = 1.
  EXPECT_EQ(pool(Pooling::kLast, 4, {.normalize = false, .projection = &p}),
            (std::vector<float>{-1.5f, 1.0f, -2.5f}));
  EXPECT_EQ(pool(Pooling::kNone, 2, {.normalize = false, .projection = &p}),
            pool(Pooling::kNone, 2));
  p.dense3.clear(); // dense_2 alone, as wide as the model
  p.n_mid = 3;
  p.dense2 = {0, 0, 1, /**/ 0, 1, 0, /**/ 1, 0, 0};
  p.dense2_bias.clear();
  EXPECT_EQ(pool(Pooling::kCls, 4, {.normalize = false, .projection = &p}),
            (std::vector<float>{0.5f, 0.0f, 1.0f}));
}

TEST(Pooler, AModelNamesItsPooling) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("pshard-pooling-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  ModelSpec spec;
  spec.arch = "qwen3";
  spec.n_embd = 32;
  spec.n_layer = 1;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ff = 64;
  const std::string plain = (dir / "plain.gguf").string(), embed = (dir / "embed.gguf").string();
  ASSERT_TRUE(write_model(spec, plain).ok());
  auto m = Model::load(plain);
  ASSERT_TRUE(m.ok()) << m.status().to_string();
  EXPECT_EQ((*m)->hparams().pooling, Pooling::kUnspecified);
  testing::rewrite_gguf(plain, embed, [](auto& md, auto&) {
    testing::set_key(md, "qwen3.pooling_type", gguf::Value{uint32_t{3}});
  });
  auto e = Model::load(embed);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  EXPECT_EQ((*e)->hparams().pooling, Pooling::kLast);
  EXPECT_EQ((*e)->weights().classifier, nullptr);
  // A reranker as llama.cpp converts Qwen3-Reranker: rank pooling, a head of two labels.
  spec.rerank = true;
  const std::string ranker = (dir / "rerank.gguf").string();
  ASSERT_TRUE(write_model(spec, ranker).ok());
  auto r = Model::load(ranker);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)->hparams().pooling, Pooling::kRank);
  ASSERT_NE((*r)->weights().classifier, nullptr);
  EXPECT_EQ((*r)->weights().classifier->n_labels(), 2);
  EXPECT_EQ((*r)->weights().classifier->labels, (std::vector<std::string>{"yes", "no"}));
  // Labels that do not match the head are refused.
  const std::string mislabelled = (dir / "mislabelled.gguf").string();
  testing::rewrite_gguf(ranker, mislabelled, [](auto& md, auto&) {
    testing::set_key(md, "qwen3.classifier.output_labels",
                     gguf::Value{gguf::Array{gguf::ValueType::kString, {{std::string("yes")}}}});
  });
  auto bad = Model::load(mislabelled);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("names 1 labels"), std::string::npos)
      << bad.status().to_string();
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace pshard
