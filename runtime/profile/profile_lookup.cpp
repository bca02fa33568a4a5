// Builds the interpolation tables once from the unpacked profile; each question is then
// a table name plus coordinates.
#include "runtime/profile/profile_lookup.h"

#include <algorithm>

namespace pshard {
namespace {

// Both enums carry ggml's type ids; every supported type must have its profile value.
#define PSHARD_SAME_ID(T, W)                                                                      \
  static_assert(static_cast<uint32_t>(TensorType::T) == static_cast<uint32_t>(fb::WeightType::W))
PSHARD_SAME_ID(kF32, F32);
PSHARD_SAME_ID(kF16, F16);
PSHARD_SAME_ID(kBF16, BF16);
PSHARD_SAME_ID(kQ8_0, Q8_0);
PSHARD_SAME_ID(kQ4_0, Q4_0);
PSHARD_SAME_ID(kQ4_1, Q4_1);
PSHARD_SAME_ID(kQ5_0, Q5_0);
PSHARD_SAME_ID(kQ5_1, Q5_1);
PSHARD_SAME_ID(kQ2_K, Q2_K);
PSHARD_SAME_ID(kQ3_K, Q3_K);
PSHARD_SAME_ID(kQ4_K, Q4_K);
PSHARD_SAME_ID(kQ5_K, Q5_K);
PSHARD_SAME_ID(kQ6_K, Q6_K);
PSHARD_SAME_ID(kIQ4_NL, IQ4_NL);
PSHARD_SAME_ID(kIQ4_XS, IQ4_XS);
PSHARD_SAME_ID(kMXFP4, MXFP4);
#undef PSHARD_SAME_ID

using Coords = std::array<double, kMaxGridAxes>;
using Table = ProfileLookup::Table;
constexpr AxisScale kLog = AxisScale::kLog;
constexpr AxisScale kLin = AxisScale::kLinear;

std::string type_key(fb::WeightType type) {
  const char* name = fb::EnumNameWeightType(type);
  return *name ? name : "type" + std::to_string(static_cast<uint32_t>(type));
}
std::string type_key(TensorType type) { return type_key(static_cast<fb::WeightType>(type)); }

std::string transfer_key(int direction, int memory) {
  return std::string("transfer/") + (direction == 0 ? "h2d" : "d2h") + "/" +
         (memory == 0 ? "pinned" : "pageable");
}

Coords matmul_coords(const fb::MatmulPointT& p, bool with_threads) {
  return {double(p.n_tokens), double(p.matrix_bytes), with_threads ? double(p.threads) : 0, 0};
}
Coords attention_coords(const fb::AttentionPointT& p, bool with_threads) {
  return {double(p.ctx_len), double(p.n_tokens), with_threads ? double(p.threads) : 0, 0};
}

// Ratio cells: each loaded cell divided by the idle figure at the same coordinates.
void add_ratio(const Table& table, std::vector<GridCell>& ratios, const Coords& at, double loaded) {
  if (table.idle.empty())
    return;
  const double idle = interpolate(table.idle, table.scales, at);
  if (idle > 0 && loaded > 0)
    ratios.push_back({at, loaded / idle});
}
void add_load_ratio(Table& table, const Coords& at, double loaded) {
  add_ratio(table, table.load_ratio, at, loaded);
}

// The row length most of a type's cells were measured at.
double reference_cols(const std::vector<const fb::MatmulPointT*>& points) {
  std::map<uint32_t, int> count;
  for (const auto* p : points)
    ++count[p->cols];
  uint32_t best = 0;
  int most = 0;
  for (const auto& [cols, n] : count)
    if (n > most) {
      best = cols;
      most = n;
    }
  return best;
}

using MatmulPoints = std::vector<std::unique_ptr<fb::MatmulPointT>>;

void add_matmul(std::map<std::string, Table>& tables, const std::string& prefix,
                const MatmulPoints& idle, const MatmulPoints* loaded, const MatmulPoints* beside,
                bool threads) {
  const std::vector<AxisScale> scales =
      threads ? std::vector<AxisScale>{kLog, kLog, kLin} : std::vector<AxisScale>{kLog, kLog};
  std::map<std::string, std::vector<const fb::MatmulPointT*>> by_type;
  for (const auto& p : idle)
    by_type[prefix + type_key(p->weight_type)].push_back(p.get());
  for (const auto& [key, points] : by_type) {
    Table& t = tables[key];
    t.scales = scales;
    t.reference_cols = reference_cols(points);
    for (const auto* p : points)
      if (p->cols == t.reference_cols)
        t.idle.push_back({matmul_coords(*p, threads), p->flops_per_s});
    for (const auto* p : points) {
      if (p->cols == t.reference_cols || p->cols == 0 || t.reference_cols == 0)
        continue;
      const double ref = interpolate(t.idle, t.scales, matmul_coords(*p, threads));
      if (ref <= 0 || p->flops_per_s <= 0)
        continue;
      t.cols_ratio.push_back({{double(p->n_tokens), double(p->cols), 0, 0}, p->flops_per_s / ref});
      t.cols_ratio.push_back({{double(p->n_tokens), t.reference_cols, 0, 0}, 1.0});
    }
  }
  for (const auto& [cells, ratios] :
       {std::pair{loaded, &Table::load_ratio}, std::pair{beside, &Table::beside_ratio}}) {
    if (!cells)
      continue;
    for (const auto& p : *cells) {
      auto it = tables.find(prefix + type_key(p->weight_type));
      if (it != tables.end() && p->cols == it->second.reference_cols)
        add_ratio(it->second, it->second.*ratios, matmul_coords(*p, threads), p->flops_per_s);
    }
  }
}

// Grouped MoE products: one table per (type, kernel), bytes/s over (tokens per routed
// expert, bytes the launch reads), both log-scale like the matmul cells. Tokens per
// expert rather than pass tokens, so that a model of other expert counts reads cells of
// the same arithmetic intensity (n tokens each routed to k of the d experts touched).
std::string grouped_key(const std::string& type, bool fused_gate_up) {
  return "gpu_grouped/" + type + (fused_gate_up ? "/gate_up" : "/down");
}

void add_grouped(std::map<std::string, Table>& tables,
                 const std::vector<std::unique_ptr<fb::GroupedExpertPointT>>& points) {
  for (const auto& p : points) {
    const double distinct = p->distinct_experts;
    const double bytes =
        distinct * double(p->matrix_bytes) * (p->fused_gate_up ? 2.0 : 1.0);
    const double rate = p->bytes_per_s > 0 ? p->bytes_per_s
                        : p->seconds > 0   ? bytes / p->seconds
                                           : 0;
    if (distinct <= 0 || bytes <= 0 || rate <= 0 || p->n_tokens == 0)
      continue; // an empty cell says nothing
    const double per_expert = double(p->n_tokens) * double(p->n_expert_used) / distinct;
    Table& t = tables[grouped_key(type_key(p->weight_type), p->fused_gate_up)];
    t.scales = {kLog, kLog};
    t.idle.push_back({{std::max(per_expert, 1.0), bytes, 0, 0}, rate});
  }
}

void add_attention(std::map<std::string, Table>& tables, const std::string& key,
                   const std::vector<std::unique_ptr<fb::AttentionPointT>>& idle,
                   const std::vector<std::unique_ptr<fb::AttentionPointT>>* loaded, bool threads) {
  if (idle.empty())
    return;
  Table& t = tables[key];
  t.scales =
      threads ? std::vector<AxisScale>{kLog, kLog, kLin} : std::vector<AxisScale>{kLog, kLog};
  for (const auto& p : idle)
    t.idle.push_back({attention_coords(*p, threads), p->flops_per_s});
  if (loaded)
    for (const auto& p : *loaded)
      add_load_ratio(t, attention_coords(*p, threads), p->flops_per_s);
}

void add_bandwidth(std::map<std::string, Table>& tables, const std::string& key,
                   const std::vector<std::unique_ptr<fb::BandwidthPointT>>& idle,
                   const std::vector<std::unique_ptr<fb::BandwidthPointT>>* loaded) {
  if (idle.empty())
    return;
  Table& t = tables[key];
  t.scales = {kLin};
  for (const auto& p : idle)
    t.idle.push_back({{double(p->threads), 0, 0, 0}, p->bytes_per_s});
  if (loaded)
    for (const auto& p : *loaded)
      add_load_ratio(t, {double(p->threads), 0, 0, 0}, p->bytes_per_s);
}

void add_transfers(std::map<std::string, Table>& tables, std::map<std::string, double>& latency,
                   const std::vector<std::unique_ptr<fb::TransferPointT>>& idle,
                   const std::vector<std::unique_ptr<fb::TransferPointT>>* loaded) {
  std::map<std::string, uint64_t> smallest;
  for (const auto& p : idle) {
    const std::string key = transfer_key(int(p->direction), int(p->memory));
    Table& t = tables[key];
    t.scales = {kLog};
    t.idle.push_back({{double(p->bytes), 0, 0, 0}, p->bytes_per_s});
    auto s = smallest.find(key);
    if (s == smallest.end() || p->bytes < s->second) {
      smallest[key] = p->bytes;
      latency[key.substr(9)] = p->seconds; // strip "transfer/"
    }
  }
  if (loaded)
    for (const auto& p : *loaded) {
      auto it = tables.find(transfer_key(int(p->direction), int(p->memory)));
      if (it != tables.end())
        add_load_ratio(it->second, {double(p->bytes), 0, 0, 0}, p->bytes_per_s);
    }
}

} // namespace

ProfileLookup::ProfileLookup(const Profile& profile) {
  const fb::ProfileT& d = profile.data();
  const fb::UnderLoadT* load = d.under_load.get();
  if (d.cpu) {
    add_matmul(tables_, "cpu_matmul/", d.cpu->matmul, load ? &load->cpu_matmul : nullptr,
               load ? &load->cpu_matmul_beside_device : nullptr, true);
    add_attention(tables_, "cpu_attention", d.cpu->attention, load ? &load->cpu_attention : nullptr,
                  true);
    add_bandwidth(tables_, "cpu_read_bw", d.cpu->read_bandwidth,
                  load ? &load->cpu_read_bandwidth : nullptr);
    add_bandwidth(tables_, "host_copy", d.cpu->copy_bandwidth,
                  load ? &load->copy_bandwidth : nullptr);
  }
  has_gpu_ = d.gpu != nullptr;
  gpu_status_ = d.machine && !d.machine->gpu_status.empty() ? d.machine->gpu_status
                : has_gpu_                                  ? "present"
                                                            : "no GPU recorded";
  if (d.gpu) {
    add_matmul(tables_, "gpu_matmul/", d.gpu->matmul, nullptr,
               load ? &load->device_matmul_beside_cpu : nullptr, false);
    add_attention(tables_, "gpu_attention", d.gpu->attention, nullptr, false);
    gpu_read_bandwidth_ = d.gpu->read_bandwidth_bytes_per_s;
    gpu_launch_overhead_s_ = d.gpu->launch_overhead_s;
    gpu_graph_launch_overhead_s_ = d.gpu->graph_launch_overhead_s;
    add_grouped(tables_, d.gpu->grouped_expert);
    for (const auto& [key, table] : tables_)
      has_grouped_ = has_grouped_ || (key.rfind("gpu_grouped/", 0) == 0 && !table.idle.empty());
  }
  if (d.transfers)
    add_transfers(tables_, transfer_latency_, d.transfers->points,
                  load ? &load->transfers : nullptr);
}

Result<double> ProfileLookup::lookup(const std::string& key, const Coords& at, Load load,
                                     const std::string& what, int64_t cols) const {
  auto it = tables_.find(key);
  if (it == tables_.end() || it->second.idle.empty())
    return not_found("the profile has no " + what + " measurements");
  const Table& t = it->second;
  double value = interpolate(t.idle, t.scales, at);
  if (load == Load::kUnderLoad) {
    if (t.load_ratio.empty())
      return not_found("the profile has no under-load " + what + " measurements");
    value *= interpolate(t.load_ratio, t.scales, at);
  } else if (load == Load::kBesideCompute) {
    if (t.beside_ratio.empty())
      return not_found("the profile has no " + what +
                       " measurements beside the other processor's (schema 1.4)");
    value *= interpolate(t.beside_ratio, t.scales, at);
  }
  if (cols > 0 && !t.cols_ratio.empty()) {
    const AxisScale cols_scales[] = {kLog, kLog};
    value *= interpolate(t.cols_ratio, cols_scales, {at[0], double(cols), 0, 0});
  }
  return value;
}

Status ProfileLookup::gpu_missing() const {
  return not_found("the profile has no GPU: " + gpu_status_);
}

Result<double> ProfileLookup::cpu_matmul_flops(TensorType type, int64_t n_tokens,
                                               uint64_t matrix_bytes, int threads, Load load,
                                               int64_t cols) const {
  return lookup("cpu_matmul/" + type_key(type),
                {double(n_tokens), double(matrix_bytes), double(threads), 0}, load,
                "CPU " + std::string(tensor_type_name(type)) + " matmul", cols);
}

Result<double> ProfileLookup::cpu_attention_flops(int64_t ctx_len, int64_t n_tokens, int threads,
                                                  Load load) const {
  return lookup("cpu_attention", {double(ctx_len), double(n_tokens), double(threads), 0}, load,
                "CPU attention");
}

Result<double> ProfileLookup::cpu_read_bandwidth(int threads, Load load) const {
  return lookup("cpu_read_bw", {double(threads), 0, 0, 0}, load, "CPU memory read bandwidth");
}

Result<double> ProfileLookup::host_copy_bandwidth(Load load) const {
  return lookup("host_copy", {1, 0, 0, 0}, load, "host memcpy bandwidth");
}

Result<double> ProfileLookup::gpu_matmul_flops(TensorType type, int64_t n_tokens,
                                               uint64_t matrix_bytes, int64_t cols,
                                               Load load) const {
  if (!has_gpu_)
    return gpu_missing();
  if (load == Load::kUnderLoad)
    return invalid_argument("GPU matmuls have no under-load figures (copies do not slow them)");
  return lookup("gpu_matmul/" + type_key(type), {double(n_tokens), double(matrix_bytes), 0, 0},
                load, "GPU " + std::string(tensor_type_name(type)) + " matmul", cols);
}

Result<double> ProfileLookup::gpu_attention_flops(int64_t ctx_len, int64_t n_tokens) const {
  if (!has_gpu_)
    return gpu_missing();
  return lookup("gpu_attention", {double(ctx_len), double(n_tokens), 0, 0}, Load::kIdle,
                "GPU attention");
}

Result<double> ProfileLookup::gpu_read_bandwidth() const {
  if (!has_gpu_)
    return gpu_missing();
  if (!(gpu_read_bandwidth_ > 0))
    return not_found("the profile has no GPU memory bandwidth");
  return gpu_read_bandwidth_;
}

Result<double> ProfileLookup::gpu_launch_overhead_s() const {
  if (!has_gpu_)
    return gpu_missing();
  if (!(gpu_launch_overhead_s_ > 0))
    return not_found("the profile has no GPU launch overhead");
  return gpu_launch_overhead_s_;
}

Result<double> ProfileLookup::gpu_grouped_expert_bytes_per_s(TensorType type, bool fused_gate_up,
                                                             double tokens_per_expert,
                                                             double bytes) const {
  if (!has_gpu_)
    return gpu_missing();
  return lookup(grouped_key(type_key(type), fused_gate_up), {tokens_per_expert, bytes, 0, 0},
                Load::kIdle,
                "GPU " + std::string(tensor_type_name(type)) + " grouped expert " +
                    (fused_gate_up ? "gate+up" : "down"));
}

Result<double> ProfileLookup::gpu_graph_launch_overhead_s() const {
  if (!has_gpu_)
    return gpu_missing();
  if (!(gpu_graph_launch_overhead_s_ > 0))
    return not_found("the profile has no CUDA graph launch overhead (schema 1.3)");
  return gpu_graph_launch_overhead_s_;
}

Result<double> ProfileLookup::transfer_bandwidth(Direction direction, uint64_t bytes,
                                                 HostMemoryKind memory, Load load) const {
  if (!has_gpu_)
    return gpu_missing();
  const std::string key = transfer_key(int(direction), int(memory));
  return lookup(key, {double(bytes), 0, 0, 0}, load, key.substr(9) + " transfer");
}

Result<double> ProfileLookup::transfer_seconds(Direction direction, uint64_t bytes,
                                               HostMemoryKind memory, Load load) const {
  PSHARD_ASSIGN_OR_RETURN(double bandwidth, transfer_bandwidth(direction, bytes, memory, load));
  return double(bytes) / bandwidth;
}

Result<double> ProfileLookup::transfer_latency_s(Direction direction, HostMemoryKind memory) const {
  if (!has_gpu_)
    return gpu_missing();
  const std::string key = transfer_key(int(direction), int(memory)).substr(9);
  auto it = transfer_latency_.find(key);
  if (it == transfer_latency_.end())
    return not_found("the profile has no " + key + " transfer measurements");
  return it->second;
}

} // namespace pshard
