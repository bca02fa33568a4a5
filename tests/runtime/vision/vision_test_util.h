// Helpers of the vision tests: a small generated projector (32 wide, 2 heads of 16,
// FFN 48, 14-pixel patches, 448-pixel cap) written once per name into the test temp dir.
#pragma once

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
  const Status st = write_projector(s, path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return path;
}

} // namespace pshard::testing
