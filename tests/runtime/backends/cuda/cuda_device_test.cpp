// The CUDA device's contract (runtime/device/device.h): one arena, out-of-memory as a
// status, queue ordering through events, event timing, sticky failures at synchronize,
// both transfer modes, and mapped host memory. Skips without a GPU; the first test
// checks the no-GPU path itself, which runs everywhere.
#include "cuda_test_util.h"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace pshard {
namespace {

using cuda_testing::DeviceBuffers;

std::unique_ptr<CudaDevice> make_device(cuda::TransferMode mode = cuda::TransferMode::kRegister) {
  CudaOptions o;
  o.transfer.mode = mode;
  o.transfer.chunk_bytes = 1 << 20; // several chunks per test copy
  o.transfer.chunks = 3;
  auto d = CudaDevice::create(o);
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return d.ok() ? std::move(*d) : nullptr;
}

TEST(CudaDevice, WithoutAGpuCreateIsAStatusNotACrash) {
  if (cuda::cuda_device_available().ok())
    GTEST_SKIP() << "a CUDA device is present: the no-GPU path is not reachable here";
  auto d = CudaDevice::create();
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kDeviceError);
  EXPECT_NE(d.status().message().find("no CUDA device"), std::string::npos)
      << d.status().to_string();
}

TEST(CudaDevice, OneArenaAtATime) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device();
  ASSERT_TRUE(d);
  auto a = d->allocate_arena(3 << 20);
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  EXPECT_EQ(d->arena(), *a);
  EXPECT_EQ(d->arena_bytes(), 3u << 20);
  auto again = d->allocate_arena(1 << 20);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kInvalidArgument);
  d->free_arena();
  EXPECT_EQ(d->arena(), nullptr);
  EXPECT_TRUE(d->allocate_arena(1 << 20).ok());
}

// The arena is all the device memory pshard takes: the kernels' scratch comes out of the
// plan's workspace buffer, and one too small for it is a clear sticky error.
TEST(CudaDevice, TheKernelWorkspaceLivesInsideTheArena) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device();
  ASSERT_TRUE(d);
  size_t free_before = 0, free_after = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_before, &total), cudaSuccess);
  const uint64_t bytes = 64ull << 20;
  ASSERT_TRUE(d->allocate_arena(bytes).ok());
  ASSERT_EQ(cudaMemGetInfo(&free_after, &total), cudaSuccess);
  EXPECT_EQ(d->arena_bytes(), bytes);
  // cudaMalloc rounds to its page size (2 MiB); nothing past that.
  EXPECT_LE(free_before - free_after, bytes + (2u << 20));

  const std::vector<TokenId> ids = {1, 2};
  float* out = reinterpret_cast<float*>(d->arena());
  const MatrixView table{TensorType::kF32, d->arena(), 8, 4, 16};
  d->set_workspace(d->arena() + (1 << 20), d->kernel_workspace_bytes() - 256);
  d->compute().embed_rows(table, ids, out);
  Status s = d->synchronize();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cannot hold the CUDA kernel workspace"), std::string::npos)
      << s.to_string();

  auto fresh = make_device();
  ASSERT_TRUE(fresh);
  ASSERT_TRUE(fresh->allocate_arena(bytes).ok());
  fresh->set_workspace(fresh->arena() + (1 << 20), fresh->kernel_workspace_bytes());
  EXPECT_EQ(fresh->workspace(), fresh->arena() + (1 << 20));
  const MatrixView t2{TensorType::kF32, fresh->arena(), 8, 4, 16};
  fresh->compute().embed_rows(t2, ids, reinterpret_cast<float*>(fresh->arena()) + 64);
  s = fresh->synchronize();
  EXPECT_TRUE(s.ok()) << s.to_string();
}

TEST(CudaDevice, OutOfMemoryIsAStatusAndTheDeviceStaysUsable) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device();
  ASSERT_TRUE(d);
  auto big = d->allocate_arena(d->info().memory_bytes * 2);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), StatusCode::kOutOfMemory) << big.status().to_string();
  EXPECT_TRUE(d->allocate_arena(1 << 20).ok());
  EXPECT_TRUE(d->synchronize().ok());
}

TEST(CudaDevice, EventsOrderTheQueuesAndTellTime) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->allocate_arena(64 << 20).ok());
  DeviceBuffers buf(*d);
  const size_t n = 4 << 20; // 16 MiB: the copy takes long enough to race a wrong order
  const std::vector<float> ones(n, 1.0f), twos(n, 2.0f);
  float* y = buf.zeros(n);
  float* x = buf.zeros(n);
  auto copied = d->create_event(), added = d->create_event(), never = d->create_event();
  ASSERT_TRUE(copied.ok() && added.ok() && never.ok());
  d->copy_to_device(Queue::kCopy, y, ones.data(), n * 4);
  d->copy_to_device(Queue::kCopy, x, twos.data(), n * 4);
  d->record(**copied, Queue::kCopy);
  d->wait(Queue::kCompute, **copied);
  d->wait(Queue::kCompute, **never); // never recorded: complete
  d->compute().add(y, x, static_cast<int64_t>(n));
  d->record(**added, Queue::kCompute);
  d->wait(Queue::kTransfer, **added);
  std::vector<float> out(n);
  d->copy_to_host(Queue::kTransfer, out.data(), y, n * 4);
  ASSERT_TRUE(d->synchronize().ok());
  EXPECT_EQ(out.front(), 3.0f);
  EXPECT_EQ(out.back(), 3.0f);
  EXPECT_TRUE(d->synchronize(**never).ok());
  auto t_copy = d->completion_time_ns(**copied);
  auto t_add = d->completion_time_ns(**added);
  ASSERT_TRUE(t_copy.ok() && t_add.ok()) << t_copy.status().to_string();
  const int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::steady_clock::now().time_since_epoch())
                          .count();
  EXPECT_LE(*t_copy, *t_add);
  EXPECT_LE(*t_add, now + 1000000); // within a millisecond of the host's clock
  EXPECT_FALSE(d->completion_time_ns(**never).ok());
}

TEST(CudaDevice, AFailedLaunchIsStickyWithFileAndLine) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->allocate_arena(1 << 20).ok());
  float* p = reinterpret_cast<float*>(d->arena());
  KvView kv{d->arena(), d->arena(), 4, 1000 * 2};
  // head_dim 1000 is past what the attention kernel takes: refused at launch.
  d->compute().attention(p, kv, AttentionDims{2, 2, 1000}, 0, 1, p);
  const Status s = d->synchronize();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kDeviceError);
  EXPECT_NE(s.message().find("cuda_ops.cpp:"), std::string::npos) << s.to_string();
  EXPECT_FALSE(d->synchronize().ok()) << "the failure must stay";
}

class CudaTransfer : public ::testing::TestWithParam<cuda::TransferMode> {};

TEST_P(CudaTransfer, RegisteredOrStagedCopiesArriveWhole) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device(GetParam());
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->allocate_arena(16 << 20).ok());
  const size_t bytes = (5 << 20) + 4096; // not a whole number of staging chunks
  void* host = std::aligned_alloc(4096, bytes + 4096);
  ASSERT_NE(host, nullptr);
  auto* h = static_cast<uint8_t*>(host);
  for (size_t i = 0; i < bytes; ++i)
    h[i] = static_cast<uint8_t>(i * 131 + 7);
  ASSERT_TRUE(d->register_host_memory(host, bytes + 4096).ok());
  d->copy_to_device(Queue::kCopy, d->arena(), h + 100, bytes - 100);
  auto copied = d->create_event();
  ASSERT_TRUE(copied.ok());
  d->record(**copied, Queue::kCopy);
  d->wait(Queue::kTransfer, **copied);
  std::vector<uint8_t> back(bytes - 100);
  d->copy_to_host(Queue::kTransfer, back.data(), d->arena(), back.size());
  ASSERT_TRUE(d->synchronize().ok());
  EXPECT_EQ(std::memcmp(back.data(), h + 100, back.size()), 0);
  d->unregister_host_memory(host);
  std::free(host);
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaTransfer,
                         ::testing::Values(cuda::TransferMode::kRegister,
                                           cuda::TransferMode::kStaging),
                         [](const auto& info) {
                           return std::string(cuda::transfer_mode_name(info.param));
                         });

TEST(CudaDevice, KernelsReadAndWriteMappedHostMemory) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->allocate_arena(1 << 20).ok());
  DeviceBuffers buf(*d);
  const size_t n = 1000;
  void* host = std::aligned_alloc(4096, 4096);
  auto* h = static_cast<float*>(host);
  std::fill_n(h, n, 1.5f);
  auto mapped = d->map_host_memory(host, 4096);
  ASSERT_TRUE(mapped.ok()) << mapped.status().to_string();
  float* x = buf.upload(std::vector<float>(n, 2.0f));
  d->compute().add(reinterpret_cast<float*>(*mapped), x, static_cast<int64_t>(n));
  ASSERT_TRUE(d->synchronize().ok());
  EXPECT_EQ(h[0], 3.5f);
  EXPECT_EQ(h[n - 1], 3.5f);
  d.reset(); // unregisters before the memory goes
  std::free(host);
}

// Every plan of a session maps the same KV cache (device.h): a range inside a mapped one
// gets the same address, not cudaHostRegister's "already registered"; a range that
// overlaps one without lying inside is refused; unregistering ends the mapping, so the
// memory can be mapped again (a later session's cache at the same address).
TEST(CudaDevice, MappingARangeAgainGivesTheSameAddress) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = make_device();
  ASSERT_TRUE(d);
  ASSERT_TRUE(d->allocate_arena(1 << 20).ok());
  void* host = std::aligned_alloc(4096, 3 * 4096);
  auto* bytes = static_cast<uint8_t*>(host);
  auto first = d->map_host_memory(host, 2 * 4096);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  auto again = d->map_host_memory(host, 2 * 4096);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(*again, *first);
  auto inside = d->map_host_memory(bytes + 4096, 4096);
  ASSERT_TRUE(inside.ok()) << inside.status().to_string();
  EXPECT_EQ(*inside, *first + 4096);
  EXPECT_FALSE(d->map_host_memory(bytes + 4096, 2 * 4096).ok()) << "overlaps without lying inside";
  // A refused mapping leaves no error behind for the next kernel.
  DeviceBuffers buf(*d);
  float* x = buf.upload(std::vector<float>(16, 1.0f));
  d->compute().add(x, x, 16);
  EXPECT_TRUE(d->synchronize().ok());
  d->unregister_host_memory(host);
  auto fresh = d->map_host_memory(host, 3 * 4096);
  EXPECT_TRUE(fresh.ok()) << fresh.status().to_string();
  d.reset(); // unregisters before the memory goes
  std::free(host);
}

} // namespace
} // namespace pshard
