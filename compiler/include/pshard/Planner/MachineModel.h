// What the estimator asks of a machine: achieved throughputs and fixed costs. An
// abstract interface so that the estimator can be tested against hand-made numbers
// (FixedMachineModel) and run in production against a measured profile
// (ProfileMachineModel, over runtime/profile's ProfileLookup).
//
//   PSHARD_ASSIGN_OR_RETURN(Profile profile, Profile::load_file("laptop.pshprof"));
//   PSHARD_ASSIGN_OR_RETURN(auto machine, planner::ProfileMachineModel::create(profile));
//   double f = machine->cpu_matmul_flops(TensorType::kQ4_0, 1, 64 << 20, 8, Load::kUnderLoad, 4096);
//
// All rates are positive and finite (an implementation clamps what its source lacks),
// so the estimator never divides by zero. Units: FLOP/s, bytes/s, seconds, bytes.
#pragma once

#include "runtime/core/status.h"
#include "runtime/profile/profile.h"
#include "runtime/profile/profile_lookup.h"
#include "runtime/tensor/tensor_type.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

namespace pshard::planner {

// What a schedule artifact records about the machine it was planned for.
struct MachineSummary {
  std::string name;        // "laptop-rtx4060-8gb"
  std::string cpu;         // CPU model
  std::string gpu;         // GPU name, or "" without a GPU
  uint64_t vram_bytes = 0;
  uint64_t ram_bytes = 0;
  uint32_t cpu_threads = 0; // logical CPUs
  uint64_t profile_fingerprint = 0; // Profile::fingerprint(); 0 for a hand-made model
};

class MachineModel {
public:
  virtual ~MachineModel() = default;

  virtual MachineSummary summary() const = 0;
  virtual bool has_gpu() const = 0;
  virtual uint64_t vram_bytes() const = 0;
  virtual int default_threads() const = 0;

  // CPU: achieved FLOP/s of a matmul over a `matrix_bytes` matrix of `type` with rows of
  // `cols` values (0: unknown), of attention, and the streaming read bandwidth.
  // kUnderLoad: while host->device copies run.
  virtual double cpu_matmul_flops(TensorType type, int64_t n_tokens, uint64_t matrix_bytes,
                                  int threads, Load load, int64_t cols) const = 0;
  virtual double cpu_attention_flops(int64_t ctx, int64_t n_tokens, int threads,
                                     Load load) const = 0;
  virtual double cpu_read_bandwidth(int threads, Load load) const = 0;
  // Fixed cost of one sub-layer on the CPU (thread-pool dispatch, barriers).
  virtual double cpu_overhead_s() const = 0;

  // GPU (only called when has_gpu()).
  virtual double gpu_matmul_flops(TensorType type, int64_t n_tokens, uint64_t matrix_bytes,
                                  int64_t cols) const = 0;
  virtual double gpu_attention_flops(int64_t ctx, int64_t n_tokens) const = 0;
  virtual double gpu_read_bandwidth() const = 0;
  virtual double gpu_launch_overhead_s() const = 0; // per kernel
  // Grouped MoE products (schema 1.3 cells: every routed expert of a pass in ONE launch,
  // gate and up fused, or down): bytes/s of one launch reading `bytes` (distinct experts ×
  // matrix bytes, × 2 when fused) with `tokens_per_expert` tokens per routed expert, the
  // launch included. Without them (has_gpu_grouped_experts() false: older profiles, the
  // emulated GPU) the estimator prices experts one launch per matrix, as before.
  virtual bool has_gpu_grouped_experts() const = 0;
  virtual double gpu_grouped_expert_bytes_per_s(TensorType type, bool fused_gate_up,
                                                double tokens_per_expert, double bytes) const = 0;
  // Per kernel when a device-only pass is replayed as one CUDA graph; without it
  // (has_gpu_graphs() false) every kernel costs gpu_launch_overhead_s().
  virtual bool has_gpu_graphs() const = 0;
  virtual double gpu_graph_launch_overhead_s() const = 0;
  // Device scratch the GPU backend's kernels need besides a plan's buffers (CUDA's
  // cuBLASLt workspace and staging): every GPU plan reserves it in its workspace
  // buffer, inside the budget. 0: the backend needs none (the emulated GPU).
  virtual uint64_t kernel_workspace_bytes() const = 0;

  // Seconds for one host->device / device->host copy of `bytes` (latency included) from
  // pinned memory. kUnderLoad: while the CPU computes.
  virtual double h2d_seconds(uint64_t bytes, Load load) const = 0;
  virtual double d2h_seconds(uint64_t bytes, Load load) const = 0;

  // How many times slower (>= 1) the CPU's matmuls over `matrix_bytes` of `type` run while
  // the device computes, and the device's while the CPU's `threads` compute: both sides
  // of a split MoE block at once (schema 1.4 figures; 1 where the machine has none).
  virtual double cpu_beside_device_slowdown(TensorType type, int64_t n_tokens,
                                            uint64_t matrix_bytes, int threads) const = 0;
  virtual double device_beside_cpu_slowdown(TensorType type, int64_t n_tokens,
                                            uint64_t matrix_bytes) const = 0;
};

// Hand-made constants: one figure per quantity, whatever the type or size. For tests and
// for what-if planning ("a machine with twice the PCIe bandwidth").
struct FixedMachineParams {
  std::string name = "fixed";
  bool has_gpu = true;
  uint64_t vram_bytes = 8ull << 30;
  int threads = 8;
  double cpu_flops = 200e9;           // at `threads` threads; scales linearly below
  double cpu_bandwidth = 50e9;
  double cpu_overhead_s = 0;
  double cpu_load_factor = 1.0;       // CPU throughput multiplier under load (≤ 1)
  double gpu_flops = 20e12;
  double gpu_bandwidth = 250e9;
  double gpu_launch_s = 0;
  double gpu_grouped_bandwidth = 0;   // grouped MoE products, launch included; 0: none
  double gpu_graph_launch_s = -1;     // per kernel inside a CUDA graph; < 0: no graphs
  double h2d_bandwidth = 12e9;
  double d2h_bandwidth = 12e9;
  double copy_latency_s = 0;
  double copy_load_factor = 1.0;      // copy bandwidth multiplier under load (≤ 1)
  uint64_t kernel_workspace_bytes = 0; // the backend's fixed kernel scratch
  double cpu_beside_device = 1.0;      // slowdowns while the other side computes (>= 1)
  double device_beside_cpu = 1.0;
};

class FixedMachineModel final : public MachineModel {
public:
  explicit FixedMachineModel(FixedMachineParams p) : p_(std::move(p)) {}
  const FixedMachineParams& params() const { return p_; }

  MachineSummary summary() const override;
  bool has_gpu() const override { return p_.has_gpu; }
  uint64_t vram_bytes() const override { return p_.has_gpu ? p_.vram_bytes : 0; }
  int default_threads() const override { return p_.threads; }
  double cpu_matmul_flops(TensorType, int64_t, uint64_t, int threads, Load,
                          int64_t) const override;
  double cpu_attention_flops(int64_t, int64_t, int threads, Load) const override;
  double cpu_read_bandwidth(int threads, Load) const override;
  double cpu_overhead_s() const override { return p_.cpu_overhead_s; }
  double gpu_matmul_flops(TensorType, int64_t, uint64_t, int64_t) const override {
    return p_.gpu_flops;
  }
  double gpu_attention_flops(int64_t, int64_t) const override { return p_.gpu_flops; }
  double gpu_read_bandwidth() const override { return p_.gpu_bandwidth; }
  double gpu_launch_overhead_s() const override { return p_.gpu_launch_s; }
  bool has_gpu_grouped_experts() const override { return p_.gpu_grouped_bandwidth > 0; }
  double gpu_grouped_expert_bytes_per_s(TensorType, bool, double, double) const override {
    return has_gpu_grouped_experts() ? p_.gpu_grouped_bandwidth : p_.gpu_bandwidth;
  }
  bool has_gpu_graphs() const override { return p_.gpu_graph_launch_s >= 0; }
  double gpu_graph_launch_overhead_s() const override {
    return has_gpu_graphs() ? p_.gpu_graph_launch_s : p_.gpu_launch_s;
  }
  uint64_t kernel_workspace_bytes() const override {
    return p_.has_gpu ? p_.kernel_workspace_bytes : 0;
  }
  double h2d_seconds(uint64_t bytes, Load load) const override;
  double d2h_seconds(uint64_t bytes, Load load) const override;
  double cpu_beside_device_slowdown(TensorType, int64_t, uint64_t, int) const override {
    return std::max(p_.cpu_beside_device, 1.0);
  }
  double device_beside_cpu_slowdown(TensorType, int64_t, uint64_t) const override {
    return std::max(p_.device_beside_cpu, 1.0);
  }

private:
  double cpu_scale(int threads, Load load) const;
  FixedMachineParams p_;
};

// Over a measured or reference profile. create() fails when the profile lacks a table the
// estimator needs (naming it); GPU tables are only required when the profile has a GPU.
// The Profile must outlive the model.
class ProfileMachineModel final : public MachineModel {
public:
  static Result<std::unique_ptr<ProfileMachineModel>> create(const Profile& profile);

  MachineSummary summary() const override { return summary_; }
  bool has_gpu() const override { return lookup_.has_gpu(); }
  uint64_t vram_bytes() const override { return summary_.vram_bytes; }
  int default_threads() const override { return default_threads_; }
  double cpu_matmul_flops(TensorType type, int64_t n_tokens, uint64_t matrix_bytes, int threads,
                          Load load, int64_t cols) const override;
  double cpu_attention_flops(int64_t ctx, int64_t n_tokens, int threads, Load load) const override;
  double cpu_read_bandwidth(int threads, Load load) const override;
  double cpu_overhead_s() const override { return 5e-6; }
  double gpu_matmul_flops(TensorType type, int64_t n_tokens, uint64_t matrix_bytes,
                          int64_t cols) const override;
  double gpu_attention_flops(int64_t ctx, int64_t n_tokens) const override;
  double gpu_read_bandwidth() const override;
  double gpu_launch_overhead_s() const override;
  bool has_gpu_grouped_experts() const override { return lookup_.has_gpu_grouped_experts(); }
  double gpu_grouped_expert_bytes_per_s(TensorType type, bool fused_gate_up,
                                        double tokens_per_expert, double bytes) const override;
  bool has_gpu_graphs() const override { return lookup_.gpu_graph_launch_overhead_s().ok(); }
  double gpu_graph_launch_overhead_s() const override;
  uint64_t kernel_workspace_bytes() const override { return kernel_workspace_bytes_; }
  double h2d_seconds(uint64_t bytes, Load load) const override;
  double d2h_seconds(uint64_t bytes, Load load) const override;
  double cpu_beside_device_slowdown(TensorType type, int64_t n_tokens, uint64_t matrix_bytes,
                                    int threads) const override;
  double device_beside_cpu_slowdown(TensorType type, int64_t n_tokens,
                                    uint64_t matrix_bytes) const override;

private:
  explicit ProfileMachineModel(const Profile& profile) : lookup_(profile) {}
  ProfileLookup lookup_;
  MachineSummary summary_;
  int default_threads_ = 1;
  uint64_t kernel_workspace_bytes_ = 0;
};

} // namespace pshard::planner
