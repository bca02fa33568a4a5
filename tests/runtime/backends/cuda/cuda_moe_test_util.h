// Helpers of the CUDA MoE conformance tests: experts quantized on the host and uploaded
// (strided, or placed at scattered addresses as a streaming slot places them), the CPU's
// dispatch of them as the reference, and the host's routes in MoeRoutes form.
#pragma once

#include "cuda_test_util.h"
#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/kernels/quantize.h"

#include <memory>

namespace pshard::cuda_testing {

struct Experts {
  std::vector<uint8_t> host;
  ExpertMatrices cpu, gpu;
};

// n_expert matrices of rows x cols, contiguous; `scatter` places them on the device in
// reverse order through `placed`, as a streaming slot would.
inline Experts make_experts(DeviceBuffers& buf, TensorType type, int64_t n_expert, int64_t rows,
                     int64_t cols, uint32_t seed, bool scatter) {
  Experts e;
  const size_t row_bytes = *tensor_bytes(type, cols);
  const size_t stride = row_bytes * static_cast<size_t>(rows);
  e.host.resize(stride * static_cast<size_t>(n_expert));
  const auto f = random_floats(static_cast<size_t>(n_expert * rows * cols), seed, -0.5f, 0.5f);
  for (int64_t r = 0; r < n_expert * rows; ++r)
    EXPECT_TRUE(quantize_row(type, f.data() + r * cols, e.host.data() + r * row_bytes, cols).ok());
  e.cpu.first = {type, e.host.data(), rows, cols, row_bytes};
  e.cpu.n_expert = n_expert;
  e.gpu = e.cpu;
  if (!scatter) {
    e.gpu.first.data = buf.upload(e.host);
    return e;
  }
  e.gpu.placed.resize(static_cast<size_t>(n_expert));
  for (int64_t x = n_expert - 1; x >= 0; --x) {
    std::vector<uint8_t> one(e.host.begin() + static_cast<std::ptrdiff_t>(x * stride),
                             e.host.begin() + static_cast<std::ptrdiff_t>((x + 1) * stride));
    e.gpu.placed[static_cast<size_t>(x)] = buf.upload(one);
  }
  e.gpu.first.data = e.gpu.placed[0];
  return e;
}

// The CPU's output for these experts and router logits (turned into routing weights in
// place, as moe_dispatch does): what the device must match.
// What a family adds to its experts (gpt-oss): the activation and per-expert biases, in
// the memory of the Ops that runs the dispatch.
struct ExpertExtras {
  FfnActivation activation = FfnActivation::kSilu;
  const float* gate_bias = nullptr;
  const float* up_bias = nullptr;
  const float* down_bias = nullptr;

  void apply(MoeDispatch& m) const {
    m.activation = activation;
    m.gate_bias = gate_bias;
    m.up_bias = up_bias;
    m.down_bias = down_bias;
  }
};

inline std::vector<float> cpu_dispatch(CpuOps& cpu, const Experts& gate, const Experts& up,
                                       const Experts& down, int64_t k, const std::vector<float>& x,
                                       std::vector<float>& logits, int64_t n,
                                       const MoeGating& gating = {},
                                       const ExpertExtras& extras = {}) {
  const int64_t dm = gate.cpu.first.cols, ff = gate.cpu.first.rows;
  MoeDispatch cm{gate.cpu, up.cpu,  down.cpu, k,       dm,      ff,
                 nullptr,  nullptr, nullptr,  nullptr, nullptr, MoeGating{}};
  cm.gating = gating;
  extras.apply(cm);
  std::vector<float> in(n * dm), eo(n * dm), gb(n * ff), ub(n * ff), out(n * dm);
  cm.expert_in = in.data();
  cm.expert_out = eo.data();
  cm.gate_buf = gb.data();
  cm.up_buf = ub.data();
  cpu.moe_dispatch(x.data(), logits.data(), cm, n, out.data());
  return out;
}

// The routes moe_routes gave per expert, as the executor hands them to a device: per
// token its k experts in ascending index order, with their weights.
inline std::shared_ptr<MoeRoutes> routes_of(const std::vector<std::vector<MoeRoute>>& by_expert,
                                            int64_t n, int64_t k) {
  auto routes = std::make_shared<MoeRoutes>();
  routes->n_tokens = n;
  routes->k = k;
  routes->experts.resize(static_cast<size_t>(n * k));
  routes->weights.resize(static_cast<size_t>(n * k));
  std::vector<int64_t> filled(static_cast<size_t>(n), 0);
  for (size_t e = 0; e < by_expert.size(); ++e)
    for (const MoeRoute& r : by_expert[e]) {
      const size_t at = static_cast<size_t>(r.token * k + filled[static_cast<size_t>(r.token)]++);
      routes->experts[at] = static_cast<int32_t>(e);
      routes->weights[at] = r.weight;
    }
  return routes;
}

} // namespace pshard::cuda_testing
