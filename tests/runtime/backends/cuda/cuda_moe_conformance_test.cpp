// Conformance of the MoE dispatch: routing (softmax, top-k with ties to the lower index,
// weights renormalised or not; GLM-4.5's sigmoid chosen by a selection bias and scaled) and the
// experts' SiLU-gated FFNs, against the CPU backend, for strided experts and for experts placed at
// scattered addresses (streaming slots). Bounds as in cuda_conformance_test.cpp: f16 2e-3, q8_0
// 2e-2; router probabilities 1e-5.
#include "cuda_moe_test_util.h"

namespace pshard {
namespace {

using namespace cuda_testing;

struct MoeCase {
  TensorType type;
  int64_t n_tokens;
  bool scatter;
  bool normalize = true; // false: top-k weights as the softmax gave them (Qwen2-MoE)
  bool glm = false;      // sigmoid probabilities, a selection bias, weights scaled by 2.5
};

void PrintTo(const MoeCase& c, std::ostream* os) {
  *os << tensor_type_name(c.type) << ", " << c.n_tokens << " tokens"
      << (c.scatter ? ", placed experts" : ", strided experts")
      << (c.normalize ? "" : ", unnormalised weights") << (c.glm ? ", GLM-4.5's gating" : "");
}

class CudaMoe : public ::testing::TestWithParam<MoeCase> {};

TEST_P(CudaMoe, DispatchMatchesTheCpu) {
  PSHARD_SKIP_WITHOUT_CUDA();
  const MoeCase c = GetParam();
  auto d = CudaDevice::create();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const Status arena = allocate_arena_with_workspace(**d, 64ull << 20);
  ASSERT_TRUE(arena.ok()) << arena.to_string();
  DeviceBuffers buf(**d);
  ThreadPool pool(2);
  CpuOps cpu(pool);

  const int64_t n = c.n_tokens, n_expert = 5, k = 2, dm = 64, ff = 96;
  const Experts gate = make_experts(buf, c.type, n_expert, ff, dm, 21, c.scatter);
  const Experts up = make_experts(buf, c.type, n_expert, ff, dm, 22, c.scatter);
  const Experts down = make_experts(buf, c.type, n_expert, dm, ff, 23, c.scatter);
  const auto x = random_floats(static_cast<size_t>(n * dm), 24);
  auto logits = random_floats(static_cast<size_t>(n * n_expert), 25, -2.0f, 2.0f);
  logits[1] = logits[3]; // a tie in token 0: the lower index must win on both backends

  // GLM-4.5's bias moves expert 4 ahead of the others: the choice differs from the
  // probabilities' own order.
  const std::vector<float> bias = {0.0f, 0.1f, -0.2f, 0.0f, 0.9f};
  MoeGating gating{c.glm ? ExpertGating::kSigmoid : ExpertGating::kSoftmax, c.normalize,
                   c.glm ? 2.5f : 1.0f, c.glm ? bias.data() : nullptr};
  std::vector<float> cpu_logits = logits;
  const std::vector<float> want = cpu_dispatch(cpu, gate, up, down, k, x, cpu_logits, n, gating);

  MoeDispatch gm{gate.gpu, up.gpu,  down.gpu, k,       dm,      ff,
                 nullptr,  nullptr, nullptr,  nullptr, nullptr, MoeGating{}};
  if (c.glm)
    gating.selection_bias = buf.upload(bias);
  gm.gating = gating;
  gm.expert_in = buf.zeros(n * dm);
  gm.expert_out = buf.zeros(n * dm);
  gm.gate_buf = buf.zeros(n * ff);
  gm.up_buf = buf.zeros(n * ff);
  float* glogits = buf.upload(logits);
  float* gout = buf.zeros(n * dm);
  (*d)->compute().moe_dispatch(buf.upload(x), glogits, gm, n, gout);
  const Status s = (*d)->synchronize();
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_LE(relative_error(buf.download(glogits, logits.size()), cpu_logits), 1e-5)
      << "router probabilities";
  const double bound = c.type == TensorType::kF16 ? 2e-3 : 2e-2;
  EXPECT_LE(relative_error(buf.download(gout, want.size()), want), bound);
}

// A pass the executor routed on the host: only the routed experts are placed (the rest
// null), and the device's own logits would pick an unplaced expert (as a float near-tie
// can). The dispatch must follow the host's routes: no fault, the CPU's result.
TEST(CudaMoeHostRoutes, TheDeviceRunsOnlyTheExpertsTheHostRouted) {
  PSHARD_SKIP_WITHOUT_CUDA();
  auto d = CudaDevice::create();
  ASSERT_TRUE(d.ok()) << d.status().to_string();
  const Status arena = allocate_arena_with_workspace(**d, 64ull << 20);
  ASSERT_TRUE(arena.ok()) << arena.to_string();
  DeviceBuffers buf(**d);
  ThreadPool pool(2);
  CpuOps cpu(pool);

  const int64_t n = 3, n_expert = 6, k = 2, dm = 64, ff = 96;
  const TensorType type = TensorType::kQ8_0;
  Experts gate = make_experts(buf, type, n_expert, ff, dm, 31, true);
  Experts up = make_experts(buf, type, n_expert, ff, dm, 32, true);
  Experts down = make_experts(buf, type, n_expert, dm, ff, 33, true);
  const auto x = random_floats(static_cast<size_t>(n * dm), 34);
  auto logits = random_floats(static_cast<size_t>(n * n_expert), 35, -2.0f, 2.0f);
  std::vector<float> routed_logits = logits;
  const auto by_expert = moe_routes(routed_logits.data(), n, n_expert, k, MoeGating{});
  const auto routes = routes_of(by_expert, n, k);
  int64_t unrouted = -1;
  for (int64_t e = 0; e < n_expert; ++e)
    if (by_expert[static_cast<size_t>(e)].empty()) {
      unrouted = e;
      for (Experts* m : {&gate, &up, &down})
        m->gpu.placed[static_cast<size_t>(e)] = nullptr;
    }
  ASSERT_GE(unrouted, 0) << "3 tokens x 2 of 6 experts leave one unrouted";

  std::vector<float> cpu_logits = logits;
  const std::vector<float> want = cpu_dispatch(cpu, gate, up, down, k, x, cpu_logits, n);

  std::vector<float> device_logits = logits;
  for (int64_t t = 0; t < n; ++t)
    device_logits[static_cast<size_t>(t * n_expert + unrouted)] = 50.0f; // "rounding"
  MoeDispatch gm{gate.gpu, up.gpu,  down.gpu, k,       dm,      ff,
                 nullptr,  nullptr, nullptr,  nullptr, nullptr, MoeGating{}};
  gm.expert_in = buf.zeros(n * dm);
  gm.expert_out = buf.zeros(n * dm);
  gm.gate_buf = buf.zeros(n * ff);
  gm.up_buf = buf.zeros(n * ff);
  gm.routes = routes;
  float* gout = buf.zeros(n * dm);
  (*d)->compute().moe_dispatch(buf.upload(x), buf.upload(device_logits), gm, n, gout);
  const Status s = (*d)->synchronize();
  ASSERT_TRUE(s.ok()) << s.to_string();
  EXPECT_LE(relative_error(buf.download(gout, want.size()), want), 2e-2);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaMoe,
                         ::testing::Values(MoeCase{TensorType::kF16, 3, false},
                                           MoeCase{TensorType::kQ8_0, 11, false},
                                           MoeCase{TensorType::kQ8_0, 4, true},
                                           MoeCase{TensorType::kQ4_0, 1, true},
                                           MoeCase{TensorType::kF16, 5, false, false},
                                           MoeCase{TensorType::kQ8_0, 2, true, false},
                                           MoeCase{TensorType::kQ8_0, 6, false, true, true}),
                         [](const auto& info) {
                           return std::string(tensor_type_name(info.param.type)) + "_" +
                                  std::to_string(info.param.n_tokens) + "tokens" +
                                  (info.param.scatter ? "_placed" : "_strided") +
                                  (info.param.normalize ? "" : "_unnormalised") +
                                  (info.param.glm ? "_glm" : "");
                         });

} // namespace
} // namespace pshard
