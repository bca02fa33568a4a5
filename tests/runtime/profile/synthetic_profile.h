// A small hand-made profile whose numbers make interpolation easy to check by hand.
//
// CPU q4_0 matmul at 1 MiB and 64 MiB, tokens 1 and 4, threads 1 and 2:
//   flops = base(size) * tokens * threads, base(1 MiB) = 10e9, base(64 MiB) = 4e9
// read bandwidth: 10 GB/s at 1 thread, 16 GB/s at 2.
// Under load: q4_0 64 MiB at 1 token, 1 and 2 threads, at 0.5 of idle.
// Transfers host->device pinned: 4 KiB in 10 us, 1 MiB at 20 GB/s, 64 MiB at 25 GB/s.
#pragma once

#include "schemas/profile_generated.h"

#include <memory>

namespace pshard::testing {

inline std::unique_ptr<fb::MatmulPointT>
matmul_cell(fb::WeightType type, uint32_t n, uint64_t bytes, uint32_t threads, double flops) {
  auto p = std::make_unique<fb::MatmulPointT>();
  p->weight_type = type;
  p->n_tokens = n;
  p->matrix_bytes = bytes;
  p->threads = threads;
  p->rows = 1;
  p->cols = 4096;
  p->flops_per_s = flops;
  p->seconds = 1;
  p->repetitions = 3;
  return p;
}

// One grouped MoE cell (schema 1.3): n tokens each routed to `used` of `n_expert` experts
// of `matrix_bytes`, touching `distinct`; bytes_per_s as given (0: from seconds).
inline std::unique_ptr<fb::GroupedExpertPointT>
grouped_cell(fb::WeightType type, bool fused, uint32_t n, uint32_t used, uint32_t distinct,
             uint64_t matrix_bytes, double bytes_per_s, double seconds = 0) {
  auto p = std::make_unique<fb::GroupedExpertPointT>();
  p->weight_type = type;
  p->fused_gate_up = fused;
  p->n_tokens = n;
  p->n_expert = 128;
  p->n_expert_used = used;
  p->distinct_experts = distinct;
  p->rows = 768;
  p->cols = 2048;
  p->matrix_bytes = matrix_bytes;
  p->bytes_per_s = bytes_per_s;
  p->seconds = seconds;
  p->repetitions = 3;
  return p;
}

inline fb::ProfileT synthetic_profile(bool with_gpu = false) {
  constexpr uint64_t kMiB = 1u << 20;
  fb::ProfileT p;
  p.machine = std::make_unique<fb::MachineT>();
  p.machine->name = "synthetic";
  p.machine->gpu_status = with_gpu ? "present" : "no GPU: synthetic test machine";
  p.machine->cpu = std::make_unique<fb::CpuInfoT>();
  p.machine->cpu->model = "Test CPU";
  p.machine->cpu->cores = 2;
  p.machine->cpu->source = fb::Provenance::FromSpecification;

  p.cpu = std::make_unique<fb::CpuMeasurementsT>();
  p.cpu->matmul_op = "test";
  for (uint64_t bytes : {kMiB, 64 * kMiB})
    for (uint32_t n : {1u, 4u})
      for (uint32_t t : {1u, 2u}) {
        const double base = bytes == kMiB ? 10e9 : 4e9;
        p.cpu->matmul.push_back(matmul_cell(fb::WeightType::Q4_0, n, bytes, t, base * n * t));
      }
  for (uint32_t t : {1u, 2u}) {
    auto bw = std::make_unique<fb::BandwidthPointT>();
    bw->threads = t;
    bw->buffer_bytes = 512 * kMiB;
    bw->bytes_per_s = t == 1 ? 10e9 : 16e9;
    p.cpu->read_bandwidth.push_back(std::move(bw));
  }
  p.under_load = std::make_unique<fb::UnderLoadT>();
  for (uint32_t t : {1u, 2u})
    p.under_load->cpu_matmul.push_back(
        matmul_cell(fb::WeightType::Q4_0, 1, 64 * kMiB, t, 0.5 * 4e9 * t));

  if (with_gpu) {
    p.machine->gpu = std::make_unique<fb::GpuInfoT>();
    p.machine->gpu->name = "Test GPU";
    p.gpu = std::make_unique<fb::GpuMeasurementsT>();
    p.gpu->matmul.push_back(matmul_cell(fb::WeightType::Q4_0, 1, 64 * kMiB, 0, 100e9));
    p.gpu->launch_overhead_s = 5e-6;
    p.gpu->read_bandwidth_bytes_per_s = 250e9;
    p.transfers = std::make_unique<fb::TransferMeasurementsT>();
    const std::pair<uint64_t, double> cells[] = {
        {4096, 4096 / 10e-6}, {kMiB, 20e9}, {64 * kMiB, 25e9}};
    for (const auto& [bytes, bw] : cells) {
      auto t = std::make_unique<fb::TransferPointT>();
      t->direction = fb::TransferDirection::HostToDevice;
      t->memory = fb::HostMemory::Pinned;
      t->bytes = bytes;
      t->bytes_per_s = bw;
      t->seconds = double(bytes) / bw;
      p.transfers->points.push_back(std::move(t));
    }
  }
  return p;
}

// Schema 1.4's cells on top: the CPU's q4_0 64 MiB, 1 token, at 0.8 of idle while the
// device computes (1 and 2 threads), the device's at 0.5 of idle while the CPU does.
inline fb::ProfileT beside_profile() {
  constexpr uint64_t kMiB = 1u << 20;
  fb::ProfileT p = synthetic_profile(true);
  for (uint32_t t : {1u, 2u})
    p.under_load->cpu_matmul_beside_device.push_back(
        matmul_cell(fb::WeightType::Q4_0, 1, 64 * kMiB, t, 0.8 * 4e9 * t));
  p.under_load->device_matmul_beside_cpu.push_back(
      matmul_cell(fb::WeightType::Q4_0, 1, 64 * kMiB, 0, 0.5 * 100e9));
  p.under_load->beside_description = "test";
  return p;
}

} // namespace pshard::testing
