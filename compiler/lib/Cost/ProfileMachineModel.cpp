// The machine model over a profile. The estimator asks many questions per plan grid, so
// every answer is clamped to a positive finite figure here. A weight type the profile
// did not measure (an older profile, or a type added since) borrows the measured type
// nearest to it in bits per weight (Q6_K: Q8_0; Q4_K, IQ4_NL: Q4_0; Q2_K, Q3_K: Q4_0;
// BF16: F16), its FLOP/s scaled by the ratio of their bits per weight: a matrix of the
// same bytes then takes the same time, which is what a weight-streaming matmul (every
// decode) does; compute-bound prefill is then off by at most that ratio. The compiler
// must still plan a model whose exact type was not profiled. Grouped MoE cells (bytes/s)
// borrow the same way, unscaled: their figure is already per byte. Without any grouped
// cells or graph overhead (profiles before schema 1.3, the emulated GPU) the machine says
// so and the estimator prices as it did before them.
#include "pshard/Planner/MachineModel.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace pshard::planner {
namespace {

constexpr double kTiny = 1e-3; // a floor so that no rate is 0 (1 mFLOP/s or 1 mB/s)

double positive(const Result<double>& r, double fallback) {
  if (!r.ok() || !std::isfinite(*r) || *r <= 0)
    return fallback;
  return *r;
}

const TensorType kFallbackOrder[] = {TensorType::kF16, TensorType::kQ8_0, TensorType::kQ4_0,
                                     TensorType::kF32, TensorType::kBF16};

// Every other supported type, nearest in bits per weight first (ties: fewer bits).
std::vector<TensorType> stand_ins(TensorType type) {
  size_t n = 0;
  const TensorType* all = supported_tensor_types(&n);
  std::vector<TensorType> others;
  for (size_t i = 0; i < n; ++i)
    if (all[i] != type)
      others.push_back(all[i]);
  const double bits = tensor_type_bits_per_weight(type);
  std::stable_sort(others.begin(), others.end(), [bits](TensorType a, TensorType b) {
    const double da = std::fabs(tensor_type_bits_per_weight(a) - bits);
    const double db = std::fabs(tensor_type_bits_per_weight(b) - bits);
    if (da != db)
      return da < db;
    return tensor_type_bits_per_weight(a) < tensor_type_bits_per_weight(b);
  });
  return others;
}

// `per_weight`: the answer is per weight (FLOP/s), so a stand-in's is scaled by the bits
// ratio to take the same time over the same bytes; a bytes/s answer already does.
template <typename Ask> double by_type(TensorType type, Ask ask, bool per_weight = true) {
  Result<double> r = ask(type);
  if (r.ok() && *r > 0)
    return *r;
  for (TensorType other : stand_ins(type)) {
    r = ask(other);
    if (r.ok() && *r > 0)
      return per_weight ? *r * tensor_type_bits_per_weight(other) / tensor_type_bits_per_weight(type)
                        : *r;
  }
  return kTiny;
}

} // namespace

Result<std::unique_ptr<ProfileMachineModel>> ProfileMachineModel::create(const Profile& profile) {
  std::unique_ptr<ProfileMachineModel> m(new ProfileMachineModel(profile));
  const fb::ProfileT& p = profile.data();
  // The estimator cannot plan without these; name the first missing one.
  PSHARD_RETURN_IF_ERROR(m->lookup_.cpu_read_bandwidth(1).status().with_context(
      "the profile cannot drive the planner"));
  bool any_matmul = false;
  for (TensorType t : kFallbackOrder)
    any_matmul = any_matmul || m->lookup_.cpu_matmul_flops(t, 1, 1 << 20, 1).ok();
  if (!any_matmul)
    return not_found("the profile has no CPU matmul measurements; re-run pshard-profile");
  if (m->lookup_.has_gpu()) {
    PSHARD_RETURN_IF_ERROR(m->lookup_.gpu_read_bandwidth().status().with_context(
        "the profile cannot drive the planner"));
    PSHARD_RETURN_IF_ERROR(
        m->lookup_.transfer_seconds(Direction::kHostToDevice, 1 << 20, HostMemoryKind::kPinned)
            .status()
            .with_context("the profile cannot drive the planner"));
  }

  MachineSummary& s = m->summary_;
  s.profile_fingerprint = profile.fingerprint();
  if (p.machine) {
    s.name = p.machine->name;
    if (p.machine->cpu) {
      s.cpu = p.machine->cpu->model;
      s.ram_bytes = p.machine->cpu->ram_bytes;
      s.cpu_threads = p.machine->cpu->logical_cpus;
    }
    if (p.machine->gpu && m->lookup_.has_gpu()) {
      s.gpu = p.machine->gpu->name;
      s.vram_bytes = p.machine->gpu->vram_bytes;
      m->kernel_workspace_bytes_ = p.machine->gpu->kernel_workspace_bytes;
    }
  }
  // Plan for the most threads the profile measured: beyond that we would extrapolate.
  uint32_t threads = 0;
  if (p.cpu)
    for (uint32_t t : p.cpu->thread_counts)
      threads = std::max(threads, t);
  if (threads == 0)
    threads = s.cpu_threads;
  m->default_threads_ = static_cast<int>(std::max<uint32_t>(threads, 1));
  return m;
}

double ProfileMachineModel::cpu_matmul_flops(TensorType type, int64_t n_tokens,
                                             uint64_t matrix_bytes, int threads, Load load,
                                             int64_t cols) const {
  return by_type(type, [&](TensorType t) {
    return lookup_.cpu_matmul_flops(t, n_tokens, matrix_bytes, threads, load, cols);
  });
}

double ProfileMachineModel::cpu_attention_flops(int64_t ctx, int64_t n_tokens, int threads,
                                                Load load) const {
  const Result<double> r = lookup_.cpu_attention_flops(ctx, n_tokens, threads, load);
  // Without attention cells, treat attention as an F32 matmul of the same work.
  return positive(r, cpu_matmul_flops(TensorType::kF32, n_tokens, 16 << 20, threads, load, 0));
}

double ProfileMachineModel::cpu_read_bandwidth(int threads, Load load) const {
  return positive(lookup_.cpu_read_bandwidth(threads, load), kTiny);
}

double ProfileMachineModel::gpu_matmul_flops(TensorType type, int64_t n_tokens,
                                             uint64_t matrix_bytes, int64_t cols) const {
  return by_type(type, [&](TensorType t) {
    return lookup_.gpu_matmul_flops(t, n_tokens, matrix_bytes, cols);
  });
}

double ProfileMachineModel::gpu_attention_flops(int64_t ctx, int64_t n_tokens) const {
  const Result<double> r = lookup_.gpu_attention_flops(ctx, n_tokens);
  return positive(r, gpu_matmul_flops(TensorType::kF16, n_tokens, 16 << 20, 0));
}

double ProfileMachineModel::gpu_read_bandwidth() const {
  return positive(lookup_.gpu_read_bandwidth(), kTiny);
}

double ProfileMachineModel::gpu_launch_overhead_s() const {
  const Result<double> r = lookup_.gpu_launch_overhead_s();
  return r.ok() && std::isfinite(*r) && *r >= 0 ? *r : 5e-6;
}

double ProfileMachineModel::gpu_grouped_expert_bytes_per_s(TensorType type, bool fused_gate_up,
                                                           double tokens_per_expert,
                                                           double bytes) const {
  return by_type(
      type,
      [&](TensorType t) {
        return lookup_.gpu_grouped_expert_bytes_per_s(t, fused_gate_up, tokens_per_expert, bytes);
      },
      /*per_weight=*/false);
}

double ProfileMachineModel::gpu_graph_launch_overhead_s() const {
  const Result<double> r = lookup_.gpu_graph_launch_overhead_s();
  return r.ok() && std::isfinite(*r) ? *r : gpu_launch_overhead_s();
}

namespace {
// Idle over beside-compute figures of `type`, or of the nearest type in bits that has
// them (the ratio, not the rate, is borrowed): 1 without any (older profiles), never below
// 1 (the other side's work never speeds this one up; a faster cell is noise).
template <typename Ask> double beside_slowdown(TensorType type, Ask ask) {
  std::vector<TensorType> types = stand_ins(type);
  types.insert(types.begin(), type);
  for (TensorType t : types) {
    const Result<double> beside = ask(t, Load::kBesideCompute);
    if (!beside.ok())
      continue;
    const Result<double> idle = ask(t, Load::kIdle);
    return idle.ok() && *idle > 0 && *beside > 0 ? std::max(*idle / *beside, 1.0) : 1.0;
  }
  return 1.0;
}
} // namespace

double ProfileMachineModel::cpu_beside_device_slowdown(TensorType type, int64_t n_tokens,
                                                       uint64_t matrix_bytes, int threads) const {
  return beside_slowdown(type, [&](TensorType t, Load load) {
    return lookup_.cpu_matmul_flops(t, n_tokens, matrix_bytes, threads, load);
  });
}

double ProfileMachineModel::device_beside_cpu_slowdown(TensorType type, int64_t n_tokens,
                                                       uint64_t matrix_bytes) const {
  return beside_slowdown(type, [&](TensorType t, Load load) {
    return lookup_.gpu_matmul_flops(t, n_tokens, matrix_bytes, 0, load);
  });
}

double ProfileMachineModel::h2d_seconds(uint64_t bytes, Load load) const {
  const Result<double> r =
      lookup_.transfer_seconds(Direction::kHostToDevice, bytes, HostMemoryKind::kPinned, load);
  return r.ok() && std::isfinite(*r) && *r >= 0 ? *r : static_cast<double>(bytes) / kTiny;
}

double ProfileMachineModel::d2h_seconds(uint64_t bytes, Load load) const {
  const Result<double> r =
      lookup_.transfer_seconds(Direction::kDeviceToHost, bytes, HostMemoryKind::kPinned, load);
  return r.ok() && std::isfinite(*r) && *r >= 0 ? *r : h2d_seconds(bytes, load);
}

} // namespace pshard::planner
