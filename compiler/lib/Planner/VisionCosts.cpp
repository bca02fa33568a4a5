// The vision sub-layers' roofline at N patches, in the estimator's SubLayerCosts form so
// that the language model's event simulation times the vision phase too.
#include "VisionInternal.h"

#include <algorithm>
#include <cmath>

namespace pshard::planner {
namespace {

double roofline(double flops, double flops_per_s, double bytes, double bytes_per_s) {
  return std::max(flops / flops_per_s, bytes / bytes_per_s);
}

// Kernel launches on the GPU: norm, matmuls, bias adds and activation, residual add.
int kernels_of(const VisionSubLayerInfo& s) {
  switch (s.id.kind) {
  case VisionSubLayerKind::kPatchEmbed:
    return 2;
  case VisionSubLayerKind::kAttention:
    return 9;
  case VisionSubLayerKind::kFfn:
    return 6;
  case VisionSubLayerKind::kMerger:
    return 5;
  }
  return 1;
}

} // namespace

SubLayerCosts vision_costs(const VisionGraph& g, const MachineModel& machine, int64_t patches,
                           int64_t tile, int threads) {
  SubLayerCosts costs;
  costs.tier = patches;
  const bool gpu = machine.has_gpu();
  const double cpu_bw = machine.cpu_read_bandwidth(threads, Load::kIdle);
  const double cpu_bw_loaded = machine.cpu_read_bandwidth(threads, Load::kUnderLoad);
  const double gpu_bw = gpu ? machine.gpu_read_bandwidth() : 1.0;
  for (const VisionSubLayerInfo& s : g.sublayers) {
    SubLayerCost c;
    for (const VisionMatmul& m : s.matmuls) {
      const int64_t rows = std::max<int64_t>(1, patches / m.rows_divisor);
      const double flops = 2.0 * static_cast<double>(rows) * static_cast<double>(m.rows) *
                           static_cast<double>(m.cols);
      const auto bytes = static_cast<double>(m.matrix_bytes);
      c.cpu_s += roofline(
          flops,
          machine.cpu_matmul_flops(m.type, rows, m.matrix_bytes, threads, Load::kIdle, m.cols),
          bytes, cpu_bw);
      c.cpu_loaded_s += roofline(
          flops,
          machine.cpu_matmul_flops(m.type, rows, m.matrix_bytes, threads, Load::kUnderLoad, m.cols),
          bytes, cpu_bw_loaded);
      if (gpu)
        c.gpu_s += roofline(flops, machine.gpu_matmul_flops(m.type, rows, m.matrix_bytes, m.cols),
                            bytes, gpu_bw);
    }
    if (s.id.kind == VisionSubLayerKind::kAttention) {
      const int64_t span = g.attention_span(s, patches);
      const double flops = 4.0 * static_cast<double>(patches) * static_cast<double>(span) *
                           static_cast<double>(g.hp.n_embd);
      const double kv_bytes = 2.0 * static_cast<double>(g.hidden_bytes(patches)); // K and V read
      c.cpu_s += roofline(flops, machine.cpu_attention_flops(span, patches, threads, Load::kIdle),
                          kv_bytes, cpu_bw);
      c.cpu_loaded_s +=
          roofline(flops, machine.cpu_attention_flops(span, patches, threads, Load::kUnderLoad),
                   kv_bytes, cpu_bw_loaded);
      if (gpu) {
        c.gpu_s += roofline(flops, machine.gpu_attention_flops(span, patches), kv_bytes, gpu_bw);
        // One launch per query block of the tiled kernel: small tiles cost launches.
        const int64_t t = tile > 0 ? tile : patches;
        c.gpu_s += machine.gpu_launch_overhead_s() * static_cast<double>((patches + t - 1) / t);
      }
    }
    c.cpu_s += machine.cpu_overhead_s();
    c.cpu_loaded_s += machine.cpu_overhead_s();
    if (gpu) {
      c.gpu_s += machine.gpu_launch_overhead_s() * kernels_of(s);
      c.stream_bytes = s.weight_bytes;
      c.slot_bytes = s.weight_bytes;
      c.copy_s = machine.h2d_seconds(s.weight_bytes, Load::kIdle);
      c.copy_loaded_s = machine.h2d_seconds(s.weight_bytes, Load::kUnderLoad);
    }
    costs.sublayers.push_back(c);
  }
  if (gpu) {
    const int64_t p = g.hp.patch_size;
    costs.h2d_tokens_s =
        machine.h2d_seconds(static_cast<uint64_t>(patches * 3 * p * p) * 4, Load::kIdle);
    costs.h2d_hidden_s = machine.h2d_seconds(g.hidden_bytes(patches), Load::kIdle);
    costs.d2h_hidden_s = machine.d2h_seconds(g.hidden_bytes(patches), Load::kIdle);
    const int64_t merged = patches / (g.hp.n_merge * g.hp.n_merge);
    costs.d2h_logits_s = // the image embeddings, back for the language model's prompt
        machine.d2h_seconds(static_cast<uint64_t>(merged * g.hp.projection_dim) * 4, Load::kIdle);
  }
  return costs;
}

} // namespace pshard::planner
