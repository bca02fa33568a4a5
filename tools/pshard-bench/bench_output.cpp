#include "tools/pshard-bench/bench_output.h"

#include "tools/common/json_writer.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

namespace pshard::bench {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string size_label(uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  return b >= (1ull << 30) ? fmt("%.2f GiB", b / (1ull << 30)) : fmt("%.2f MiB", b / (1ull << 20));
}

std::string params_label(uint64_t n) {
  const double v = static_cast<double>(n);
  return v >= 1e9   ? fmt("%.2f B", v / 1e9)
         : v >= 1e6 ? fmt("%.2f M", v / 1e6)
                    : fmt("%.2f K", v / 1e3);
}

std::string csv_quote(const std::string& s) { return "\"" + s + "\""; }

} // namespace

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos)
        return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "unknown";
}

void print_markdown(std::ostream& out, const std::vector<BenchRow>& rows, const MachineInfo& m) {
  // As llama-bench: the mmap column only when some row does not use the mapping.
  const bool mmap_column =
      std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) { return !r.use_mmap; });
  // And a backend column only when a schedule ran (llama-bench's "backend").
  const bool backend_column =
      std::any_of(rows.begin(), rows.end(), [](const BenchRow& r) { return r.backend != "cpu"; });
  out << "| model | size | params |" << (backend_column ? " backend |" : "") << " isa | threads |"
      << (mmap_column ? " mmap |" : "") << " test | t/s | GFLOP/s | % mem bw |\n"
      << "| --- | ---: | ---: |" << (backend_column ? " --- |" : "") << " --- | ---: |"
      << (mmap_column ? " ---: |" : "") << " ---: | ---: | ---: | ---: |\n";
  for (const BenchRow& r : rows) {
    out << "| " << r.model.type_label << " | " << size_label(r.model.size_bytes) << " | "
        << params_label(r.model.n_params) << " | " << (backend_column ? r.backend + " | " : "")
        << r.isa << " | " << r.n_threads << " | "
        << (mmap_column ? (r.use_mmap ? "1 | " : "0 | ") : "") << r.test_name() << " | "
        << fmt("%.2f", r.avg_ts()) << " ± " << fmt("%.2f", r.stddev_ts()) << " | "
        << (r.n_prompt > 0 ? fmt("%.1f", r.gflops()) : "")
        << " | "
        // Under a schedule the CPU reads only part of the weights: no bandwidth share.
        << (r.n_gen > 0 && r.n_prompt == 0 && r.backend == "cpu"
                ? fmt("%.1f%%", 100 * r.bandwidth_ratio())
                : "")
        << " |\n";
  }
  for (const BenchRow& r : rows)
    if (!r.plans.empty())
      out << "\n" << r.test_name() << " on " << r.backend << ": " << r.plans;
  if (!rows.empty() && rows.front().tokens != "random")
    out << "\ntokens: from " << rows.front().tokens << ", cycled\n";
  out << (backend_column ? "\n" : "") << "\nCPU: " << m.cpu_info
      << "; memory read bandwidth (sum-reduce; best median of 4k/2m pages x unpinned/pinned):";
  for (const auto& [threads, bw] : m.bandwidth)
    out << " " << threads << " thread" << (threads == 1 ? "" : "s") << " "
        << fmt("%.1f GB/s", bw / 1e9) << ";";
  out << "\n";
}

void print_csv(std::ostream& out, const std::vector<BenchRow>& rows, const MachineInfo& m) {
  out << "cpu_info,model_filename,model_type,model_size,model_n_params,isa,n_batch,n_threads,"
         "use_mmap,n_prompt,n_gen,avg_ns,stddev_ns,avg_ts,stddev_ts,gflops,mem_read_bw_bytes_per_s,"
         "weight_bytes_per_token,bw_ratio\n";
  for (const BenchRow& r : rows)
    out << csv_quote(m.cpu_info) << "," << csv_quote(r.model.filename) << ","
        << csv_quote(r.model.type_label) << "," << r.model.size_bytes << "," << r.model.n_params
        << "," << r.isa << "," << r.n_batch << "," << r.n_threads << "," << r.use_mmap << ","
        << r.n_prompt << "," << r.n_gen << "," << fmt("%.0f", r.avg_ns()) << ","
        << fmt("%.0f", r.stddev_ns()) << "," << fmt("%.6f", r.avg_ts()) << ","
        << fmt("%.6f", r.stddev_ts()) << "," << fmt("%.3f", r.gflops()) << ","
        << fmt("%.0f", r.mem_bw_bytes_per_s) << "," << r.model.bytes_per_token << ","
        << fmt("%.4f", r.bandwidth_ratio()) << "\n";
}

void print_json(std::ostream& out, const std::vector<BenchRow>& rows, const MachineInfo& m) {
  JsonWriter j(out);
  j.begin_array();
  for (const BenchRow& r : rows) {
    j.begin_object();
    j.key("cpu_info").value(m.cpu_info);
    j.key("backends").value(r.backend == "cpu" ? std::string("CPU") : r.backend);
    j.key("model_filename").value(r.model.filename);
    j.key("model_type").value(r.model.type_label);
    j.key("model_size").value(r.model.size_bytes);
    j.key("model_n_params").value(r.model.n_params);
    j.key("isa").value(r.isa);
    j.key("n_batch").value(r.n_batch);
    j.key("n_threads").value(static_cast<int64_t>(r.n_threads));
    j.key("use_mmap").value(r.use_mmap);
    j.key("n_prompt").value(r.n_prompt);
    j.key("n_gen").value(r.n_gen);
    j.key("test").value(r.test_name());
    j.key("avg_ns").value(static_cast<int64_t>(r.avg_ns()));
    j.key("stddev_ns").value(static_cast<int64_t>(r.stddev_ns()));
    j.key("avg_ts").value(r.avg_ts());
    j.key("stddev_ts").value(r.stddev_ts());
    j.key("samples_ns").begin_array(true);
    for (double ns : r.samples_ns)
      j.value(static_cast<int64_t>(ns));
    j.end_array();
    j.key("samples_ts").begin_array(true);
    for (double ts : r.samples_ts())
      j.value(ts);
    j.end_array();
    j.key("gflops").value(r.gflops());
    j.key("mem_read_bw_bytes_per_s").value(r.mem_bw_bytes_per_s);
    j.key("weight_bytes_per_token").value(r.model.bytes_per_token);
    j.key("bw_ratio").value(r.bandwidth_ratio());
    if (!r.plans.empty())
      j.key("plans").value(r.plans);
    j.key("tokens").value(r.tokens);
    j.end_object();
  }
  j.end_array();
  out << "\n";
}

} // namespace pshard::bench
