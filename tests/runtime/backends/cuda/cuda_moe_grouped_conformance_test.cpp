// Conformance of the grouped MoE dispatch (gate+up fused, down and combine, each one
// launch for all routes of a chunk) against the CPU's dispatch: every weight type, odd
// shapes, k 1 / 2 / 8, 1 / 3 / 64 / 257 tokens, routes from the device's router and from
// the host, strided and placed experts, chunk boundaries (a shape whose routes overflow
// the workspace's scratch), gate and up of different types (the unfused path), and the
// expert-table cache (a table reused, and two blocks alternating).
// Bounds as cuda_moe_conformance_test.cpp's: f16 2e-3, quantized 2e-2; bf16 1e-2 and
// f32 1e-4 (cuda_conformance_test.cpp's matmul bounds, f32 loosened for the chain of two
// products, SiLU and the combine).
#include "cuda_moe_test_util.h"
#include "runtime/backends/cuda/moe_grouped_plan.h"

#include <algorithm>

namespace pshard {
namespace {

using namespace cuda_testing;

// f32's single-product bound is loosened for the chain (two products, SiLU, the combine).
double moe_bound(TensorType t) {
  return std::max(matmul_bound(t), t == TensorType::kF32 ? 1e-4 : 0.0);
}

struct GroupedCase {
  TensorType gate, up, down;
  int64_t n_expert, k, n_tokens, d, ff;
  bool placed;
  bool host_routes;
  bool chunked = false; // the shape must split the tokens into several chunks
};

std::string case_name(const GroupedCase& c) {
  std::string s = std::string(tensor_type_name(c.gate));
  if (c.up != c.gate)
    s += std::string("_up_") + tensor_type_name(c.up);
  if (c.down != c.gate)
    s += std::string("_down_") + tensor_type_name(c.down);
  s += "_e" + std::to_string(c.n_expert) + "k" + std::to_string(c.k) + "_" +
       std::to_string(c.n_tokens) + "t_" + std::to_string(c.d) + "x" + std::to_string(c.ff) +
       (c.placed ? "_placed" : "_strided") + (c.host_routes ? "_hostroutes" : "_deviceroutes");
  return s;
}

void PrintTo(const GroupedCase& c, std::ostream* os) { *os << case_name(c); }

// A block's experts on both sides and what the device dispatch needs around them.
struct Block {
  Experts gate, up, down;
};

Block make_block(DeviceBuffers& buf, const GroupedCase& c, uint32_t seed) {
  return {make_experts(buf, c.gate, c.n_expert, c.ff, c.d, seed, c.placed),
          make_experts(buf, c.up, c.n_expert, c.ff, c.d, seed + 1, c.placed),
          make_experts(buf, c.down, c.n_expert, c.d, c.ff, seed + 2, c.placed)};
}

// The device's output of one dispatch of `b` (router logits uploaded fresh each time:
// the dispatch turns them into probabilities in place).
std::vector<float> device_dispatch(CudaDevice& dev, DeviceBuffers& buf, const Block& b,
                                   const GroupedCase& c, const std::vector<float>& x,
                                   const std::vector<float>& logits,
                                   const ExpertExtras& extras = {}, const MoeGating& gating = {}) {
  const int64_t n = c.n_tokens;
  MoeDispatch gm{b.gate.gpu, b.up.gpu, b.down.gpu, c.k,     c.d,     c.ff,
                 nullptr,    nullptr,  nullptr,    nullptr, nullptr, gating};
  extras.apply(gm);
  if (c.host_routes) {
    std::vector<float> routed = logits;
    gm.routes = routes_of(moe_routes(routed.data(), n, c.n_expert, c.k, gating), n, c.k);
  }
  float* gout = buf.zeros(static_cast<size_t>(n * c.d));
  dev.compute().moe_dispatch(buf.upload(x), buf.upload(logits), gm, n, gout);
  const Status s = dev.synchronize();
  EXPECT_TRUE(s.ok()) << s.to_string();
  return buf.download(gout, static_cast<size_t>(n * c.d));
}

uint64_t block_bytes(const GroupedCase& c) {
  auto bytes = [&](TensorType t, int64_t rows, int64_t cols) {
    return static_cast<uint64_t>(*tensor_bytes(t, cols)) * rows * c.n_expert;
  };
  return bytes(c.gate, c.ff, c.d) + bytes(c.up, c.ff, c.d) + bytes(c.down, c.d, c.ff);
}

class CudaMoeGrouped : public ::testing::TestWithParam<GroupedCase> {};

TEST_P(CudaMoeGrouped, DispatchMatchesTheCpu) {
  PSHARD_SKIP_WITHOUT_CUDA();
  const GroupedCase c = GetParam();
  if (c.chunked) { // the case exists to cross a chunk boundary: check that it does
    const auto chunks =
        cuda::plan_moe_chunks({c.k, c.d, c.ff, c.gate == c.up},
                              cuda::CudaWorkspace::kActBytes + cuda::CudaWorkspace::kWeightBytes,
                              std::min<int64_t>(cuda::CudaWorkspace::kRoutes, 65535));
    ASSERT_TRUE(chunks.ok()) << chunks.status().to_string();
    ASSERT_LT(chunks->tokens, c.n_tokens) << "the shape no longer splits into chunks";
  }
  auto d = CudaDevice::create();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const uint64_t acts = static_cast<uint64_t>(c.n_tokens) * (2 * c.d + c.n_expert) * 4 * 4;
  const Status arena = allocate_arena_with_workspace(
      **d, std::max<uint64_t>(64ull << 20, 2 * block_bytes(c) + acts));
  ASSERT_TRUE(arena.ok()) << arena.to_string();
  DeviceBuffers buf(**d);
  ThreadPool pool(2);
  CpuOps cpu(pool);

  const Block b = make_block(buf, c, 41);
  const auto x = random_floats(static_cast<size_t>(c.n_tokens * c.d), 44);
  const auto logits = random_floats(static_cast<size_t>(c.n_tokens * c.n_expert), 45, -2.0f, 2.0f);
  std::vector<float> cpu_logits = logits;
  const std::vector<float> want =
      cpu_dispatch(cpu, b.gate, b.up, b.down, c.k, x, cpu_logits, c.n_tokens);
  const double bound = std::max({moe_bound(c.gate), moe_bound(c.up), moe_bound(c.down)});

  const std::vector<float> got = device_dispatch(**d, buf, b, c, x, logits);
  EXPECT_LE(relative_error(got, want), bound);
  // Again: a placed block's table is found in its slot, not uploaded; same bits.
  EXPECT_EQ(device_dispatch(**d, buf, b, c, x, logits), got) << "second dispatch";
}

// Two placed blocks used in turn (as layers are): each dispatch must read its own
// experts' table, never the other block's cached one.
// A device with a 64 MiB arena, its buffers, and the CPU to compare with.
class CudaMoeGroupedDevice : public ::testing::Test {
protected:
  void SetUp() override {
    PSHARD_SKIP_WITHOUT_CUDA();
    auto d = CudaDevice::create();
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    dev_ = std::move(*d);
    ASSERT_TRUE(allocate_arena_with_workspace(*dev_, 64ull << 20).ok());
    buf_ = std::make_unique<DeviceBuffers>(*dev_);
  }
  std::unique_ptr<CudaDevice> dev_;
  std::unique_ptr<DeviceBuffers> buf_;
  ThreadPool pool_{2};
  CpuOps cpu_{pool_};
};

TEST_F(CudaMoeGroupedDevice, AlternatingBlocksReadTheirOwnExperts) {
  CudaDevice* d = dev_.get();
  DeviceBuffers& buf = *buf_;
  CpuOps& cpu = cpu_;
  const GroupedCase c{
      TensorType::kQ8_0, TensorType::kQ8_0, TensorType::kQ8_0, 6, 2, 3, 64, 96, true, false};
  const Block a = make_block(buf, c, 51), b = make_block(buf, c, 61);
  const auto x = random_floats(static_cast<size_t>(c.n_tokens * c.d), 54);
  const auto logits = random_floats(static_cast<size_t>(c.n_tokens * c.n_expert), 55, -2.0f, 2.0f);
  std::vector<float> la = logits, lb = logits;
  const auto want_a = cpu_dispatch(cpu, a.gate, a.up, a.down, c.k, x, la, c.n_tokens);
  const auto want_b = cpu_dispatch(cpu, b.gate, b.up, b.down, c.k, x, lb, c.n_tokens);
  for (int round = 0; round < 2; ++round) {
    EXPECT_LE(relative_error(device_dispatch(*d, buf, a, c, x, logits), want_a), 2e-2) << round;
    EXPECT_LE(relative_error(device_dispatch(*d, buf, b, c, x, logits), want_b), 2e-2) << round;
  }
}

// gpt-oss's experts: per-expert biases on gate, up and down and the clamped SwiGLU (inputs
// large enough that gate and up pass the clamp at ±7), fused (gate and up alike) and
// unfused (of different types), routed on the device and by the host.
TEST_F(CudaMoeGroupedDevice, GptOssBiasesAndTheClampedSwigluMatchTheCpu) {
  CudaDevice* d = dev_.get();
  DeviceBuffers& buf = *buf_;
  CpuOps& cpu = cpu_;
  const auto q8 = TensorType::kQ8_0;
  for (TensorType up : {q8, TensorType::kF16})
    for (bool host_routes : {false, true}) {
      const GroupedCase c{q8, up, q8, 8, 3, 5, 128, 96, false, host_routes};
      SCOPED_TRACE(case_name(c));
      const Block b = make_block(buf, c, 71);
      const auto gate_bias = random_floats(static_cast<size_t>(c.n_expert * c.ff), 72, -1.0f, 1.0f);
      const auto up_bias = random_floats(static_cast<size_t>(c.n_expert * c.ff), 73, -1.0f, 1.0f);
      const auto down_bias = random_floats(static_cast<size_t>(c.n_expert * c.d), 74, -1.0f, 1.0f);
      const auto x = random_floats(static_cast<size_t>(c.n_tokens * c.d), 75, -3.0f, 3.0f);
      const auto logits =
          random_floats(static_cast<size_t>(c.n_tokens * c.n_expert), 76, -2.0f, 2.0f);
      std::vector<float> cpu_logits = logits;
      const ExpertExtras on_cpu{FfnActivation::kSwigluOai, gate_bias.data(), up_bias.data(),
                                down_bias.data()};
      const ExpertExtras on_gpu{FfnActivation::kSwigluOai, buf.upload(gate_bias),
                                buf.upload(up_bias), buf.upload(down_bias)};
      const auto want =
          cpu_dispatch(cpu, b.gate, b.up, b.down, c.k, x, cpu_logits, c.n_tokens, {}, on_cpu);
      EXPECT_LE(relative_error(device_dispatch(*d, buf, b, c, x, logits, on_gpu), want), 2e-2);
    }
}

// Llama 4's experts: sigmoid routing, unnormalised, each route's input row carrying its
// weight and the outputs summed unweighted; one and two experts a token, routed on the
// device and by the host, and a shape that takes several chunks.
TEST_F(CudaMoeGroupedDevice, Llama4WeighsTheInputsLikeTheCpu) {
  MoeGating gating;
  gating.func = ExpertGating::kSigmoid;
  gating.normalize = false;
  gating.weight_inputs = true;
  const auto q8 = TensorType::kQ8_0;
  for (const GroupedCase& c : {GroupedCase{q8, q8, q8, 16, 1, 7, 128, 96, false, false},
                               GroupedCase{q8, q8, q8, 16, 2, 7, 128, 96, true, true},
                               GroupedCase{q8, q8, q8, 8, 1, 600, 64, 4096, false, false}}) {
    SCOPED_TRACE(case_name(c));
    const Block b = make_block(*buf_, c, 81);
    const auto x = random_floats(static_cast<size_t>(c.n_tokens * c.d), 82);
    const auto logits =
        random_floats(static_cast<size_t>(c.n_tokens * c.n_expert), 83, -2.0f, 2.0f);
    std::vector<float> cpu_logits = logits;
    const auto want =
        cpu_dispatch(cpu_, b.gate, b.up, b.down, c.k, x, cpu_logits, c.n_tokens, gating);
    EXPECT_LE(relative_error(device_dispatch(*dev_, *buf_, b, c, x, logits, {}, gating), want),
              2e-2);
  }
}

// Per-type shapes: float rows of odd lengths; block types several (odd) blocks long.
GroupedCase type_case(TensorType t, bool placed) {
  const int64_t block = tensor_type_traits(t).block_values;
  const int64_t d = block == 1 ? 37 : block == 32 ? 96 : 256;
  const int64_t ff = block == 1 ? 53 : block == 32 ? 160 : 768;
  return {t, t, t, 5, 2, 3, d, ff, placed, false};
}

std::vector<GroupedCase> cases() {
  std::vector<GroupedCase> v;
  const TensorType all[] = {
      TensorType::kF32,    TensorType::kF16,  TensorType::kBF16,   TensorType::kQ8_0,
      TensorType::kQ4_0,   TensorType::kQ4_1, TensorType::kQ5_0,   TensorType::kQ5_1,
      TensorType::kIQ4_NL, TensorType::kQ2_K, TensorType::kQ3_K,   TensorType::kQ4_K,
      TensorType::kQ5_K,   TensorType::kQ6_K, TensorType::kIQ4_XS, TensorType::kMXFP4};
  bool placed = false;
  for (TensorType t : all) {
    v.push_back(type_case(t, placed));
    placed = !placed;
  }
  // k and token counts, routed on the device (strided and placed) and by the host.
  const auto q4 = TensorType::kQ4_0;
  for (int64_t k : {1, 2, 8})
    for (int64_t n : {1, 3, 64, 257}) {
      v.push_back({q4, q4, q4, 9, k, n, 96, 160, false, false});
      v.push_back({q4, q4, q4, 9, k, n, 96, 160, true, false});
      v.push_back({q4, q4, q4, 9, k, n, 96, 160, true, true});
    }
  v.push_back({TensorType::kF16, TensorType::kF16, TensorType::kF16, 9, 8, 64, 37, 53, true, true});
  // Q4_K_M's mix: gate and up Q4_K, down Q6_K.
  v.push_back(
      {TensorType::kQ4_K, TensorType::kQ4_K, TensorType::kQ6_K, 8, 8, 3, 256, 512, false, false});
  // Gate and up of different types: unfused.
  v.push_back(
      {TensorType::kQ4_0, TensorType::kQ8_0, TensorType::kQ8_0, 6, 2, 11, 96, 160, true, false});
  // 257 tokens x 8 routes of n_ff 4096: more than one chunk of the scratch (fused and unfused).
  const auto q8 = TensorType::kQ8_0;
  v.push_back({q8, q8, q8, 8, 8, 257, 64, 4096, true, false, true});
  v.push_back({q8, q8, q8, 8, 8, 257, 64, 4096, false, true, true});
  v.push_back({q4, q8, q8, 8, 8, 257, 64, 4096, true, false, true});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaMoeGrouped, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return case_name(info.param); });

} // namespace
} // namespace pshard
