// The measurement suite behind pshard-profile: which cells are measured, in what
// order, under which time budget, and the assembly of the profile.
//
// The time budget is shared out evenly per cell ("unit"), so the default run takes
// about two minutes and --quick about ten seconds whatever the machine's speed; a
// faster machine just repeats each cell more often.
//
//   SuiteOptions options;
//   options.quick = true;
//   PSHARD_ASSIGN_OR_RETURN(fb::ProfileT profile, run_suite(options));
#pragma once

#include "runtime/core/status.h"
#include "runtime/profile/device_measurer.h"
#include "runtime/tensor/tensor_type.h"
#include "schemas/profile_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard::profiling {

struct SuiteOptions {
  bool quick = false;
  std::vector<int> threads;       // empty: 1, 2, 4, … and the hardware thread count
  double budget_s = 0;            // measuring time; 0: 100 s, or 10 s with quick
  uint64_t read_buffer_bytes = 0; // 0: 512 MiB, or 128 MiB with quick
  double copy_rate = 0;           // cap on the emulated copy load in bytes/s; 0: full speed
  int64_t max_tokens = 0;         // largest token tier; 0: 512, or 64 with quick
  bool show_progress = true;
  std::string machine_name; // empty: derived from the CPU
  std::string description;
  std::string command_line;
  std::string tool_version;
  DeviceMeasurer* device = nullptr; // null: no GPU is measured
  std::string gpu_status;           // why, when device is null
};

// The cells to measure.
// One MoE model's expert shape, measured as grouped cells (the GPU only).
struct GroupedExpertModel {
  int64_t n_expert = 0;
  int64_t k = 0;      // experts used per token
  int64_t n_embd = 0; // gate/up columns, down rows
  int64_t n_ff = 0;   // gate/up rows, down columns
};

struct SuiteGrid {
  std::vector<TensorType> types;
  // Types measured on a sparse grid: the largest bucket, the first and last tier (and
  // the first under load), every thread count, the standard row length only. --quick uses it for the types beyond
  // F32, F16, BF16, Q8_0 and Q4_0, so a quick profile still covers every type; the CPU
  // only (the device suite measures `types`).
  std::vector<TensorType> sparse_types;
  std::vector<uint64_t> matrix_bytes; // size buckets, ascending
  std::vector<int64_t> tokens;        // tiers 1, 2, 4, …
  std::vector<int64_t> load_tokens;   // the tiers measured again under load
  // Other row lengths than kMatmulCols, measured on the largest bucket at the first and
  // last tier and the most threads only: the lookup turns them into a ratio over (tokens,
  // row length), the same for every size and thread count.
  std::vector<int64_t> extra_cols;
  std::vector<int64_t> extra_tokens;
  std::vector<int> threads;
  std::vector<int64_t> ctx_lens;
  std::vector<int64_t> attention_tokens; // new tokens per attention pass: decode, prefill
  std::vector<uint64_t> transfer_bytes;
  // Grouped MoE cells: every type of `types`, these token counts and models, fused
  // gate+up and down each.
  std::vector<int64_t> grouped_tokens;
  std::vector<GroupedExpertModel> grouped_models;
  uint64_t read_buffer_bytes = 0;
  uint64_t copy_buffer_bytes = 0;
  double budget_s = 0;
};

Result<SuiteGrid> make_grid(const SuiteOptions& options);

// Budget units per kind of cell: a bandwidth cell streams hundreds of MiB per repetition.
inline constexpr double kMatmulUnits = 1, kAttentionUnits = 1, kReadUnits = 4, kCopyUnits = 2,
                        kTransferUnits = 1, kGroupedUnits = 1;

// Total units of a grid (for the progress bar and the per-unit budget).
double cpu_units(const SuiteGrid& grid);
double device_units(const SuiteGrid& grid);

class Progress;
class CopyLoad;

// What the CPU part fills in.
struct CpuTables {
  std::unique_ptr<fb::CpuMeasurementsT> cpu;
  std::unique_ptr<fb::UnderLoadT> under_load;
};

// CPU figures idle and under `copy_load`.
Result<CpuTables> measure_cpu(const SuiteGrid& grid, CopyLoad& copy_load, Progress& progress,
                              double unit_s);

// GPU figures, transfers, and transfers while the CPU computes (appended to under_load).
// The grouped MoE cells and the per-kernel overhead of a replayed graph, into `gpu`
// (suite_grouped.cpp); both optional: a device without them leaves them empty.
Status measure_grouped_experts(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                               double unit_s, fb::GpuMeasurementsT& gpu);
Status measure_device(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                      double unit_s, fb::ProfileT& profile);

// One device matmul cell: `type` weights of about `bytes` in rows of `cols`, `n` tokens.
Result<fb::MatmulPointT> time_device_matmul(DeviceMeasurer& device, TensorType type, uint64_t bytes,
                                            int64_t cols, int64_t n, double budget_s);

// Both processors at once (schema 1.4, suite_beside.cpp): on the largest bucket of each
// type, the load tiers, the device's matmuls while the CPU's threads run one, and the
// CPU's while the device runs them back to back, into profile.under_load.
Status measure_beside(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                      double unit_s, fb::ProfileT& profile);
double beside_units(const SuiteGrid& grid);

Result<fb::ProfileT> run_suite(const SuiteOptions& options);

} // namespace pshard::profiling
