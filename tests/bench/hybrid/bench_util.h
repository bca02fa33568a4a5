// Shared by the hybrid runtime's benchmarks: a model big enough that copies and
// kernels take measurable time, schedules compiled in-process, and per-pass timings
// split by track from the session's timeline.
#pragma once

#include "pshard/Planner/Planner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/backends/emu/emu_device.h"
#include "runtime/executor/hybrid_session.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

namespace pshard::bench {

inline int fail(const Status& s) {
  std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
  return 1;
}

// A generated model in `dir`, made once and reused by later runs (named after the spec).
inline Result<std::string> generated_model(const std::string& dir, const ModelSpec& spec) {
  const std::string path = dir + "/" + spec.name + "-" + tensor_type_name(spec.type) + ".gguf";
  if (std::filesystem::exists(path))
    return path;
  PSHARD_RETURN_IF_ERROR(write_model(spec, path));
  return path;
}

// ~60 MB of F16 weights in 8 layers: a streamed FFN copy takes milliseconds on a
// few-GB/s link and a CPU FFN about as long, so overlap shows.
inline Result<std::string> bench_model(const std::string& dir) {
  ModelSpec spec;
  spec.name = "hybrid-bench";
  spec.n_embd = 512;
  spec.n_layer = 8;
  spec.n_head = 8;
  spec.n_head_kv = 4;
  spec.n_ff = 1536;
  spec.type = TensorType::kF16;
  return generated_model(dir, spec);
}

inline Result<Schedule> compile(const std::string& model_path, const planner::MachineModel& m,
                                planner::CompileOptions o,
                                planner::ModelGraph* graph_out = nullptr) {
  PSHARD_ASSIGN_OR_RETURN(auto file,
                          gguf::GgufFile::open(model_path, gguf::OpenMode::kMetadataOnly));
  PSHARD_ASSIGN_OR_RETURN(planner::ModelGraph graph, planner::build_model_graph(*file));
  PSHARD_ASSIGN_OR_RETURN(planner::PlanGrid grid, planner::plan_grid(graph, m, o));
  PSHARD_ASSIGN_OR_RETURN(auto bytes, planner::serialize_schedule(graph, grid, "hybrid-bench"));
  if (graph_out)
    *graph_out = std::move(graph);
  return Schedule::load_bytes(bytes);
}

// Busy time of each track in one pass, and how much copying ran while the CPU worked.
struct PassBreakdown {
  double cpu_ms = 0, compute_ms = 0, copy_ms = 0, transfer_ms = 0;
  double copy_under_cpu_ms = 0; // copy time overlapping CPU sub-layers
  int copies = 0, copies_during_cpu = 0;
};

inline PassBreakdown breakdown(const Timeline& t, int64_t pass) {
  PassBreakdown b;
  std::vector<const Slice*> cpu;
  for (const Slice& s : t.slices())
    if (s.pass == pass && s.track == Track::kCpu)
      cpu.push_back(&s);
  for (const Slice& s : t.slices()) {
    if (s.pass != pass)
      continue;
    const double ms = static_cast<double>(s.end_ns - s.begin_ns) / 1e6;
    switch (s.track) {
    case Track::kCpu:
      b.cpu_ms += ms;
      break;
    case Track::kCompute:
      b.compute_ms += ms;
      break;
    case Track::kTransfer:
      b.transfer_ms += ms;
      break;
    case Track::kCopy: {
      b.copy_ms += ms;
      ++b.copies;
      double under = 0;
      for (const Slice* c : cpu)
        under += static_cast<double>(std::max<int64_t>(0, std::min(s.end_ns, c->end_ns) -
                                                              std::max(s.begin_ns, c->begin_ns))) /
                 1e6;
      b.copy_under_cpu_ms += under;
      b.copies_during_cpu += under > 0;
      break;
    }
    }
  }
  return b;
}

inline double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace pshard::bench
