// Text tables for a profile. Matmul cells are laid out with the token count across, as
// that is the axis people compare (decode at n=1 against prefill at n=512).
#include "runtime/profile/profile_report.h"

#include <cstdarg>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

namespace pshard {
namespace {

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char buf[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

const char* provenance(fb::Provenance p) {
  switch (p) {
  case fb::Provenance::Measured:
    return "measured";
  case fb::Provenance::FromSpecification:
    return "from specification";
  default:
    return "unknown source";
  }
}

std::string machine_section(const fb::ProfileT& d) {
  std::string out;
  if (!d.machine)
    return "machine   (not recorded)\n";
  const fb::MachineT& m = *d.machine;
  out += format("machine   %s", m.name.c_str());
  if (!m.description.empty())
    out += " - " + m.description;
  out += "\n";
  if (!m.os.empty())
    out += "  os      " + m.os + "\n";
  if (m.cpu) {
    const fb::CpuInfoT& c = *m.cpu;
    out +=
        format("  cpu     %s: %u cores, %u logical CPUs, %s RAM, %s LLC  [%s]\n", c.model.c_str(),
               c.cores, c.logical_cpus, format_bytes(double(c.ram_bytes)).c_str(),
               format_bytes(double(c.llc_bytes)).c_str(), provenance(c.source));
    std::string isa;
    for (const auto& f : c.isa_features)
      isa += (isa.empty() ? "" : " ") + f;
    if (!isa.empty())
      out += "  isa     " + isa + "\n";
  }
  if (m.gpu) {
    const fb::GpuInfoT& g = *m.gpu;
    out +=
        format("  gpu     %s: sm_%u%u, %u SMs, %s VRAM at %.0f GB/s, PCIe %u.0 x%u  [%s]\n",
               g.name.c_str(), g.compute_capability_major, g.compute_capability_minor, g.sm_count,
               format_bytes(double(g.vram_bytes)).c_str(), g.vram_bandwidth_bytes_per_s / 1e9,
               g.pcie_generation, g.pcie_lanes, provenance(g.source));
    if (!g.driver_version.empty() || !g.toolkit_version.empty())
      out += "  driver  " + g.driver_version + ", toolkit " + g.toolkit_version + "\n";
    if (g.kernel_workspace_bytes > 0)
      out += "  scratch " + format_bytes(double(g.kernel_workspace_bytes)) +
             " of kernel workspace in every GPU plan\n";
  } else {
    out += "  gpu     none (" + m.gpu_status + ")\n";
  }
  return out;
}

std::string run_section(const fb::ProfileT& d) {
  if (!d.run)
    return "";
  const fb::RunInfoT& r = *d.run;
  std::string out = format("made by   %s on %s in %.1f s%s\n", r.tool.c_str(),
                           r.created_utc.c_str(), r.duration_s, r.quick ? " (--quick)" : "");
  if (!r.command_line.empty())
    out += "  command " + r.command_line + "\n";
  if (!r.notes.empty())
    out += "  notes   " + r.notes + "\n";
  return out;
}

// Rows (type, size, row length, threads) x columns (n_tokens), GFLOP/s.
std::string matmul_table(const std::string& title,
                         const std::vector<std::unique_ptr<fb::MatmulPointT>>& points) {
  if (points.empty())
    return "";
  using Row = std::tuple<uint32_t, uint64_t, uint32_t, uint32_t>;
  std::set<uint32_t> tokens;
  std::map<Row, std::map<uint32_t, double>> rows;
  for (const auto& p : points) {
    tokens.insert(p->n_tokens);
    rows[{static_cast<uint32_t>(p->weight_type), p->matrix_bytes, p->cols, p->threads}]
        [p->n_tokens] = p->flops_per_s;
  }
  std::string out = title + " (GFLOP/s by tokens per pass)\n  type   matrix      cols  thr";
  for (uint32_t n : tokens)
    out += format(" %7s", ("n=" + std::to_string(n)).c_str());
  out += "\n";
  for (const auto& [key, cells] : rows) {
    const auto [type, bytes, cols, threads] = key;
    out += format("  %-6s %-10s %5u %4u", fb::EnumNameWeightType(static_cast<fb::WeightType>(type)),
                  format_bytes(double(bytes)).c_str(), cols, threads);
    for (uint32_t n : tokens) {
      auto it = cells.find(n);
      out += it == cells.end() ? format(" %7s", "-") : format(" %7.1f", it->second / 1e9);
    }
    out += "\n";
  }
  return out;
}

// Rows (type, kernel, expert shape, experts) x columns (n_tokens), GB/s read.
std::string grouped_table(const std::string& title,
                          const std::vector<std::unique_ptr<fb::GroupedExpertPointT>>& points) {
  if (points.empty())
    return "";
  using Row = std::tuple<uint32_t, bool, uint32_t, uint32_t, uint32_t, uint32_t>;
  std::set<uint32_t> tokens;
  std::map<Row, std::map<uint32_t, double>> rows;
  for (const auto& p : points) {
    tokens.insert(p->n_tokens);
    rows[{static_cast<uint32_t>(p->weight_type), !p->fused_gate_up, p->rows, p->cols, p->n_expert,
          p->n_expert_used}][p->n_tokens] = p->bytes_per_s;
  }
  std::string out = title + " (GB/s read by tokens per pass)\n  type   kernel   rows x cols   experts";
  for (uint32_t n : tokens)
    out += format(" %7s", ("n=" + std::to_string(n)).c_str());
  out += "\n";
  for (const auto& [key, cells] : rows) {
    const auto [type, down, r, c, ne, used] = key;
    out += format("  %-6s %-7s %5u x %-5u %4u/%-3u",
                  fb::EnumNameWeightType(static_cast<fb::WeightType>(type)),
                  down ? "down" : "gate+up", r, c, used, ne);
    for (uint32_t n : tokens) {
      auto it = cells.find(n);
      out += it == cells.end() ? format(" %7s", "-") : format(" %7.1f", it->second / 1e9);
    }
    out += "\n";
  }
  return out;
}

std::string attention_table(const std::string& title,
                            const std::vector<std::unique_ptr<fb::AttentionPointT>>& points) {
  if (points.empty())
    return "";
  std::string out =
      title + "\n  ctx_len  tokens  heads  kv_heads  head_dim  thr   GFLOP/s   KV GB/s\n";
  for (const auto& p : points)
    out += format("  %7u  %6u  %5u  %8u  %8u  %3u  %8.2f  %8.2f\n", p->ctx_len, p->n_tokens,
                  p->n_heads, p->n_kv_heads, p->head_dim, p->threads, p->flops_per_s / 1e9,
                  p->bytes_per_s / 1e9);
  return out;
}

std::string bandwidth_table(const std::string& title,
                            const std::vector<std::unique_ptr<fb::BandwidthPointT>>& points) {
  if (points.empty())
    return "";
  std::string out = title + "\n  thr  buffer       GB/s\n";
  for (const auto& p : points)
    out += format("  %3u  %-10s %7.2f\n", p->threads, format_bytes(double(p->buffer_bytes)).c_str(),
                  p->bytes_per_s / 1e9);
  return out;
}

std::string transfer_table(const std::string& title,
                           const std::vector<std::unique_ptr<fb::TransferPointT>>& points) {
  if (points.empty())
    return "";
  std::string out = title + "\n  direction     memory    size         time_us     GB/s\n";
  for (const auto& p : points)
    out += format("  %-12s  %-8s  %-10s %9.1f  %7.2f\n",
                  fb::EnumNameTransferDirection(p->direction), fb::EnumNameHostMemory(p->memory),
                  format_bytes(double(p->bytes)).c_str(), p->seconds * 1e6, p->bytes_per_s / 1e9);
  return out;
}

} // namespace

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  if (bytes == static_cast<double>(static_cast<uint64_t>(bytes)))
    return format("%.0f %s", bytes, units[u]);
  return format("%.1f %s", bytes, units[u]);
}

std::string profile_report(const Profile& profile) {
  const fb::ProfileT& d = profile.data();
  std::string out =
      format("pshard profile, schema %u.%u, %zu bytes, fingerprint %s\n", d.schema_major,
             d.schema_minor, profile.bytes().size(), profile.fingerprint_hex().c_str());
  out += machine_section(d) + run_section(d);
  if (d.cpu) {
    const fb::CpuMeasurementsT& c = *d.cpu;
    out += format("\nCPU  [%s]\n", provenance(c.source));
    out += matmul_table("CPU matmul, " + c.matmul_op, c.matmul);
    out += attention_table("CPU attention, " + c.attention_op, c.attention);
    out += bandwidth_table("CPU memory read bandwidth", c.read_bandwidth);
    out += bandwidth_table("host memcpy bandwidth", c.copy_bandwidth);
  }
  if (d.gpu) {
    const fb::GpuMeasurementsT& g = *d.gpu;
    out +=
        format("\nGPU  [%s]  memory read %.0f GB/s, launch overhead %.1f us\n",
               provenance(g.source), g.read_bandwidth_bytes_per_s / 1e9, g.launch_overhead_s * 1e6);
    out += matmul_table("GPU matmul, " + g.matmul_op, g.matmul);
    out += attention_table("GPU attention, " + g.attention_op, g.attention);
    if (g.graph_launch_overhead_s > 0)
      out += format("GPU launch overhead inside a CUDA graph %.2f us per kernel\n",
                    g.graph_launch_overhead_s * 1e6);
    out += grouped_table("GPU grouped MoE experts, " + g.grouped_expert_op, g.grouped_expert);
  }
  if (d.transfers && !d.transfers->points.empty()) {
    out += '\n';
    out += transfer_table(format("Transfers  [%s]", provenance(d.transfers->source)),
                          d.transfers->points);
  }
  if (d.under_load) {
    const fb::UnderLoadT& u = *d.under_load;
    out += format("\nUnder load  [%s]\n  load    %s (achieved %.2f GB/s)\n", provenance(u.source),
                  u.load_description.c_str(), u.load_bytes_per_s / 1e9);
    if (!u.compute_description.empty())
      out += "  compute " + u.compute_description + "\n";
    out += matmul_table("CPU matmul under load", u.cpu_matmul);
    out += attention_table("CPU attention under load", u.cpu_attention);
    out += bandwidth_table("CPU memory read bandwidth under load", u.cpu_read_bandwidth);
    out += transfer_table("Transfers while the CPU computes", u.transfers);
    out += bandwidth_table("host memcpy while the CPU computes", u.copy_bandwidth);
    if (!u.beside_description.empty())
      out += "  both computing: " + u.beside_description + "\n";
    out += matmul_table("CPU matmul while the device computes", u.cpu_matmul_beside_device);
    out += matmul_table("GPU matmul while the CPU computes", u.device_matmul_beside_cpu);
  }
  return out;
}

} // namespace pshard
