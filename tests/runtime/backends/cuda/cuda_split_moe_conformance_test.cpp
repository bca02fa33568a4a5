// Conformance of CudaDevice::run_expert_groups (a split MoE pass's device experts: one
// upload of their rows, grouped launches, one download per chunk) against the CPU's
// expert FFN run group by group: placed and strided experts, fused and unfused gate/up,
// a K-quant mix, groups of up to kMatvecMaxTokens rows (grouped) and past it (one GEMM
// per expert, the default path), and more rows than one chunk of the kernel scratch.
// Bounds as cuda_moe_grouped_conformance_test.cpp's (no combine here: one expert each).
#include "cuda_moe_test_util.h"
#include "runtime/device/expert_groups.h"

#include <algorithm>

namespace pshard {
namespace {

using namespace cuda_testing;

struct SplitCase {
  std::string name;
  TensorType gate, up, down;
  int64_t n_expert, d, ff;
  std::vector<ExpertRowGroup> groups;
  bool placed;
  bool chunked = false; // the rows must span more than one chunk of the scratch
};

void PrintTo(const SplitCase& c, std::ostream* os) { *os << c.name; }

std::vector<ExpertRowGroup> every_expert(int64_t n_expert, int64_t rows) {
  std::vector<ExpertRowGroup> g;
  for (int64_t e = 0; e < n_expert; ++e)
    g.push_back({static_cast<int32_t>(e), rows});
  return g;
}

class CudaSplitMoe : public ::testing::TestWithParam<SplitCase> {};

TEST_P(CudaSplitMoe, GroupsMatchTheCpuExpertByExpert) {
  PSHARD_SKIP_WITHOUT_CUDA();
  const SplitCase c = GetParam();
  const int64_t rows = expert_group_rows(c.groups);
  int64_t largest = 0;
  for (const ExpertRowGroup& g : c.groups)
    largest = std::max(largest, g.rows);
  if (c.chunked) { // the case exists to cross a chunk boundary: check that it does
    const auto chunks = cuda::plan_moe_chunks({1, c.d, c.ff, c.gate == c.up, true},
                                              cuda::CudaWorkspace::kScratchBytes, 65535);
    ASSERT_TRUE(chunks.ok()) << chunks.status().to_string();
    ASSERT_LT(chunks->tokens, rows) << "the shape no longer splits into chunks";
  }
  auto d = CudaDevice::create();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  auto bytes = [&](TensorType t, int64_t r, int64_t cols) {
    return static_cast<uint64_t>(*tensor_bytes(t, cols)) * r * c.n_expert;
  };
  const uint64_t weights =
      bytes(c.gate, c.ff, c.d) + bytes(c.up, c.ff, c.d) + bytes(c.down, c.d, c.ff);
  const uint64_t scratch = static_cast<uint64_t>(largest) * (2 * c.d + 2 * c.ff) * 4;
  ASSERT_TRUE(allocate_arena_with_workspace(**d, weights + scratch + (16ull << 20)).ok());
  DeviceBuffers buf(**d);
  ThreadPool pool(2);
  CpuOps cpu(pool);
  const Experts gate = make_experts(buf, c.gate, c.n_expert, c.ff, c.d, 71, c.placed);
  const Experts up = make_experts(buf, c.up, c.n_expert, c.ff, c.d, 72, c.placed);
  const Experts down = make_experts(buf, c.down, c.n_expert, c.d, c.ff, 73, c.placed);
  const auto in = random_floats(static_cast<size_t>(rows * c.d), 74);

  // The CPU: each group's rows through its expert.
  std::vector<float> want(in.size()), ei(largest * c.d), eo(largest * c.d), gb(largest * c.ff),
      ub(largest * c.ff);
  MoeDispatch cm{gate.cpu,  up.cpu,    down.cpu,  1,         c.d,     c.ff,
                 ei.data(), eo.data(), gb.data(), ub.data(), nullptr, MoeGating{}};
  int64_t row = 0;
  for (const ExpertRowGroup& g : c.groups) {
    std::copy_n(in.data() + row * c.d, g.rows * c.d, ei.data());
    moe_expert_ffn(cpu, cm, g.expert, g.rows);
    std::copy_n(eo.data(), g.rows * c.d, want.data() + row * c.d);
    row += g.rows;
  }

  MoeDispatch gm{gate.gpu,
                 up.gpu,
                 down.gpu,
                 1,
                 c.d,
                 c.ff,
                 buf.zeros(static_cast<size_t>(largest * c.d)),
                 buf.zeros(static_cast<size_t>(largest * c.d)),
                 buf.zeros(static_cast<size_t>(largest * c.ff)),
                 buf.zeros(static_cast<size_t>(largest * c.ff)),
                 nullptr,
                 MoeGating{}};
  std::vector<float> got(in.size(), 0.0f);
  (*d)->run_expert_groups(gm, c.groups, in.data(), got.data());
  const Status s = (*d)->synchronize();
  ASSERT_TRUE(s.ok()) << s.to_string();
  const double bound = std::max({matmul_bound(c.gate), matmul_bound(c.up), matmul_bound(c.down),
                                 c.gate == TensorType::kF32 ? 1e-4 : 0.0});
  EXPECT_LE(relative_error(got, want), bound);
}

std::vector<SplitCase> cases() {
  const auto q4 = TensorType::kQ4_0, q8 = TensorType::kQ8_0;
  const auto q4k = TensorType::kQ4_K, q6k = TensorType::kQ6_K;
  // A decode pass of top-8 with five of its experts on the device.
  const std::vector<ExpertRowGroup> decode = {{0, 1}, {3, 1}, {4, 1}, {7, 1}, {8, 1}};
  const std::vector<ExpertRowGroup> small_prefill = {{1, 3}, {2, 8}, {5, 1}, {8, 6}};
  const std::vector<ExpertRowGroup> big_prefill = {{0, 9}, {2, 40}, {6, 3}};
  return {
      {"q4_0_decode_placed", q4, q4, q4, 9, 96, 160, decode, true},
      {"q4_0_decode_strided", q4, q4, q4, 9, 96, 160, decode, false},
      {"f32_decode_placed", TensorType::kF32, TensorType::kF32, TensorType::kF32, 9, 37, 53, decode,
       true},
      {"q4_k_q6_k_prefill8", q4k, q4k, q6k, 9, 256, 512, small_prefill, true},
      {"unfused_q4_0_q8_0", q4, q8, q8, 9, 96, 160, small_prefill, true},
      {"gemm_per_expert_past_8_rows", q8, q8, q8, 9, 96, 160, big_prefill, true},
      {"chunks_of_the_scratch", q8, q8, q8, 40, 64, 32768, every_expert(40, 8), true, true},
  };
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaSplitMoe, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

} // namespace
} // namespace pshard
