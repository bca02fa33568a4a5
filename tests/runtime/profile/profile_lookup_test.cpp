// ProfileLookup against hand-computed values on the synthetic profile.
#include "runtime/profile/profile_lookup.h"
#include "synthetic_profile.h"

#include <cmath>
#include <gtest/gtest.h>

namespace pshard {
namespace {

constexpr uint64_t kMiB = 1u << 20;

ProfileLookup make_lookup(bool with_gpu) {
  Result<Profile> p = Profile::from_object(testing::synthetic_profile(with_gpu));
  EXPECT_TRUE(p.ok()) << p.status().to_string();
  return ProfileLookup(*p);
}

TEST(ProfileLookup, MatmulOnGridPoints) {
  const ProfileLookup look = make_lookup(false);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(TensorType::kQ4_0, 1, kMiB, 1), 10e9);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(TensorType::kQ4_0, 4, 64 * kMiB, 2), 32e9);
}

TEST(ProfileLookup, MatmulInterpolatesInLogTokensAndSize) {
  const ProfileLookup look = make_lookup(false);
  // Tokens 2 is halfway between 1 and 4 in log2: (10 + 40) / 2 at 1 MiB, 1 thread.
  EXPECT_NEAR(*look.cpu_matmul_flops(TensorType::kQ4_0, 2, kMiB, 1), 25e9, 1);
  // 8 MiB is halfway between 1 and 64 MiB in log2: (10 + 4) / 2 at 1 token, 1 thread.
  EXPECT_NEAR(*look.cpu_matmul_flops(TensorType::kQ4_0, 1, 8 * kMiB, 1), 7e9, 1);
  // Both: at 8 MiB, tokens 1 → 7e9 and tokens 4 → 28e9; tokens 2 → 17.5e9.
  EXPECT_NEAR(*look.cpu_matmul_flops(TensorType::kQ4_0, 2, 8 * kMiB, 1), 17.5e9, 1);
}

TEST(ProfileLookup, MatmulClampsOutsideTheGrid) {
  const ProfileLookup look = make_lookup(false);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(TensorType::kQ4_0, 512, 64 * kMiB, 2), 32e9);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(TensorType::kQ4_0, 1, 4096, 1), 10e9);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(TensorType::kQ4_0, 1, kMiB, 16), 20e9);
}

// Cells at another row length than the reference (4096) become a ratio over (tokens,
// row length) applied to every size and thread count; without a row length, or in a
// profile without such cells, nothing changes.
TEST(ProfileLookup, OtherRowLengthsScaleByTheirMeasuredRatio) {
  fb::ProfileT raw = testing::synthetic_profile(false);
  // At 1024 values per row: 0.5 of the reference at 1 token, 0.8 at 4 tokens (64 MiB).
  auto narrow = [&](uint32_t n, uint32_t t, double ratio) {
    auto p = testing::matmul_cell(fb::WeightType::Q4_0, n, 64 * kMiB, t, ratio * 4e9 * n * t);
    p->cols = 1024;
    raw.cpu->matmul.push_back(std::move(p));
  };
  narrow(1, 1, 0.5);
  narrow(1, 2, 0.5);
  narrow(4, 1, 0.8);
  Result<Profile> profile = Profile::from_object(std::move(raw));
  ASSERT_TRUE(profile.ok()) << profile.status().to_string();
  const ProfileLookup look(*profile);
  const auto q4 = TensorType::kQ4_0;
  EXPECT_NEAR(*look.cpu_matmul_flops(q4, 1, kMiB, 1, Load::kIdle, 1024), 0.5 * 10e9, 1);
  EXPECT_NEAR(*look.cpu_matmul_flops(q4, 4, 64 * kMiB, 2, Load::kIdle, 1024), 0.8 * 32e9, 1);
  // 2048 is halfway between 1024 and 4096 in log2: ratio 0.75 at 1 token.
  EXPECT_NEAR(*look.cpu_matmul_flops(q4, 1, kMiB, 1, Load::kIdle, 2048), 0.75 * 10e9, 1);
  // Narrower than measured clamps to the narrowest; no row length: the reference figure.
  EXPECT_NEAR(*look.cpu_matmul_flops(q4, 1, kMiB, 1, Load::kIdle, 256), 0.5 * 10e9, 1);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(q4, 1, kMiB, 1), 10e9);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(q4, 1, kMiB, 1, Load::kIdle, 4096), 10e9);
  // The reference cells alone make the grid: the narrow cells are not averaged into it.
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(q4, 1, 64 * kMiB, 1), 4e9);
  // A profile without narrow cells ignores the row length.
  EXPECT_DOUBLE_EQ(*make_lookup(false).cpu_matmul_flops(q4, 1, kMiB, 1, Load::kIdle, 1024), 10e9);
}

TEST(ProfileLookup, UnderLoadScalesByTheMeasuredRatio) {
  const ProfileLookup look = make_lookup(false);
  // Measured under load only at 64 MiB / 1 token, ratio 0.5 everywhere: applied to any cell.
  EXPECT_NEAR(*look.cpu_matmul_flops(TensorType::kQ4_0, 4, kMiB, 1, Load::kUnderLoad), 20e9, 1);
  EXPECT_NEAR(*look.cpu_matmul_flops(TensorType::kQ4_0, 1, 64 * kMiB, 2, Load::kUnderLoad), 4e9, 1);
  Result<double> missing = look.cpu_read_bandwidth(1, Load::kUnderLoad);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("under-load"), std::string::npos);
}

TEST(ProfileLookup, ReadBandwidthIsLinearInThreads) {
  const ProfileLookup look = make_lookup(false);
  EXPECT_DOUBLE_EQ(*look.cpu_read_bandwidth(1), 10e9);
  EXPECT_DOUBLE_EQ(*look.cpu_read_bandwidth(2), 16e9);
  EXPECT_DOUBLE_EQ(*look.cpu_read_bandwidth(8), 16e9);
}

TEST(ProfileLookup, MissingTypeSaysWhatIsMissing) {
  const ProfileLookup look = make_lookup(false);
  Result<double> r = look.cpu_matmul_flops(TensorType::kF16, 1, kMiB, 1);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("f16"), std::string::npos) << r.status().message();
}

TEST(ProfileLookup, NoGpuAnswersNotFoundWithTheReason) {
  const ProfileLookup look = make_lookup(false);
  EXPECT_FALSE(look.has_gpu());
  for (const Status& s :
       {look.gpu_matmul_flops(TensorType::kQ4_0, 1, kMiB).status(),
        look.gpu_launch_overhead_s().status(),
        look.transfer_bandwidth(Direction::kHostToDevice, kMiB, HostMemoryKind::kPinned)
            .status()}) {
    EXPECT_EQ(s.code(), StatusCode::kNotFound);
    EXPECT_NE(s.message().find("no GPU: synthetic test machine"), std::string::npos) << s.message();
  }
}

TEST(ProfileLookup, GpuAndTransfers) {
  const ProfileLookup look = make_lookup(true);
  ASSERT_TRUE(look.has_gpu());
  EXPECT_DOUBLE_EQ(*look.gpu_matmul_flops(TensorType::kQ4_0, 16, 8 * kMiB), 100e9);
  EXPECT_DOUBLE_EQ(*look.gpu_launch_overhead_s(), 5e-6);
  EXPECT_DOUBLE_EQ(*look.gpu_read_bandwidth(), 250e9);
  const auto h2d = Direction::kHostToDevice;
  const auto pinned = HostMemoryKind::kPinned;
  EXPECT_DOUBLE_EQ(*look.transfer_bandwidth(h2d, kMiB, pinned), 20e9);
  // 8 MiB: halfway between 1 MiB and 64 MiB in log2.
  EXPECT_NEAR(*look.transfer_bandwidth(h2d, 8 * kMiB, pinned), 22.5e9, 1);
  EXPECT_NEAR(*look.transfer_seconds(h2d, 8 * kMiB, pinned), 8.0 * kMiB / 22.5e9, 1e-12);
  EXPECT_DOUBLE_EQ(*look.transfer_latency_s(h2d, pinned), 10e-6);
  EXPECT_EQ(look.transfer_bandwidth(Direction::kDeviceToHost, kMiB, pinned).status().code(),
            StatusCode::kNotFound);
}

} // namespace
} // namespace pshard
