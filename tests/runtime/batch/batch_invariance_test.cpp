// Batch invariance of the batched CPU engine: up to 64 sequences of mixed prompt lengths,
// prefilled in chunks interleaved with the others' decode steps over a shared paged KV
// cache, each get exactly — bit for bit — the logits of the same sequence decoded alone
// by a CpuSession (contiguous cache), for dense, quantized, MoE and Qwen-family models.
#include "runtime/batch/batched_cpu_session.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <filesystem>
#include <random>

namespace pshard {
namespace {

struct Script {
  std::vector<std::vector<TokenId>> prompts;
  int generate = 0;
};

Script make_script(int n_seq, int generate, int64_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  Script s;
  s.generate = generate;
  for (int i = 0; i < n_seq; ++i) {
    std::vector<TokenId> p(1 + rng() % 40);
    for (TokenId& t : p)
      t = static_cast<TokenId>(rng() % static_cast<uint32_t>(n_vocab));
    s.prompts.push_back(std::move(p));
  }
  return s;
}

TokenId argmax(std::span<const float> l) {
  return static_cast<TokenId>(std::max_element(l.begin(), l.end()) - l.begin());
}

// Every sequence alone: the logits after its prompt and after each greedy token.
std::vector<std::vector<std::vector<float>>> alone(const Model& m, const Script& s) {
  std::vector<std::vector<std::vector<float>>> out;
  for (const auto& prompt : s.prompts) {
    auto session = CpuSession::create(m, {128, 2, 256});
    EXPECT_TRUE(session.ok());
    std::vector<std::vector<float>> rows;
    auto l = (*session)->decode(prompt);
    EXPECT_TRUE(l.ok()) << l.status().to_string();
    rows.emplace_back(l->begin(), l->end());
    for (int g = 1; g < s.generate; ++g) {
      const TokenId next = argmax(rows.back());
      l = (*session)->decode(std::span<const TokenId>(&next, 1));
      EXPECT_TRUE(l.ok());
      rows.emplace_back(l->begin(), l->end());
    }
    out.push_back(std::move(rows));
  }
  return out;
}

// The same sequences batched: each pass takes every decoding sequence's one token first,
// then prompt chunks in order until `per_pass` tokens.
std::vector<std::vector<std::vector<float>>> batched(BatchDecoder& engine, const Script& s,
                                                     int64_t per_pass) {
  const size_t n = s.prompts.size();
  std::vector<SeqId> ids(n);
  std::vector<std::deque<TokenId>> pending(n);
  std::vector<std::vector<std::vector<float>>> rows(n);
  for (size_t i = 0; i < n; ++i) {
    auto id = engine.open_sequence();
    EXPECT_TRUE(id.ok()) << id.status().to_string();
    ids[i] = *id;
    pending[i].assign(s.prompts[i].begin(), s.prompts[i].end());
  }
  auto done = [&](size_t i) { return static_cast<int>(rows[i].size()) == s.generate; };
  auto all_done = [&] {
    for (size_t i = 0; i < n; ++i)
      if (!done(i))
        return false;
    return true;
  };
  while (!all_done()) {
    std::vector<BatchEntry> pass;
    std::vector<size_t> row_owner;
    for (int phase = 0; phase < 2; ++phase)
      for (size_t i = 0; i < n && static_cast<int64_t>(pass.size()) < per_pass; ++i) {
        const bool decoding = !rows[i].empty();
        if (done(i) || pending[i].empty() || decoding != (phase == 0))
          continue;
        while (!pending[i].empty() && static_cast<int64_t>(pass.size()) < per_pass) {
          const bool last = pending[i].size() == 1;
          pass.push_back({ids[i], pending[i].front(), last});
          pending[i].pop_front();
          if (last)
            row_owner.push_back(i);
        }
      }
    auto out = engine.decode(pass);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    if (!out.ok())
      return rows;
    for (size_t r = 0; r < row_owner.size(); ++r) {
      const size_t i = row_owner[r];
      const auto row = out->row(static_cast<int64_t>(r));
      rows[i].emplace_back(row.begin(), row.end());
      if (!done(i))
        pending[i].push_back(argmax(rows[i].back()));
    }
  }
  for (SeqId id : ids)
    engine.close_sequence(id);
  return rows;
}

std::string model_path(const std::string& name) {
  if (name.rfind("mk-", 0) != 0)
    return std::string(PSHARD_SHARED_DIR) + "/models/" + name;
  const std::string path = ::testing::TempDir() + "/batch-" + name + ".gguf";
  if (!std::filesystem::exists(path)) {
    ModelSpec spec;
    spec.arch = name.substr(3);
    spec.n_embd = 64;
    spec.n_layer = 3;
    spec.n_head = 4;
    spec.n_head_kv = 2;
    spec.n_ff = 96;
    spec.n_expert = 8;
    spec.n_expert_used = 2;
    spec.type = TensorType::kQ8_0;
    EXPECT_TRUE(write_model(spec, path).ok());
  }
  return path;
}

struct Case {
  const char* model;
  int sequences;
  int64_t per_pass;
  int64_t page_tokens;
};

class BatchInvariance : public ::testing::TestWithParam<Case> {};

TEST_P(BatchInvariance, EverySequenceGetsItsLogitsAloneBitForBit) {
  const Case c = GetParam();
  const std::string path = model_path(c.model);
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shared model " << path << " is not present";
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const Script script = make_script(c.sequences, 6, (*model)->hparams().n_vocab, 11u + c.sequences);
  BatchParams bp;
  bp.max_sequences = c.sequences;
  bp.n_ctx = 128;
  bp.max_batch_tokens = c.per_pass;
  bp.page_tokens = c.page_tokens;
  bp.n_threads = 2;
  auto engine = BatchedCpuSession::create(**model, bp);
  ASSERT_TRUE(engine.ok()) << engine.status().to_string();
  const auto want = alone(**model, script);
  const auto got = batched(**engine, script, c.per_pass);
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].size(), want[i].size()) << "sequence " << i;
    for (size_t g = 0; g < want[i].size(); ++g)
      ASSERT_EQ(got[i][g], want[i][g]) << "sequence " << i << " step " << g;
  }
  EXPECT_EQ((*engine)->kv_pages().used_pages, 0) << "closed sequences give their pages back";
}

INSTANTIATE_TEST_SUITE_P(
    Models, BatchInvariance,
    ::testing::Values(Case{"stories260K.gguf", 1, 8, 16}, Case{"stories260K.gguf", 64, 96, 16},
                      Case{"stories260K-Q8_0-mixed.gguf", 13, 24, 7},
                      Case{"stories260K-moe4x2-noise10.gguf", 9, 32, 16},
                      Case{"stories260K-qwen3moe.gguf", 16, 40, 5},
                      Case{"mk-qwen2moe", 12, 20, 16}),
    [](const auto& info) {
      std::string n = std::string(info.param.model) + "_" + std::to_string(info.param.sequences);
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          ch = '_';
      return n;
    });

} // namespace
} // namespace pshard
