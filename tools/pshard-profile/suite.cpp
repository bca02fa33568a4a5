// Choosing the grid and assembling the profile around the measurements.
#include "tools/pshard-profile/suite.h"

#include "runtime/core/thread_pool.h"
#include "tools/pshard-profile/background_load.h"
#include "tools/pshard-profile/machine_info.h"
#include "tools/pshard-profile/progress.h"
#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <ctime>

namespace pshard::profiling {
namespace {

constexpr uint64_t kMiB = 1u << 20;

std::vector<int> default_threads() {
  const int hw = ThreadPool::hardware_threads();
  std::vector<int> out;
  for (int t = 1; t < hw; t *= 2)
    out.push_back(t);
  out.push_back(hw);
  return out;
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

} // namespace

Result<SuiteGrid> make_grid(const SuiteOptions& o) {
  SuiteGrid g;
  // Every weight type the kernels run (ggml id order); --quick keeps its ~13 s by
  // measuring the newer types sparsely.
  size_t n_types = 0;
  const TensorType* types = supported_tensor_types(&n_types);
  for (size_t i = 0; i < n_types; ++i) {
    const TensorType t = types[i];
    const bool base = t == TensorType::kF32 || t == TensorType::kF16 || t == TensorType::kBF16 ||
                      t == TensorType::kQ8_0 || t == TensorType::kQ4_0;
    (o.quick && !base ? g.sparse_types : g.types).push_back(t);
  }
  g.threads = o.threads.empty() ? default_threads() : o.threads;
  for (int t : g.threads)
    if (t < 1 || t > 1024)
      return invalid_argument("thread count " + std::to_string(t) + " is not between 1 and 1024");
  std::sort(g.threads.begin(), g.threads.end());
  g.threads.erase(std::unique(g.threads.begin(), g.threads.end()), g.threads.end());

  const int64_t max_tokens = o.max_tokens > 0 ? o.max_tokens : (o.quick ? 64 : 512);
  if (max_tokens > 65536)
    return invalid_argument("--max-tokens " + std::to_string(max_tokens) + " is above 65536");
  // Quick steps by 4 (the compiler's tiers), the full run by 2.
  const int64_t step = o.quick ? 4 : 2;
  for (int64_t n = 1; n <= max_tokens; n *= step)
    g.tokens.push_back(n);
  for (size_t i = 0; i < g.tokens.size(); i += 2)
    g.load_tokens.push_back(g.tokens[i]);
  g.extra_cols = {1024, 16384}; // narrow models' hidden size; wide FFN down-projections
  g.extra_tokens = {g.tokens.front()};
  if (g.tokens.back() != g.tokens.front())
    g.extra_tokens.push_back(g.tokens.back());

  // Buckets: inside L2, inside a client LLC, far outside any LLC (weights from DRAM).
  g.matrix_bytes = o.quick ? std::vector<uint64_t>{1 * kMiB, 64 * kMiB}
                           : std::vector<uint64_t>{1 * kMiB, 16 * kMiB, 256 * kMiB};
  g.ctx_lens =
      o.quick ? std::vector<int64_t>{512, 4096} : std::vector<int64_t>{256, 1024, 4096, 16384};
  // A prefill pass reuses each cached row for all its queries; 16 new tokens show that
  // reuse, and longer passes at 16K positions would take seconds per repetition.
  g.attention_tokens = {1};
  if (g.tokens.back() > 1)
    g.attention_tokens.push_back(std::min<int64_t>(16, g.tokens.back()));
  g.transfer_bytes = {4096, 64 * 1024, 1 * kMiB, 16 * kMiB, 64 * kMiB};
  // Decode to short prefill; the experts of Qwen3-30B-A3B (128 x 768, top-8), Qwen3-235B-A22B
  // (128 x 1536 at n_embd 4096, top-8) and Mixtral 8x7B (8 x 14336, top-2).
  for (int64_t n : {1, 4, 16, 64})
    if (n <= max_tokens)
      g.grouped_tokens.push_back(n);
  g.grouped_models = {{128, 8, 2048, 768}, {128, 8, 4096, 1536}, {8, 2, 4096, 14336}};
  g.read_buffer_bytes =
      o.read_buffer_bytes > 0 ? o.read_buffer_bytes : (o.quick ? 128 : 512) * kMiB;
  if (g.read_buffer_bytes < kMiB)
    return invalid_argument(
        "the read buffer must be at least 1 MiB (it should be several times the "
        "last-level cache)");
  g.copy_buffer_bytes = (o.quick ? 64 : 128) * kMiB;
  g.budget_s = o.budget_s > 0 ? o.budget_s : (o.quick ? 10.0 : 100.0);
  return g;
}

double cpu_units(const SuiteGrid& g) {
  const double types = double(g.types.size()), threads = double(g.threads.size());
  const double sparse = double(g.sparse_types.size());
  return kMatmulUnits * types * threads *
             (double(g.matrix_bytes.size() * g.tokens.size()) + double(g.load_tokens.size()) +
              double(g.extra_cols.size() * g.extra_tokens.size()) / threads) +
         kMatmulUnits * sparse * threads * (2 + 1) +
         kAttentionUnits * 2 * threads * double(g.ctx_lens.size() * g.attention_tokens.size()) +
         kReadUnits * 2 * threads +
         kCopyUnits * 2;
}

double device_units(const SuiteGrid& g) {
  return kMatmulUnits * double(g.types.size() * (g.matrix_bytes.size() * g.tokens.size() +
                                                 g.extra_cols.size() * g.extra_tokens.size())) +
         kAttentionUnits * double(g.ctx_lens.size() * g.attention_tokens.size()) + kReadUnits + 1 +
         kTransferUnits * 2 * 4 * double(g.transfer_bytes.size()) +
         kGroupedUnits *
             double(g.types.size() * g.grouped_tokens.size() * g.grouped_models.size() * 2) +
         1 + // the graph replay overhead
         beside_units(g);
}

Result<fb::ProfileT> run_suite(const SuiteOptions& o) {
  PSHARD_ASSIGN_OR_RETURN(SuiteGrid grid, make_grid(o));
  const double start = now_seconds();
  const double units = cpu_units(grid) + (o.device ? device_units(grid) : 0);
  const double unit_s = grid.budget_s / units;
  Progress progress(units, o.show_progress);

  fb::ProfileT profile;
  profile.machine = std::make_unique<fb::MachineT>();
  profile.machine->cpu = std::make_unique<fb::CpuInfoT>(describe_host_cpu());
  profile.machine->os = describe_host_os();
  profile.machine->description = o.description;
  if (o.device) {
    PSHARD_ASSIGN_OR_RETURN(fb::GpuInfoT gpu, o.device->describe());
    profile.machine->gpu = std::make_unique<fb::GpuInfoT>(std::move(gpu));
    profile.machine->gpu_status = "present";
  } else {
    profile.machine->gpu_status = o.gpu_status.empty() ? "no GPU" : o.gpu_status;
  }
  profile.machine->name = o.machine_name.empty()
                              ? default_machine_name(*profile.machine->cpu, o.device != nullptr)
                              : o.machine_name;

  std::unique_ptr<CopyLoad> copy_load;
  if (o.device)
    copy_load = std::make_unique<DeviceCopyLoad>(*o.device);
  else
    copy_load = std::make_unique<HostCopyLoad>(grid.copy_buffer_bytes, o.copy_rate);
  PSHARD_ASSIGN_OR_RETURN(CpuTables cpu, measure_cpu(grid, *copy_load, progress, unit_s));
  profile.cpu = std::move(cpu.cpu);
  profile.under_load = std::move(cpu.under_load);
  if (o.device)
    PSHARD_RETURN_IF_ERROR(measure_device(grid, *o.device, progress, unit_s, profile));
  progress.finish();

  profile.run = std::make_unique<fb::RunInfoT>();
  profile.run->tool = "pshard-profile " + o.tool_version;
  profile.run->command_line = o.command_line;
  profile.run->created_utc = utc_now();
  profile.run->duration_s = now_seconds() - start;
  profile.run->quick = o.quick;
  profile.run->notes = "medians after a warm-up run; " + std::to_string(grid.threads.size()) +
                       " thread counts; budget " + std::to_string(int(grid.budget_s)) + " s";
  return profile;
}

} // namespace pshard::profiling
