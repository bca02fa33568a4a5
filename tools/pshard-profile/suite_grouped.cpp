// The grouped MoE cells of the device suite (schemas/profile.fbs's GroupedExpertPoint):
// for every weight type, token count and model of the grid, one fused gate+up launch
// (rows n_ff, cols n_embd, two matrices per route) and one down launch (rows n_embd,
// cols n_ff) — and the per-kernel overhead of a burst recorded and replayed as a CUDA
// graph the way the executor records a pass (cuda_measurer_moe.cpp).
// A device without them (kUnsupported: the emulated GPU) leaves the tables empty; a cell
// whose experts do not fit the device (kOutOfMemory) is left out.
#include "tools/pshard-profile/progress.h"
#include "tools/pshard-profile/suite.h"
#include "tools/pshard-profile/timing.h"

namespace pshard::profiling {
namespace {

std::unique_ptr<fb::GroupedExpertPointT> point_of(const GroupedExpertShape& s, uint64_t matrix,
                                                  int64_t distinct, const Timing& t) {
  auto p = std::make_unique<fb::GroupedExpertPointT>();
  p->weight_type = static_cast<fb::WeightType>(s.type);
  p->n_tokens = static_cast<uint32_t>(s.n_tokens);
  p->n_expert = static_cast<uint32_t>(s.n_expert);
  p->n_expert_used = static_cast<uint32_t>(s.n_expert_used);
  p->rows = static_cast<uint32_t>(s.rows);
  p->cols = static_cast<uint32_t>(s.cols);
  p->matrix_bytes = matrix;
  p->fused_gate_up = s.fused_gate_up;
  p->distinct_experts = static_cast<uint32_t>(distinct);
  p->seconds = t.seconds;
  p->bytes_per_s = static_cast<double>(distinct) * static_cast<double>(matrix) *
                   (s.fused_gate_up ? 2.0 : 1.0) / t.seconds;
  p->repetitions = t.repetitions;
  return p;
}

} // namespace

Status measure_grouped_experts(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                               double unit_s, fb::GpuMeasurementsT& gpu) {
  progress.step("gpu graph launch overhead");
  Result<Timing> graph = time_device([&] { return device.time_graph_launch_overhead(); }, unit_s);
  if (graph.ok())
    gpu.graph_launch_overhead_s = graph->seconds;
  else if (graph.status().code() != StatusCode::kUnsupported)
    return graph.status();
  progress.advance(1);

  const double cells =
      double(grid.types.size() * grid.grouped_tokens.size() * grid.grouped_models.size() * 2);
  double done = 0;
  for (TensorType type : grid.types)
    for (const GroupedExpertModel& m : grid.grouped_models)
      for (bool fused : {true, false})
        for (int64_t n : grid.grouped_tokens) {
          GroupedExpertShape s;
          s.type = type;
          s.n_tokens = n;
          s.n_expert = m.n_expert;
          s.n_expert_used = m.k;
          s.rows = fused ? m.n_ff : m.n_embd;
          s.cols = fused ? m.n_embd : m.n_ff;
          s.fused_gate_up = fused;
          progress.step(std::string("gpu grouped experts ") + tensor_type_name(type) + " " +
                        (fused ? "gate+up " : "down ") + std::to_string(s.rows) + "x" +
                        std::to_string(s.cols) + " e" + std::to_string(m.n_expert) + "k" +
                        std::to_string(m.k) + " n=" + std::to_string(n));
          int64_t distinct = 0;
          Result<Timing> t = time_device(
              [&]() -> Result<double> {
                PSHARD_ASSIGN_OR_RETURN(GroupedExpertTiming g, device.time_grouped_experts(s));
                distinct = g.distinct_experts;
                return g.seconds;
              },
              kGroupedUnits* unit_s);
          progress.advance(kGroupedUnits);
          done += kGroupedUnits;
          if (!t.ok() && t.status().code() == StatusCode::kUnsupported) {
            progress.advance(cells * kGroupedUnits - done); // optional: none of them
            return Status::ok_status();
          }
          if (!t.ok() && t.status().code() == StatusCode::kOutOfMemory)
            continue; // too large for this device: the lookup interpolates
          PSHARD_RETURN_IF_ERROR(t.status());
          PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(type, s.cols));
          gpu.grouped_expert.push_back(
              point_of(s, static_cast<uint64_t>(s.rows) * row_bytes, distinct, *t));
        }
  if (!gpu.grouped_expert.empty())
    gpu.grouped_expert_op = device.grouped_expert_op();
  return Status::ok_status();
}

} // namespace pshard::profiling
