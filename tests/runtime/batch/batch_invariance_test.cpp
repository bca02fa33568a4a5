// Batch invariance of the batched CPU engine: up to 64 sequences of mixed prompt lengths,
// prefilled in chunks interleaved with the others' decode steps over a shared paged KV
// cache, each get exactly — bit for bit — the logits of the same sequence decoded alone
// by a CpuSession (contiguous cache), for dense, quantized, MoE and Qwen-family models.
#include "runtime/batch/batched_cpu_session.h"
#include "tests/runtime/batch/batch_script.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <filesystem>
#include <gtest/gtest.h>

namespace pshard {
namespace {

using namespace pshard::testing;

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
    if (spec.arch == "deepseek2") { // latent attention: one KV head, Q8_0-sized rows
      spec.n_head_kv = 1;
      spec.head_dim = 64;
      spec.rope_dim = 32;
      spec.kv_lora_rank = 64;
    }
    const Status written = write_model(spec, path);
    EXPECT_TRUE(written.ok()) << written.to_string();
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
  const Rows want = alone(
      [&]() -> Result<std::unique_ptr<Decoder>> {
        PSHARD_ASSIGN_OR_RETURN(auto s, CpuSession::create(**model, {128, 2, 256}));
        return std::unique_ptr<Decoder>(std::move(s));
      },
      script);
  EXPECT_TRUE(same_rows(want, batched(**engine, script, c.per_pass)));
  EXPECT_EQ((*engine)->kv_pages().used_pages, 0) << "closed sequences give their pages back";
}

INSTANTIATE_TEST_SUITE_P(
    Models, BatchInvariance,
    ::testing::Values(Case{"stories260K.gguf", 1, 8, 16}, Case{"stories260K.gguf", 64, 96, 16},
                      Case{"stories260K-Q8_0-mixed.gguf", 13, 24, 7},
                      Case{"stories260K-moe4x2-noise10.gguf", 9, 32, 16},
                      Case{"stories260K-qwen3moe.gguf", 16, 40, 5}, Case{"mk-qwen2moe", 12, 20, 16},
                      Case{"mk-glm4moe", 7, 20, 16}, Case{"mk-deepseek2", 6, 20, 16},
                      Case{"mk-llama4", 6, 20, 16}),
    [](const auto& info) {
      std::string n = std::string(info.param.model) + "_" + std::to_string(info.param.sequences);
      for (char& ch : n)
        if (!std::isalnum(static_cast<unsigned char>(ch)))
          ch = '_';
      return n;
    });

} // namespace
} // namespace pshard
