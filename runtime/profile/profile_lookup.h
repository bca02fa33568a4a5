// Questions the compiler's estimator asks a profile, answered by interpolating between
// measured buckets (see interpolate.h): log-space on token counts and sizes, linear on
// thread counts, clamped outside what was measured.
//
//   ProfileLookup look(profile);
//   Result<double> f = look.cpu_matmul_flops(TensorType::kQ4_0, /*n_tokens=*/1,
//                                            /*matrix_bytes=*/64 << 20, /*threads=*/8);
//   Result<double> bw = look.transfer_bandwidth(Direction::kHostToDevice, 32 << 20,
//                                               HostMemoryKind::kPinned, Load::kUnderLoad);
//   Result<double> g = look.gpu_grouped_expert_bytes_per_s(TensorType::kQ4_0, true,
//                                                          /*tokens_per_expert=*/1, 14 << 20);
//   if (!look.has_gpu()) ...   // gpu_* return kNotFound "the profile has no GPU: <why>"
//
// Under load (Load::kUnderLoad) a figure is the idle figure times the loaded/idle ratio
// interpolated over the cells measured under load, so a profile may measure under load
// on a coarser grid than idle; beside compute (Load::kBesideCompute: the other processor
// computing too, schema 1.4) likewise, for the CPU's and the device's matmuls. A query
// the profile has no cells for returns kNotFound naming what is missing.
#pragma once

#include "runtime/core/status.h"
#include "runtime/profile/interpolate.h"
#include "runtime/profile/profile.h"
#include "runtime/tensor/tensor_type.h"

#include <map>
#include <string>
#include <vector>

namespace pshard {

// kUnderLoad: while host->device copies run (for copies: while the CPU computes);
// kBesideCompute: while the other processor computes (matmuls only).
enum class Load { kIdle, kUnderLoad, kBesideCompute };
enum class Direction { kHostToDevice, kDeviceToHost };
enum class HostMemoryKind { kPinned, kPageable };

class ProfileLookup {
public:
  explicit ProfileLookup(const Profile& profile);

  bool has_gpu() const { return has_gpu_; }
  const std::string& gpu_status() const { return gpu_status_; }

  // Achieved FLOP/s of runtime/kernels matmul on `matrix_bytes` of `type` weights with
  // rows of `cols` values (0: the profile's reference row length). Most cells are
  // measured at one row length; cells at others give a ratio over (tokens, row length)
  // that scales the answer, since short rows cost more per byte (per-row reductions,
  // prefetch streams restarting).
  Result<double> cpu_matmul_flops(TensorType type, int64_t n_tokens, uint64_t matrix_bytes,
                                  int threads, Load load = Load::kIdle, int64_t cols = 0) const;
  // Achieved FLOP/s of one layer's attention over ctx_len cached positions.
  Result<double> cpu_attention_flops(int64_t ctx_len, int64_t n_tokens, int threads,
                                     Load load = Load::kIdle) const;
  // Bytes/s streaming memory much larger than the last-level cache.
  Result<double> cpu_read_bandwidth(int threads, Load load = Load::kIdle) const;
  // Bytes/s of a host memcpy (the emulated GPU's copy engine ceiling).
  Result<double> host_copy_bandwidth(Load load = Load::kIdle) const;

  Result<double> gpu_matmul_flops(TensorType type, int64_t n_tokens, uint64_t matrix_bytes,
                                  int64_t cols = 0, Load load = Load::kIdle) const;
  Result<double> gpu_attention_flops(int64_t ctx_len, int64_t n_tokens) const;
  Result<double> gpu_read_bandwidth() const;
  Result<double> gpu_launch_overhead_s() const;
  // Bytes/s of one grouped MoE product (schema 1.3: every routed expert of a pass in one
  // launch, its launch included): `fused_gate_up` the gate and up matrices of each route
  // in one kernel, else the down matrix. `tokens_per_expert` = pass tokens × experts
  // per token / distinct experts touched; `bytes` = what the launch reads (distinct
  // experts × matrix bytes, × 2 when fused). kNotFound without cells for this type.
  Result<double> gpu_grouped_expert_bytes_per_s(TensorType type, bool fused_gate_up,
                                                double tokens_per_expert, double bytes) const;
  // Whether the profile has any grouped cells (of any type): without them the estimator
  // prices experts one launch per matrix, as before schema 1.3.
  bool has_gpu_grouped_experts() const { return has_grouped_; }
  // Per kernel replayed inside a CUDA graph (schema 1.3); kNotFound when absent.
  Result<double> gpu_graph_launch_overhead_s() const;

  // Effective bandwidth of one transfer of `bytes` (latency included).
  Result<double> transfer_bandwidth(Direction direction, uint64_t bytes, HostMemoryKind memory,
                                    Load load = Load::kIdle) const;
  // Seconds for one transfer of `bytes`: bytes / transfer_bandwidth(bytes).
  Result<double> transfer_seconds(Direction direction, uint64_t bytes, HostMemoryKind memory,
                                  Load load = Load::kIdle) const;
  // Time of the smallest measured transfer: the fixed cost of any copy.
  Result<double> transfer_latency_s(Direction direction, HostMemoryKind memory) const;

  // One interpolation table: idle cells plus loaded/idle ratio cells on the same axes;
  // for matmuls also the ratio cells of other row lengths over (tokens, cols).
  struct Table {
    std::vector<AxisScale> scales;
    std::vector<GridCell> idle;
    std::vector<GridCell> load_ratio;
    std::vector<GridCell> beside_ratio; // beside compute / idle (schema 1.4)
    double reference_cols = 0;
    std::vector<GridCell> cols_ratio;
  };

private:
  Result<double> lookup(const std::string& key, const std::array<double, kMaxGridAxes>& at,
                        Load load, const std::string& what, int64_t cols = 0) const;
  Status gpu_missing() const;

  std::map<std::string, Table> tables_; // "cpu_matmul/q4_0", "transfer/h2d/pinned", …
  bool has_gpu_ = false;
  std::string gpu_status_;
  double gpu_read_bandwidth_ = 0;
  double gpu_launch_overhead_s_ = 0;
  double gpu_graph_launch_overhead_s_ = 0;
  bool has_grouped_ = false;
  std::map<std::string, double> transfer_latency_; // "h2d/pinned" → seconds
};

} // namespace pshard
