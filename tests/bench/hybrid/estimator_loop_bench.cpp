// The estimator loop: profile the emulated GPU (pshard-profile --backend emu's suite,
// in-process, or a profile file), compile the benchmark model against that profile,
// run every budget's plan on the same emulated GPU at tier 1 and at the largest tier
// with the KV cache full (the context the plans are priced at), and print predicted and
// measured milliseconds per pass side by side (target: within 30%).
//
//   estimator_loop_bench [--pcie GBPS] [--profile emu.pshprof] [--dir DIR]
#include "bench_util.h"
#include "runtime/backends/emu/emu_measurer.h"
#include "tools/pshard-profile/suite.h"

#include <cmath>
#include <cstring>

using namespace pshard;
using namespace pshard::bench;

namespace {

Result<Profile> emu_profile(const EmuOptions& eo, const std::string& path) {
  if (!path.empty())
    return Profile::load_file(path);
  PSHARD_ASSIGN_OR_RETURN(auto measurer, EmuMeasurer::create(eo));
  profiling::SuiteOptions so;
  so.quick = true;
  so.threads = {1};
  so.device = measurer.get();
  so.show_progress = false;
  so.machine_name = "emu-bench";
  PSHARD_ASSIGN_OR_RETURN(fb::ProfileT measured, profiling::run_suite(so));
  return Profile::from_object(std::move(measured));
}

// Median measured ms of passes of `tier` tokens with the plan of that tier, each at a
// full KV cache: the context the estimator prices every plan at (n_ctx cached
// positions read by attention, and copied for streamed attention blocks).
Result<double> measure(const Model& model, const Schedule& s, EmuOptions eo, uint64_t budget,
                       int64_t tier, int64_t n_ctx) {
  eo.memory_bytes = std::max<uint64_t>(budget, 1 << 20);
  PSHARD_ASSIGN_OR_RETURN(auto device, EmuDevice::create(eo));
  HybridParams hp;
  hp.n_ctx = n_ctx;
  hp.n_threads = 1;
  hp.vram_budget = budget;
  hp.force_tier = tier;
  PSHARD_ASSIGN_OR_RETURN(auto session, HybridSession::create(model, &s, device.get(), hp));
  const int64_t filled = n_ctx - tier;
  std::vector<TokenId> prefix(static_cast<size_t>(filled));
  for (size_t i = 0; i < prefix.size(); ++i)
    prefix[i] = static_cast<TokenId>(1 + (i * 13) % 500);
  PSHARD_RETURN_IF_ERROR(session->decode(prefix).status());
  std::vector<double> ms;
  std::vector<TokenId> chunk(static_cast<size_t>(tier));
  for (int rep = 0; rep < (tier == 1 ? 24 : 8); ++rep) {
    for (size_t i = 0; i < chunk.size(); ++i)
      chunk[i] = static_cast<TokenId>(1 + (rep * 31 + i * 7) % 500);
    PSHARD_RETURN_IF_ERROR(session->rewind(filled));
    PSHARD_RETURN_IF_ERROR(session->decode(chunk).status());
    if (rep >= 3) // warm-up
      ms.push_back(session->stats().last_pass.measured_ms);
  }
  return median(ms);
}

} // namespace

int main(int argc, char** argv) {
  double gbps = 4;
  std::string profile_path, dir = "/tmp";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--pcie"))
      gbps = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--profile"))
      profile_path = argv[i + 1];
    else if (!std::strcmp(argv[i], "--dir"))
      dir = argv[i + 1];
  }
  EmuOptions eo;
  eo.link.bytes_per_s = gbps * 1e9;
  eo.link.latency_s = 10e-6;
  eo.compute_threads = 1;
  // ~180 MiB of F16 weights, several times the last-level cache like any real model:
  // profiles time weights read from DRAM, and a model that half fits the cache would
  // run faster than any profile of this machine says.
  ModelSpec spec;
  spec.name = "estimator-bench";
  spec.n_embd = 1024;
  spec.n_layer = 8;
  spec.n_head = 8;
  spec.n_head_kv = 4;
  spec.n_ff = 2816;
  spec.type = TensorType::kF16;
  auto path = generated_model(dir, spec);
  if (!path.ok())
    return fail(path.status());
  auto model = Model::load(*path);
  if (!model.ok())
    return fail(model.status());
  std::printf("profiling the emulated GPU (PCIe %.1f GB/s, 1 compute thread)...\n", gbps);
  auto profile = emu_profile(eo, profile_path);
  if (!profile.ok())
    return fail(profile.status());
  auto machine = planner::ProfileMachineModel::create(*profile);
  if (!machine.ok())
    return fail(machine.status());

  planner::CompileOptions o;
  o.tiers = {1, 4, 16, 64};
  o.n_ctx = 256; // small, so that filling the KV cache before each measurement is quick
  o.threads = 1;
  auto file = gguf::GgufFile::open(*path, gguf::OpenMode::kMetadataOnly);
  auto g = planner::build_model_graph(**file);
  const uint64_t w = g->total_weight_bytes(), lo = planner::minimum_budget(*g, o);
  o.budgets = {0, lo, lo + w / 3, lo + 2 * w / 3, lo + w + w / 4};
  auto sched = compile(*path, **machine, o);
  if (!sched.ok())
    return fail(sched.status());

  std::printf("\n%10s %5s %-9s %4s %4s %4s %12s %12s %7s\n", "budget", "tier", "strategy", "res",
              "str", "cpu", "predicted", "measured", "error");
  int within = 0, total = 0;
  for (size_t b = 0; b < sched->budgets().size(); ++b)
    for (size_t t : {size_t{0}, sched->tiers().size() - 1}) {
      const SchedulePlan& p = sched->plan({b, t});
      int n[3] = {0, 0, 0};
      for (auto pl : p.placements)
        ++n[static_cast<int>(pl)];
      auto ms = measure(**model, *sched, eo, p.budget_bytes, p.tier, o.n_ctx);
      if (!ms.ok())
        return fail(ms.status());
      const double err = (*ms - p.predicted_ms_per_pass) / p.predicted_ms_per_pass;
      ++total;
      within += std::fabs(err) <= 0.30;
      std::printf("%8.1fMiB %5lld %-9s %4d %4d %4d %9.3f ms %9.3f ms %+6.0f%%%s\n",
                  p.budget_bytes / 1048576.0, static_cast<long long>(p.tier), p.strategy.c_str(),
                  n[0], n[1], n[2], p.predicted_ms_per_pass, *ms, 100 * err,
                  std::fabs(err) <= 0.30 ? "" : "  (outside 30%)");
    }
  std::printf("\n%d of %d plans within 30%% of their predicted time per pass\n", within, total);
  return 0;
}
