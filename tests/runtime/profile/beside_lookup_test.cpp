// Schema 1.4's figures of both processors computing at once through ProfileLookup
// (Load::kBesideCompute): the idle figure times the ratio of the beside cells, for the
// CPU's matmuls and the device's; a profile without them says so by name, and a GPU
// matmul has no under-load figures to ask for.
#include "runtime/profile/profile_lookup.h"
#include "runtime/profile/profile_report.h"
#include "synthetic_profile.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

constexpr uint64_t kMiB = 1u << 20;

ProfileLookup lookup_of(fb::ProfileT p) {
  Result<Profile> r = Profile::from_object(std::move(p));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return ProfileLookup(*r);
}

TEST(BesideLookup, EachSideIsItsIdleFigureTimesItsRatio) {
  const ProfileLookup look = lookup_of(testing::beside_profile());
  for (int threads : {1, 2})
    EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(TensorType::kQ4_0, 1, 64 * kMiB, threads,
                                            Load::kBesideCompute),
                     0.8 * 4e9 * threads);
  // Measured at one size and tier: the ratio carries over to the others, as under load.
  EXPECT_DOUBLE_EQ(
      *look.cpu_matmul_flops(TensorType::kQ4_0, 4, kMiB, 1, Load::kBesideCompute),
      0.8 * *look.cpu_matmul_flops(TensorType::kQ4_0, 4, kMiB, 1));
  EXPECT_DOUBLE_EQ(
      *look.gpu_matmul_flops(TensorType::kQ4_0, 1, 64 * kMiB, 0, Load::kBesideCompute), 50e9);
  EXPECT_DOUBLE_EQ(*look.gpu_matmul_flops(TensorType::kQ4_0, 1, 64 * kMiB), 100e9);
}

TEST(BesideLookup, AbsentFiguresAreNamed) {
  const ProfileLookup look = lookup_of(testing::synthetic_profile(true));
  const Result<double> cpu =
      look.cpu_matmul_flops(TensorType::kQ4_0, 1, 64 * kMiB, 1, Load::kBesideCompute);
  EXPECT_EQ(cpu.status().code(), StatusCode::kNotFound);
  EXPECT_NE(cpu.status().message().find("schema 1.4"), std::string::npos) << cpu.status().message();
  EXPECT_EQ(
      look.gpu_matmul_flops(TensorType::kQ4_0, 1, 64 * kMiB, 0, Load::kBesideCompute).status().code(),
      StatusCode::kNotFound);
  EXPECT_EQ(
      look.gpu_matmul_flops(TensorType::kQ4_0, 1, 64 * kMiB, 0, Load::kUnderLoad).status().code(),
      StatusCode::kInvalidArgument);
}

TEST(BesideLookup, TheReportShowsThem) {
  Result<Profile> r = Profile::from_object(testing::beside_profile());
  ASSERT_TRUE(r.ok());
  const std::string text = profile_report(*r);
  EXPECT_NE(text.find("CPU matmul while the device computes"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU matmul while the CPU computes"), std::string::npos) << text;
}

} // namespace
} // namespace pshard
