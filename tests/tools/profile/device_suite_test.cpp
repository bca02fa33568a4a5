// The device half of the suite driven through a fake DeviceMeasurer: proves the
// interface the emu and CUDA backends will implement fills the GPU and transfer tables,
// and that the lookup reads them back.
#include "runtime/profile/profile_lookup.h"
#include "tools/pshard-profile/progress.h"
#include "tools/pshard-profile/suite.h"
#include "tools/pshard-profile/timing.h"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

namespace pshard {
namespace {

// A device with exact, known speeds: 1 TFLOP/s, 20 GB/s links with 10 us latency.
class FakeDevice : public DeviceMeasurer {
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

// Also grouped MoE cells: a launch reads every distinct expert's matrices at 400 GB/s,
// and experts over 1 GiB "do not fit"; graph replays cost 1 us per kernel.
class GroupedFakeDevice final : public FakeDevice {
public:
  std::string grouped_expert_op() const override { return "fake grouped"; }
  Result<GroupedExpertTiming> time_grouped_experts(const GroupedExpertShape& s) override {
    const double matrix = double(*tensor_bytes(s.type, s.cols)) * double(s.rows);
    if (matrix * double(s.n_expert) > double(1ull << 30))
      return Status(StatusCode::kOutOfMemory, "too large for the fake");
    const int64_t distinct = std::min(s.n_expert, s.n_tokens * s.n_expert_used);
    return GroupedExpertTiming{double(distinct) * matrix * (s.fused_gate_up ? 2 : 1) / 400e9,
                               distinct};
  }
  Result<double> time_graph_launch_overhead() override { return 1e-6; }
};

profiling::SuiteGrid small_grid() {
  profiling::SuiteGrid grid;
  grid.types = {TensorType::kQ4_0};
  grid.matrix_bytes = {1u << 20};
  grid.tokens = {1, 4};
  grid.threads = {1};
  grid.ctx_lens = {256};
  grid.transfer_bytes = {4096, 1u << 20};
  grid.read_buffer_bytes = 1u << 20;
  return grid;
}

TEST(DeviceSuite, GroupedExpertCellsWhenTheDeviceHasThem) {
  profiling::SuiteGrid grid = small_grid();
  grid.grouped_tokens = {1, 16};
  // Qwen3-30B-A3B's experts, and one model whose experts exceed the fake's memory.
  grid.grouped_models = {{128, 8, 2048, 768}, {8, 2, 65536, 65536}};
  GroupedFakeDevice device;
  profiling::Progress progress(profiling::device_units(grid), /*enabled=*/false);
  fb::ProfileT profile;
  profile.under_load = std::make_unique<fb::UnderLoadT>();
  ASSERT_TRUE(profiling::measure_device(grid, device, progress, 1e-4, profile).ok());
  ASSERT_TRUE(profile.gpu);
  EXPECT_DOUBLE_EQ(profile.gpu->graph_launch_overhead_s, 1e-6);
  EXPECT_EQ(profile.gpu->grouped_expert_op, "fake grouped");
  // 2 token counts x fused and down, for the model that fits.
  ASSERT_EQ(profile.gpu->grouped_expert.size(), 4u);
  for (const auto& p : profile.gpu->grouped_expert) {
    EXPECT_EQ(p->n_expert, 128u);
    EXPECT_EQ(p->n_expert_used, 8u);
    EXPECT_EQ(p->rows, p->fused_gate_up ? 768u : 2048u);
    EXPECT_EQ(p->cols, p->fused_gate_up ? 2048u : 768u);
    EXPECT_EQ(p->matrix_bytes, *tensor_bytes(TensorType::kQ4_0, p->cols) * p->rows);
    EXPECT_EQ(p->distinct_experts, std::min(128u, p->n_tokens * 8));
    EXPECT_NEAR(p->bytes_per_s, 400e9, 1e3);
  }
}

TEST(DeviceSuite, NoGroupedCellsFromADeviceWithoutTheKernel) {
  profiling::SuiteGrid grid = small_grid();
  grid.grouped_tokens = {1};
  grid.grouped_models = {{8, 2, 64, 128}};
  FakeDevice device; // the interface's defaults: kUnsupported
  profiling::Progress progress(profiling::device_units(grid), /*enabled=*/false);
  fb::ProfileT profile;
  profile.under_load = std::make_unique<fb::UnderLoadT>();
  ASSERT_TRUE(profiling::measure_device(grid, device, progress, 1e-4, profile).ok());
  EXPECT_TRUE(profile.gpu->grouped_expert.empty());
  EXPECT_TRUE(profile.gpu->grouped_expert_op.empty());
  EXPECT_EQ(profile.gpu->graph_launch_overhead_s, 0.0);
}

// Schema 1.4: at each load tier, the device's cell while the CPU computes and the CPU's at
// every thread count while the device does (the fake's matmuls run on a second thread).
TEST(DeviceSuite, BothSidesAreMeasuredBesideTheOther) {
  profiling::SuiteGrid grid = small_grid();
  grid.load_tokens = {1, 4};
  grid.threads = {1, 2};
  FakeDevice device;
  profiling::Progress progress(profiling::device_units(grid), /*enabled=*/false);
  fb::ProfileT profile;
  profile.under_load = std::make_unique<fb::UnderLoadT>();
  ASSERT_TRUE(profiling::measure_device(grid, device, progress, 1e-4, profile).ok());
  const fb::UnderLoadT& u = *profile.under_load;
  ASSERT_EQ(u.device_matmul_beside_cpu.size(), 2u);
  ASSERT_EQ(u.cpu_matmul_beside_device.size(), 4u);
  for (const auto& p : u.device_matmul_beside_cpu) {
    EXPECT_EQ(p->threads, 0u);
    EXPECT_EQ(p->matrix_bytes, grid.matrix_bytes.back());
    EXPECT_GT(p->flops_per_s, 0);
  }
  for (const auto& p : u.cpu_matmul_beside_device)
    EXPECT_GT(p->flops_per_s, 0);
  EXPECT_NE(u.beside_description.find("in a loop"), std::string::npos);
  EXPECT_EQ(profiling::beside_units(grid), 2 * (1 + 2));
}

// A device that cannot be driven from a second thread: the profile is made without the
// beside cells (optional figures), and says why.
class SingleThreadDevice final : public FakeDevice {
public:
  Result<double> time_matmul(TensorType t, int64_t n, int64_t rows, int64_t cols) override {
    if (std::this_thread::get_id() != owner_)
      return internal_error("the fake device is bound to its thread");
    return FakeDevice::time_matmul(t, n, rows, cols);
  }

private:
  std::thread::id owner_ = std::this_thread::get_id();
};

TEST(DeviceSuite, ADeviceThatFailsBesideTheCpuLeavesOutOnlyThoseCells) {
  profiling::SuiteGrid grid = small_grid();
  grid.load_tokens = {1};
  SingleThreadDevice device;
  profiling::Progress progress(profiling::device_units(grid), /*enabled=*/false);
  fb::ProfileT profile;
  profile.under_load = std::make_unique<fb::UnderLoadT>();
  const Status st = profiling::measure_device(grid, device, progress, 1e-4, profile);
  ASSERT_TRUE(st.ok()) << st.to_string();
  EXPECT_FALSE(profile.gpu->matmul.empty());
  EXPECT_TRUE(profile.under_load->cpu_matmul_beside_device.empty());
  EXPECT_TRUE(profile.under_load->device_matmul_beside_cpu.empty());
  EXPECT_NE(profile.under_load->beside_description.find("bound to its thread"), std::string::npos)
      << profile.under_load->beside_description;
}

TEST(DeviceSuite, FakeDeviceFillsGpuAndTransferTables) {
  const profiling::SuiteGrid grid = small_grid();
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

// A device call reports the device seconds of one operation; the call itself can take
// far longer (synchronizes, a cell's setup). The budget bounds the wall clock too: a
// 1 us kernel behind 2 ms of setup stops after ~budget / 2 ms calls, not after 500.
TEST(TimeDevice, StopsOnTheWallClockWhenCallsCostMoreThanTheyReport) {
  int calls = 0;
  const double start = profiling::now_seconds();
  auto t = profiling::time_device(
      [&]() -> Result<double> {
        ++calls;
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        return 1e-6;
      },
      0.02);
  const double wall = profiling::now_seconds() - start;
  ASSERT_TRUE(t.ok()) << t.status().to_string();
  EXPECT_GE(t->repetitions, 3u);
  EXPECT_LE(calls, 25) << "the wall clock should stop it near 10 calls";
  EXPECT_LT(wall, 0.2);
  EXPECT_DOUBLE_EQ(t->seconds, 1e-6) << "the median is of what the calls reported";
}

TEST(TimeDevice, StopsOnDeviceSecondsAfterTheMinimumSamples) {
  int calls = 0;
  auto t = profiling::time_device(
      [&]() -> Result<double> {
        ++calls;
        return 0.015; // reported, not slept: three exceed the budget
      },
      0.02);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->repetitions, 3u);
  EXPECT_EQ(calls, 4) << "a warm-up, then three samples";
}

} // namespace
} // namespace pshard
