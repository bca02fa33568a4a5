// Hand-made machine: one figure per quantity. CPU throughput scales linearly with the
// thread count up to the configured threads (a simple, predictable model for tests).
#include "pshard/Planner/MachineModel.h"

#include <algorithm>

namespace pshard::planner {

MachineSummary FixedMachineModel::summary() const {
  MachineSummary s;
  s.name = p_.name;
  s.cpu = "fixed";
  s.gpu = p_.has_gpu ? "fixed" : "";
  s.vram_bytes = vram_bytes();
  s.cpu_threads = static_cast<uint32_t>(std::max(p_.threads, 1));
  return s;
}

double FixedMachineModel::cpu_scale(int threads, Load load) const {
  const int max_threads = std::max(p_.threads, 1);
  const double share =
      static_cast<double>(std::clamp(threads, 1, max_threads)) / static_cast<double>(max_threads);
  return share * (load == Load::kUnderLoad ? p_.cpu_load_factor : 1.0);
}

double FixedMachineModel::cpu_matmul_flops(TensorType, int64_t, uint64_t, int threads, Load load,
                                           int64_t) const {
  return p_.cpu_flops * cpu_scale(threads, load);
}

double FixedMachineModel::cpu_attention_flops(int64_t, int64_t, int threads, Load load) const {
  return p_.cpu_flops * cpu_scale(threads, load);
}

double FixedMachineModel::cpu_read_bandwidth(int, Load load) const {
  // Memory bandwidth saturates with few threads; only load changes it.
  return p_.cpu_bandwidth * (load == Load::kUnderLoad ? p_.cpu_load_factor : 1.0);
}

double FixedMachineModel::h2d_seconds(uint64_t bytes, Load load) const {
  const double bw = p_.h2d_bandwidth * (load == Load::kUnderLoad ? p_.copy_load_factor : 1.0);
  return p_.copy_latency_s + static_cast<double>(bytes) / bw;
}

double FixedMachineModel::d2h_seconds(uint64_t bytes, Load load) const {
  const double bw = p_.d2h_bandwidth * (load == Load::kUnderLoad ? p_.copy_load_factor : 1.0);
  return p_.copy_latency_s + static_cast<double>(bytes) / bw;
}

} // namespace pshard::planner
