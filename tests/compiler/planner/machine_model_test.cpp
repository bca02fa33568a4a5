// ProfileMachineModel's answers for weight types the profile did not measure: the
// measured type nearest in bits per weight, its FLOP/s scaled so that a matrix of the
// same bytes takes the same time.
#include "pshard/Planner/MachineModel.h"
#include "runtime/profile/profile.h"
#include "tests/runtime/profile/synthetic_profile.h"

#include <gtest/gtest.h>

namespace pshard::planner {
namespace {

TEST(ProfileMachineModel, UnmeasuredTypesBorrowTheNearestBitsPerWeight) {
  // The synthetic profile measured Q4_0 only (4.5 bits per weight).
  auto profile = Profile::from_object(testing::synthetic_profile());
  ASSERT_TRUE(profile.ok()) << profile.status().to_string();
  auto machine = ProfileMachineModel::create(*profile);
  ASSERT_TRUE(machine.ok()) << machine.status().to_string();
  const auto flops = [&](TensorType t) {
    return (*machine)->cpu_matmul_flops(t, 1, 1u << 20, 1, Load::kIdle, 0);
  };
  const double q4_0 = flops(TensorType::kQ4_0);
  EXPECT_DOUBLE_EQ(q4_0, 10e9);
  // Same bits per weight: the same figure.
  EXPECT_DOUBLE_EQ(flops(TensorType::kQ4_K), q4_0);
  EXPECT_DOUBLE_EQ(flops(TensorType::kIQ4_NL), q4_0);
  // Others: scaled by bits per weight, so bytes / time stays Q4_0's.
  // (MXFP4, 4.25: IQ4_XS is as near but unmeasured, so Q4_0 again.)
  for (TensorType t : {TensorType::kQ6_K, TensorType::kQ2_K, TensorType::kQ8_0, TensorType::kF16,
                       TensorType::kMXFP4}) {
    SCOPED_TRACE(tensor_type_name(t));
    EXPECT_DOUBLE_EQ(flops(t), q4_0 * 4.5 / tensor_type_bits_per_weight(t));
  }
}

// Grouped MoE cells are bytes/s: a stand-in type's rate is used as it is (the same bytes
// take the same time). Without cells, the machine says so and graphs fall back to the
// stream launch overhead.
TEST(ProfileMachineModel, GroupedCellsBorrowTheNearestTypeUnscaled) {
  fb::ProfileT p = testing::synthetic_profile(true);
  auto plain = Profile::from_object(testing::synthetic_profile(true));
  p.gpu->grouped_expert.push_back(
      testing::grouped_cell(fb::WeightType::Q4_0, true, 1, 8, 8, 1u << 20, 300e9));
  p.gpu->graph_launch_overhead_s = 1e-6;
  auto profile = Profile::from_object(std::move(p));
  ASSERT_TRUE(profile.ok() && plain.ok());
  auto machine = ProfileMachineModel::create(*profile);
  auto without = ProfileMachineModel::create(*plain);
  ASSERT_TRUE(machine.ok() && without.ok());
  ASSERT_TRUE((*machine)->has_gpu_grouped_experts());
  for (TensorType t : {TensorType::kQ4_0, TensorType::kQ4_K, TensorType::kQ8_0}) {
    SCOPED_TRACE(tensor_type_name(t));
    EXPECT_DOUBLE_EQ((*machine)->gpu_grouped_expert_bytes_per_s(t, true, 1, 16u << 20), 300e9);
  }
  EXPECT_TRUE((*machine)->has_gpu_graphs());
  EXPECT_DOUBLE_EQ((*machine)->gpu_graph_launch_overhead_s(), 1e-6);
  EXPECT_FALSE((*without)->has_gpu_grouped_experts());
  EXPECT_FALSE((*without)->has_gpu_graphs());
  EXPECT_DOUBLE_EQ((*without)->gpu_graph_launch_overhead_s(), (*without)->gpu_launch_overhead_s());
}

// Schema 1.4: each side's slowdown while the other computes, idle over beside figures;
// 1 without them (older profiles), and never below 1 (a faster cell is noise).
TEST(ProfileMachineModel, BesideFiguresAreSlowdownsOfAtLeastOne) {
  constexpr uint64_t kMiB = 1u << 20;
  auto with = Profile::from_object(testing::beside_profile());
  auto plain = Profile::from_object(testing::synthetic_profile(true));
  fb::ProfileT fast = testing::beside_profile();
  fast.under_load->cpu_matmul_beside_device[0]->flops_per_s = 2 * 4e9;
  auto faster = Profile::from_object(std::move(fast));
  ASSERT_TRUE(with.ok() && plain.ok() && faster.ok());
  auto machine = ProfileMachineModel::create(*with);
  auto without = ProfileMachineModel::create(*plain);
  auto noisy = ProfileMachineModel::create(*faster);
  ASSERT_TRUE(machine.ok() && without.ok() && noisy.ok());
  EXPECT_DOUBLE_EQ((*machine)->cpu_beside_device_slowdown(TensorType::kQ4_0, 1, 64 * kMiB, 2), 1.25);
  EXPECT_DOUBLE_EQ((*machine)->device_beside_cpu_slowdown(TensorType::kQ4_0, 1, 64 * kMiB), 2.0);
  // An unmeasured type borrows a measured one's ratio.
  EXPECT_DOUBLE_EQ((*machine)->cpu_beside_device_slowdown(TensorType::kQ8_0, 1, 64 * kMiB, 2), 1.25);
  EXPECT_DOUBLE_EQ((*without)->cpu_beside_device_slowdown(TensorType::kQ4_0, 1, 64 * kMiB, 2), 1.0);
  EXPECT_DOUBLE_EQ((*without)->device_beside_cpu_slowdown(TensorType::kQ4_0, 1, 64 * kMiB), 1.0);
  EXPECT_DOUBLE_EQ((*noisy)->cpu_beside_device_slowdown(TensorType::kQ4_0, 1, 64 * kMiB, 1), 1.0);
}

TEST(TensorTypeBits, CountScalesAndMins) {
  EXPECT_DOUBLE_EQ(tensor_type_bits_per_weight(TensorType::kQ4_K), 4.5);
  EXPECT_DOUBLE_EQ(tensor_type_bits_per_weight(TensorType::kQ6_K), 6.5625);
  EXPECT_DOUBLE_EQ(tensor_type_bits_per_weight(TensorType::kQ2_K), 2.625);
  EXPECT_DOUBLE_EQ(tensor_type_bits_per_weight(TensorType::kIQ4_XS), 4.25);
  EXPECT_DOUBLE_EQ(tensor_type_bits_per_weight(TensorType::kMXFP4), 4.25);
  EXPECT_DOUBLE_EQ(tensor_type_bits_per_weight(TensorType::kF16), 16);
}

} // namespace
} // namespace pshard::planner
