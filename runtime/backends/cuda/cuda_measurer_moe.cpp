// The CUDA measurer's grouped MoE cells and graph replay overhead (cuda_measurer.h).
//
// A grouped cell times ONE launch of the kernel the dispatch runs (kernels/moe_grouped.cu:
// gate+up fused, or down) with every expert of the shape resident, stored as one tensor
// as a resident block is. The routes are drawn once per cell, uniformly (each token k
// distinct experts, sorted as the router sorts them), as kRouteSets different sets used
// in turn, so consecutive runs read other experts rather than re-reading the last run's
// from L2.
#include "runtime/backends/cuda/cuda_measurer.h"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <vector>

namespace pshard {
namespace {

constexpr int kRouteSets = 16;
// Bursts replayed per graph timing, each of kGraphBurst kernels.
constexpr int kGraphReplays = 20;
constexpr int kGraphBurst = 200;
// A cell whose experts need more than this (or half the VRAM) is skipped.
constexpr uint64_t kMaxGroupedBytes = 4ull << 30;

uint64_t aligned256(uint64_t n) { return (n + 255) / 256 * 256; }

// kRouteSets sets of n_tokens x k routes; returns the mean count of distinct experts.
double draw_routes(int64_t n_tokens, int64_t k, int64_t n_expert, std::vector<int32_t>& out) {
  std::mt19937 rng(20261201);
  std::vector<int32_t> ids(static_cast<size_t>(n_expert));
  out.clear();
  double distinct = 0;
  for (int set = 0; set < kRouteSets; ++set) {
    std::vector<bool> used(static_cast<size_t>(n_expert), false);
    for (int64_t t = 0; t < n_tokens; ++t) {
      std::iota(ids.begin(), ids.end(), 0);
      for (int64_t j = 0; j < k; ++j) { // partial Fisher-Yates: k distinct experts
        std::uniform_int_distribution<int64_t> pick(j, n_expert - 1);
        std::swap(ids[static_cast<size_t>(j)], ids[static_cast<size_t>(pick(rng))]);
      }
      std::sort(ids.begin(), ids.begin() + k);
      for (int64_t j = 0; j < k; ++j) {
        out.push_back(ids[static_cast<size_t>(j)]);
        used[static_cast<size_t>(ids[static_cast<size_t>(j)])] = true;
      }
    }
    distinct += static_cast<double>(std::count(used.begin(), used.end(), true));
  }
  return distinct / kRouteSets;
}

} // namespace

Result<GroupedExpertTiming> CudaMeasurer::time_grouped_experts(const GroupedExpertShape& s) {
  const int64_t routes = s.n_tokens * s.n_expert_used;
  if (s.n_tokens <= 0 || s.n_expert_used <= 0 || s.n_expert_used > s.n_expert || s.rows <= 0 ||
      s.cols <= 0 || routes > cuda::kernels::kMaxGroupedRoutes)
    return invalid_argument("grouped expert cell: " + std::to_string(s.n_tokens) + " tokens x " +
                            std::to_string(s.n_expert_used) + " of " + std::to_string(s.n_expert) +
                            " experts of " + std::to_string(s.rows) + " x " +
                            std::to_string(s.cols));
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(s.type, s.cols));
  const uint64_t matrix = static_cast<uint64_t>(s.rows) * row_bytes;
  const uint64_t stride = aligned256(matrix);
  const int mats = s.fused_gate_up ? 2 : 1;
  const uint64_t w_bytes = stride * static_cast<uint64_t>(s.n_expert) * mats;
  const uint64_t vram = device_->properties().totalGlobalMem;
  if (w_bytes > std::min(kMaxGroupedBytes, vram / 2))
    return Status(StatusCode::kOutOfMemory,
                  "grouped expert cell: " + std::to_string(w_bytes) + " bytes of experts");
  const int64_t x_rows = s.fused_gate_up ? s.n_tokens : routes;
  const uint64_t x_off = w_bytes;
  const uint64_t y_off = x_off + aligned256(static_cast<uint64_t>(x_rows * s.cols) * 4);
  const uint64_t r_off = y_off + aligned256(static_cast<uint64_t>(routes * s.rows) * 4);
  const uint64_t total = r_off + static_cast<uint64_t>(kRouteSets * routes) * 4;
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(total));
  const std::vector<int64_t> key = {1,      static_cast<int64_t>(s.type), s.n_tokens, s.n_expert,
                                    s.n_expert_used, s.rows, s.cols, s.fused_gate_up};
  if (filled_ != key) { // the suite calls a cell again and again: fill it once
    filled_.clear();    // time_matmul's weights are overwritten
    // Expert 0 filled, then copied into the others by doubling.
    PSHARD_RETURN_IF_ERROR(fill_matrix(base, s.type, s.rows, s.cols));
    const uint64_t n_mats = static_cast<uint64_t>(s.n_expert) * mats;
    for (uint64_t done = 1; done < n_mats; done *= 2)
      PSHARD_CUDA_RETURN_IF_ERROR(cudaMemcpy(base + done * stride, base,
                                             std::min(done, n_mats - done) * stride,
                                             cudaMemcpyDeviceToDevice));
    PSHARD_CUDA_RETURN_IF_ERROR(
        cudaMemset(base + x_off, 0, static_cast<size_t>(x_rows * s.cols) * 4));
    std::vector<int32_t> host_routes;
    grouped_distinct_ = draw_routes(s.n_tokens, s.n_expert_used, s.n_expert, host_routes);
    PSHARD_CUDA_RETURN_IF_ERROR(cudaMemcpy(base + r_off, host_routes.data(),
                                           host_routes.size() * 4, cudaMemcpyHostToDevice));
    PSHARD_RETURN_IF_ERROR(settle_fills());
    filled_ = key;
  }
  const double distinct = grouped_distinct_;

  const cuda::kernels::ExpertAddress gate{nullptr, base, stride};
  const cuda::kernels::ExpertAddress up{nullptr, base + stride * s.n_expert, stride};
  auto* x = reinterpret_cast<const float*>(base + x_off);
  auto* y = reinterpret_cast<float*>(base + y_off);
  auto* all_routes = reinterpret_cast<const int32_t*>(base + r_off);
  cudaStream_t st = device_->stream(Queue::kCompute);
  cudaError_t launch = cudaSuccess;
  int64_t set = 0;
  PSHARD_ASSIGN_OR_RETURN(
      double seconds, time_compute([&] {
        const int32_t* ex = all_routes + (set++ % kRouteSets) * routes;
        const cudaError_t e =
            s.fused_gate_up
                ? cuda::kernels::moe_gate_up(s.type, gate, up, ex, s.n_expert_used, row_bytes,
                                             s.rows, s.cols, x, routes, {}, y, st)
                : cuda::kernels::moe_grouped_matvec(s.type, gate, ex, 1, row_bytes, s.rows, s.cols,
                                                    x, routes, nullptr, y, st);
        if (e != cudaSuccess)
          launch = e;
      }));
  PSHARD_CUDA_RETURN_IF_ERROR(launch);
  GroupedExpertTiming t;
  t.seconds = seconds;
  t.distinct_experts = static_cast<int64_t>(distinct + 0.5);
  return t;
}

// What a replayed pass costs per kernel, paid the way the executor pays it: each pass is
// recorded again through Device::begin_graph / end_graph (the stream captured, the
// key's executable updated from the new capture, then launched: cuda_graphs.h), because
// the kernels take the pass's position as launch arguments. A burst of kGraphBurst tiny
// kernels is recorded and replayed kGraphReplays times back to back under one key,
// timed by the host clock over all of them, so capture, update and launch are in the
// figure, not only the replay. (It used to time one capture replayed many times: the
// replay alone, which the runtime never does, so the estimator — which prices decode
// passes of resident plans at this figure — could be told a pass costs less than the
// runtime can make it.)
Result<double> CudaMeasurer::time_graph_launch_overhead() {
  PSHARD_ASSIGN_OR_RETURN(uint8_t * base, scratch(256));
  filled_.clear(); // the kernels write the scratch's first floats
  auto* y = reinterpret_cast<float*>(base);
  device_->compute().add(y, y, 1); // warm: the first launch loads the module
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  constexpr uint64_t kKey = 0x9a7f'c0de'0000'0001ull; // no plan uses it: the measurer's own
  auto replay = [&]() -> Status {
    if (!device_->begin_graph(kKey, 1))
      return unsupported("CUDA graphs are off (PSHARD_CUDA_GRAPHS=0) or a capture could not start");
    for (int i = 0; i < kGraphBurst; ++i)
      device_->compute().add(y, y, 1);
    if (!device_->end_graph(/*replay=*/true)) {
      PSHARD_RETURN_IF_ERROR(device_->synchronize()); // the capture's own failure, if any
      return internal_error("a recorded burst of kernels did not launch as a CUDA graph");
    }
    return Status::ok_status();
  };
  PSHARD_RETURN_IF_ERROR(replay()); // warm: instantiates the key's executable
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  const auto t0 = std::chrono::steady_clock::now();
  for (int r = 0; r < kGraphReplays; ++r)
    PSHARD_RETURN_IF_ERROR(replay());
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return s / (kGraphReplays * kGraphBurst);
}

} // namespace pshard
