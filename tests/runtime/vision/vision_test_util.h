// Helpers of the vision tests: a small generated projector (32 wide, 2 heads of 16,
// FFN 48, 14-pixel patches, 448-pixel cap) and a small language model for it, written
// into the test temp dir.
#pragma once

#include "tools/pshard-mkmodel/model_generator.h"
#include "tools/pshard-mkmodel/projector_generator.h"

#include <gtest/gtest.h>
#include <string>

namespace pshard::testing {

inline std::string small_projector(const std::string& name, ProjectorType type, int64_t n_layer,
                                   int64_t projection_dim) {
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  ProjectorSpec s;
  s.hp.type = type;
  s.hp.n_embd = 32;
  s.hp.n_head = 2;
  s.hp.n_ff = 48;
  s.hp.n_layer = n_layer;
  s.hp.projection_dim = projection_dim;
  if (type == ProjectorType::kQwen3Vl) { // 16-pixel patches, the last block's DeepStack
    s.hp.patch_size = 16;
    s.hp.deepstack = {n_layer - 1};
  }
  const Status st = write_projector(s, path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return path;
}

// A language model of 64 wide (what small_projector(..., 64) feeds): 2 layers, 4 heads of
// which 2 KV, FFN 96; `arch` qwen2vl, or another family for the refusals.
// `n_deepstack`: qwen3vl's layers that add an image's DeepStack rows.
inline std::string small_language_model(const std::string& name, const std::string& arch,
                                        int64_t n_deepstack = 0) {
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  ModelSpec s;
  s.arch = arch;
  s.n_deepstack = n_deepstack;
  s.n_embd = 64;
  s.n_layer = 2;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ff = 96;
  const Status st = write_model(s, path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return path;
}

} // namespace pshard::testing
