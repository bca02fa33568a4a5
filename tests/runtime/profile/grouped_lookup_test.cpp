// Schema 1.3's grouped MoE cells and CUDA graph overhead through ProfileLookup: cells are
// interpolated in log space over (tokens per routed expert, bytes the launch reads) per
// type and kernel, and a profile without them (older files, the emulated GPU) says so,
// which is how the estimator knows to keep pricing experts one launch per matrix.
#include "runtime/profile/profile_lookup.h"
#include "runtime/profile/profile_report.h"
#include "synthetic_profile.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

constexpr uint64_t kMiB = 1u << 20;
constexpr auto kQ4 = fb::WeightType::Q4_0;

// Fused gate+up cells of top-2 routing over two distinct experts: tokens per expert 1
// (n = 1) and 4 (n = 4), launches reading 4 MiB (1 MiB matrices × 2 experts × gate and
// up) and 64 MiB (16 MiB ones). bytes/s = base(bytes) × tokens per expert, base(4 MiB) =
// 100 GB/s, base(64 MiB) = 400 GB/s.
fb::ProfileT grouped_profile() {
  fb::ProfileT p = testing::synthetic_profile(true);
  for (uint64_t matrix : {kMiB, 16 * kMiB})
    for (uint32_t n : {1u, 4u}) {
      const double base = matrix == kMiB ? 100e9 : 400e9;
      p.gpu->grouped_expert.push_back(testing::grouped_cell(kQ4, true, n, 2, 2, matrix, base * n));
    }
  // A down cell given by its time only: 2 MiB read in 20 us.
  p.gpu->grouped_expert.push_back(testing::grouped_cell(kQ4, false, 1, 2, 2, kMiB, 0, 20e-6));
  p.gpu->grouped_expert_op = "test grouped kernels";
  p.gpu->graph_launch_overhead_s = 1.5e-6;
  return p;
}

ProfileLookup lookup_of(fb::ProfileT p) {
  Result<Profile> r = Profile::from_object(std::move(p));
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  return ProfileLookup(*r);
}

TEST(GroupedLookup, CellsOnTheGridAndBetween) {
  const ProfileLookup look = lookup_of(grouped_profile());
  ASSERT_TRUE(look.has_gpu_grouped_experts());
  EXPECT_DOUBLE_EQ(*look.gpu_grouped_expert_bytes_per_s(TensorType::kQ4_0, true, 1, 4 * kMiB),
                   100e9);
  EXPECT_DOUBLE_EQ(*look.gpu_grouped_expert_bytes_per_s(TensorType::kQ4_0, true, 4, 64 * kMiB),
                   1600e9);
  // Halfway in log2 on both axes: (100 + 400) / 2 at 4 MiB, (400 + 1600) / 2 at 64 MiB.
  EXPECT_NEAR(*look.gpu_grouped_expert_bytes_per_s(TensorType::kQ4_0, true, 2, 16 * kMiB),
              625e9, 1e3);
  // Clamped outside what was measured, as the matmul cells are.
  EXPECT_DOUBLE_EQ(*look.gpu_grouped_expert_bytes_per_s(TensorType::kQ4_0, true, 64, kMiB),
                   400e9);
}

TEST(GroupedLookup, DownCellsAreTheirOwnTableAndRatesComeFromSecondsWhenAbsent) {
  const ProfileLookup look = lookup_of(grouped_profile());
  EXPECT_NEAR(*look.gpu_grouped_expert_bytes_per_s(TensorType::kQ4_0, false, 1, 2 * kMiB),
              2.0 * kMiB / 20e-6, 1);
  // A type without cells is not found here; the estimator borrows the nearest in bits.
  const Result<double> q8 = look.gpu_grouped_expert_bytes_per_s(TensorType::kQ8_0, true, 1, kMiB);
  EXPECT_EQ(q8.status().code(), StatusCode::kNotFound);
  EXPECT_NE(q8.status().to_string().find("grouped expert"), std::string::npos);
}

TEST(GroupedLookup, GraphOverhead) {
  EXPECT_DOUBLE_EQ(*lookup_of(grouped_profile()).gpu_graph_launch_overhead_s(), 1.5e-6);
}

TEST(GroupedLookup, AbsentCellsAreReportedAbsent) {
  const ProfileLookup look = lookup_of(testing::synthetic_profile(true));
  EXPECT_FALSE(look.has_gpu_grouped_experts());
  EXPECT_EQ(look.gpu_grouped_expert_bytes_per_s(TensorType::kQ4_0, true, 1, kMiB).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(look.gpu_graph_launch_overhead_s().status().code(), StatusCode::kNotFound);
  const ProfileLookup cpu_only = lookup_of(testing::synthetic_profile(false));
  EXPECT_FALSE(cpu_only.has_gpu_grouped_experts());
  EXPECT_NE(cpu_only.gpu_graph_launch_overhead_s().status().to_string().find("no GPU"),
            std::string::npos);
}

// Cells that say nothing (no distinct experts, no rate and no time) are skipped rather
// than read as an infinitely fast kernel.
TEST(GroupedLookup, EmptyCellsAreSkipped) {
  fb::ProfileT p = testing::synthetic_profile(true);
  p.gpu->grouped_expert.push_back(testing::grouped_cell(kQ4, true, 1, 2, 0, kMiB, 1e12));
  p.gpu->grouped_expert.push_back(testing::grouped_cell(kQ4, true, 1, 2, 2, kMiB, 0, 0));
  EXPECT_FALSE(lookup_of(std::move(p)).has_gpu_grouped_experts());
}

TEST(GroupedLookup, ReportShowsTheGroupedTableAndGraphOverhead) {
  Result<Profile> p = Profile::from_object(grouped_profile());
  ASSERT_TRUE(p.ok());
  const std::string text = profile_report(*p);
  for (const char* needle : {"GPU grouped MoE experts, test grouped kernels", "gate+up", "down",
                             "768 x 2048", "inside a CUDA graph 1.50 us"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
}

} // namespace
} // namespace pshard
