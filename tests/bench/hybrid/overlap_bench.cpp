// Overlap is real: a Dynamic plan on the emulated GPU, its copy engine throttled to a
// few GB/s, streams FFN weights while the CPU runs the sub-layers before them. Prints
// the measured time per pass against copy time + compute time (their sum is what a
// runtime without overlap would take) and how many copies ran during CPU sub-layers;
// writes the trace to look at.
//
//   overlap_bench [--pcie GBPS] [--trace overlap.json] [--dir DIR]
#include "bench_util.h"

#include <cstring>

using namespace pshard;
using namespace pshard::bench;

int main(int argc, char** argv) {
  double gbps = 4;
  std::string trace_path = "overlap_trace.json", dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--pcie"))
      gbps = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--trace"))
      trace_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
  }
  auto path = bench_model(dir);
  if (!path.ok())
    return fail(path.status());
  auto model = Model::load(*path);
  if (!model.ok())
    return fail(model.status());

  // Plan for a machine like the emulated one: a GPU much faster than one CPU thread, the
  // same link. Attention resident, FFNs split between CPU and streaming.
  planner::FixedMachineParams mp;
  mp.threads = 1;
  mp.cpu_flops = 8e9;
  mp.cpu_bandwidth = 8e9;
  mp.gpu_flops = 30e9;
  mp.gpu_bandwidth = 10e9;
  mp.h2d_bandwidth = mp.d2h_bandwidth = gbps * 1e9;
  mp.copy_latency_s = 10e-6;
  planner::FixedMachineModel machine(mp);
  planner::CompileOptions o;
  o.tiers = {1, 16};
  o.n_ctx = 256;
  o.threads = 1;
  o.strategy = planner::Strategy::kDynamic;
  planner::ModelGraph graph;
  {
    auto file = gguf::GgufFile::open(*path, gguf::OpenMode::kMetadataOnly);
    auto g = planner::build_model_graph(**file);
    const uint64_t w = g->total_weight_bytes();
    o.budgets = {planner::minimum_budget(*g, o) + w / 3};
  }
  auto sched = compile(*path, machine, o, &graph);
  if (!sched.ok())
    return fail(sched.status());
  const SchedulePlan& plan = sched->plan({0, 0});
  int n_cpu = 0, n_stream = 0, n_res = 0;
  for (auto p : plan.placements)
    (p == fb::schedule::Placement::Cpu           ? n_cpu
     : p == fb::schedule::Placement::GpuStreamed ? n_stream
                                                 : n_res)++;
  std::printf("plan: %s, budget %.1f MiB, tier 1: %d resident, %d streamed, %d on the CPU, "
              "%d slots, prefetch depth %d, predicted %.3f ms/pass\n",
              plan.strategy.c_str(), plan.budget_bytes / 1048576.0, n_res, n_stream, n_cpu,
              plan.stream_slot_count, plan.prefetch_depth, plan.predicted_ms_per_pass);

  EmuOptions eo;
  eo.memory_bytes = plan.budget_bytes;
  eo.link.bytes_per_s = gbps * 1e9;
  eo.link.latency_s = 10e-6;
  auto device = EmuDevice::create(eo);
  if (!device.ok())
    return fail(device.status());
  HybridParams hp;
  hp.n_ctx = 256;
  hp.n_threads = 1;
  hp.vram_budget = plan.budget_bytes;
  auto session = HybridSession::create(**model, &*sched, device->get(), hp);
  if (!session.ok())
    return fail(session.status());
  Timeline timeline;
  (*session)->set_timeline(&timeline);
  std::vector<TokenId> tokens = {1, 20, 30, 40};
  if (auto r = (*session)->decode(tokens); !r.ok())
    return fail(r.status());
  std::vector<double> measured, copy, compute, under;
  int copies = 0, during = 0;
  for (int step = 0; step < 24; ++step) {
    const TokenId t = static_cast<TokenId>(50 + step);
    if (auto r = (*session)->decode(std::span<const TokenId>(&t, 1)); !r.ok())
      return fail(r.status());
    if (step < 4)
      continue; // warm-up
    const int64_t pass = (*session)->stats().passes - 1;
    const PassBreakdown b = breakdown(timeline, pass);
    measured.push_back((*session)->stats().last_pass.measured_ms);
    copy.push_back(b.copy_ms);
    compute.push_back(b.cpu_ms + b.compute_ms);
    under.push_back(b.copy_under_cpu_ms);
    copies += b.copies;
    during += b.copies_during_cpu;
  }
  const double m = median(measured), c = median(copy), k = median(compute);
  std::printf("per decode pass (median of %zu, emu PCIe %.1f GB/s):\n", measured.size(), gbps);
  std::printf("  measured            %8.3f ms\n", m);
  std::printf("  copy time           %8.3f ms  (weights streamed, copy engine busy)\n", c);
  std::printf("  compute time        %8.3f ms  (CPU sub-layers + device kernels)\n", k);
  std::printf("  copy + compute      %8.3f ms  -> overlap saves %.3f ms (%.0f%%)\n", c + k,
              c + k - m, 100.0 * (c + k - m) / (c + k));
  std::printf("  copy under CPU work %8.3f ms; %d of %d copies ran during CPU sub-layers\n",
              median(under), during, copies);
  std::printf("overlap is %s: measured %s copy + compute\n", m < c + k ? "real" : "NOT visible",
              m < c + k ? "<" : ">=");
  if (Status s = timeline.write_json(trace_path); !s.ok())
    return fail(s);
  std::printf("trace: %s (open in ui.perfetto.dev)\n", trace_path.c_str());
  return m < c + k ? 0 : 2;
}
