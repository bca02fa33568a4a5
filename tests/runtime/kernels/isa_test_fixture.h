// A kernel test run once per ISA path (INSTANTIATE_TEST_SUITE_P over kernels::Isa values,
// named by isa_param_name): skipped, saying so, where this CPU lacks the path; the detected
// path restored afterwards.
#pragma once

#include "runtime/kernels/cpu_isa.h"

#include <gtest/gtest.h>
#include <string>

namespace pshard::test {

class OnIsa : public testing::TestWithParam<kernels::Isa> {
protected:
  void SetUp() override {
    if (!kernels::force_isa(GetParam()))
      GTEST_SKIP() << "this CPU lacks the " << kernels::isa_name(GetParam()) << " path";
  }
  void TearDown() override { kernels::force_isa(kernels::detected_isa()); }
};

inline std::string isa_param_name(const testing::TestParamInfo<kernels::Isa>& i) {
  return kernels::isa_name(i.param);
}

} // namespace pshard::test
