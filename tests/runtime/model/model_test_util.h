// Helpers shared by the model tests: paths of the shared models, greedy runs.
#pragma once

#include "runtime/generate/generator.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace pshard::testing {

inline std::string shared_model(const std::string& name) {
  return std::string(PSHARD_SHARED_DIR) + "/models/" + name;
}

#define PSHARD_SKIP_IF_MISSING(path)                                                               \
  if (!std::filesystem::exists(path))                                                              \
  GTEST_SKIP() << "shared model " << (path) << " is not present"

// Greedy continuation of `prompt` by the model at `path`.
inline GenerateResult greedy(const std::string& path, const std::string& prompt, int32_t n,
                             int32_t threads = 1, int64_t n_batch = 256, int32_t top_logprobs = 0) {
  auto model = Model::load(path);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  auto tokenizer = Tokenizer::from_gguf((*model)->file());
  EXPECT_TRUE(tokenizer.ok()) << tokenizer.status().to_string();
  auto session = CpuSession::create(**model, {0, threads, n_batch});
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  SamplerParams sp;
  sp.temperature = 0;
  auto sampler = Sampler::create(sp);
  EXPECT_TRUE(sampler.ok());
  auto ids = (*tokenizer)->encode(prompt, true);
  GenerateParams gp;
  gp.n_predict = n;
  gp.top_logprobs = top_logprobs;
  auto r = generate(**session, **tokenizer, *sampler, ids, gp);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return r.ok() ? std::move(r).value() : GenerateResult{};
}

} // namespace pshard::testing
