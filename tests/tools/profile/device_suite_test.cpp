// The device half of the suite driven through a fake DeviceMeasurer: proves the
// interface the emu and CUDA backends will implement fills the GPU and transfer tables,
// and that the lookup reads them back.
#include "runtime/profile/profile_lookup.h"
#include "tools/pshard-profile/progress.h"
#include "tools/pshard-profile/suite.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

// A device with exact, known speeds: 1 TFLOP/s, 20 GB/s links with 10 us latency.
class FakeDevice final : public DeviceMeasurer {
public:
  std::string backend_name() const override { return "fake"; }
  Result<fb::GpuInfoT> describe() override {
    fb::GpuInfoT info;
    info.name = "Fake GPU";
    info.source = fb::Provenance::Measured;
    return info;
  }
  std::string matmul_op() const override { return "fake matmul"; }
  std::string attention_op() const override { return "fake attention"; }
  Result<double> time_matmul(TensorType, int64_t n_tokens, int64_t rows, int64_t cols) override {
    return 2.0 * double(n_tokens * rows * cols) / 1e12;
  }
  Result<double> time_attention(const AttentionShape&) override {
    return unsupported("optional part not implemented");
  }
  Result<double> time_device_read(uint64_t bytes) override { return double(bytes) / 500e9; }
  Result<double> time_launch_overhead() override { return 4e-6; }
  Result<double> time_transfer(Direction, HostMemoryKind, uint64_t bytes) override {
    return 1e-5 + double(bytes) / 20e9;
  }
  Status start_copy_load(uint64_t) override { return Status::ok_status(); }
  Result<double> stop_copy_load() override { return 20e9; }
};

TEST(DeviceSuite, FakeDeviceFillsGpuAndTransferTables) {
  profiling::SuiteGrid grid;
  grid.types = {TensorType::kQ4_0};
  grid.matrix_bytes = {1u << 20};
  grid.tokens = {1, 4};
  grid.threads = {1};
  grid.ctx_lens = {256};
  grid.transfer_bytes = {4096, 1u << 20};
  grid.read_buffer_bytes = 1u << 20;
  FakeDevice device;
  profiling::Progress progress(profiling::device_units(grid), /*enabled=*/false);
  fb::ProfileT profile;
  profile.under_load = std::make_unique<fb::UnderLoadT>();
  ASSERT_TRUE(profiling::measure_device(grid, device, progress, 1e-4, profile).ok());

  ASSERT_TRUE(profile.gpu);
  EXPECT_EQ(profile.gpu->matmul.size(), 2u);
  EXPECT_TRUE(profile.gpu->attention.empty()); // optional part reported unsupported
  EXPECT_DOUBLE_EQ(profile.gpu->launch_overhead_s, 4e-6);
  EXPECT_EQ(profile.transfers->points.size(), 8u); // 2 directions x 2 memories x 2 sizes
  EXPECT_EQ(profile.under_load->transfers.size(), 8u);

  profile.machine = std::make_unique<fb::MachineT>();
  Result<Profile> loaded = Profile::from_object(std::move(profile));
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  const ProfileLookup look(*loaded);
  EXPECT_NEAR(*look.gpu_matmul_flops(TensorType::kQ4_0, 2, 1u << 20), 1e12, 1e3);
  EXPECT_NEAR(*look.gpu_read_bandwidth(), 500e9, 1e3);
  const double mib = 1u << 20;
  EXPECT_NEAR(*look.transfer_bandwidth(Direction::kHostToDevice, 1u << 20, HostMemoryKind::kPinned),
              mib / (1e-5 + mib / 20e9), 1e3);
  EXPECT_NEAR(*look.transfer_latency_s(Direction::kDeviceToHost, HostMemoryKind::kPageable),
              1e-5 + 4096 / 20e9, 1e-12);
}

} // namespace
} // namespace pshard
