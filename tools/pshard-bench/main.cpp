// pshard-bench: llama-bench's table for pshard's CPU runtime, with the machine's
// memory read bandwidth measured in the same run.
//
//   pshard-bench -m llama1b-q4_0.gguf -p 128 -n 32 -t 1,2 -r 5
//   pshard-bench -m a.gguf,b.gguf -p 0 -n 32 --isa avx512,avx2 -o json
//   pshard-bench -m model.gguf -npp 128 -ntg 32 -npl 1,4,16 -s model.pshard   # batched mode
//
// For every tg row it prints achieved bytes/s (weight bytes read per token x
// tokens/s) as a share of the measured bandwidth; for pp rows the matmul GFLOP/s.
#include "runtime/core/thread_pool.h"
#include "runtime/kernels/cpu_isa.h"
#include "runtime/model/model.h"
#include "tools/common/cli_checks.h"
#include "tools/common/cli_hybrid_options.h"
#include "tools/common/cli_kv_options.h"
#include "tools/common/comma_list.h"
#include "tools/common/llama_flags.h"
#include "tools/pshard-bench/batched_bench.h"
#include "tools/pshard-bench/bench_output.h"
#include "tools/pshard-bench/memory_bandwidth.h"
#include "tools/pshard-bench/model_bench.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <map>

namespace cli = pshard::cli;

namespace {

using namespace pshard;
using namespace pshard::bench;

bool parse_ints(const std::string& s, std::vector<int64_t>* out) {
  out->clear();
  for (const std::string& item : comma_list(s)) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (*end != '\0' || v < 0)
      return false;
    out->push_back(v);
  }
  return !out->empty();
}

int fail(const std::string& message) {
  std::cerr << "pshard-bench: " << message << "\n";
  return 1;
}

// Batched mode (llama-batched-bench's -npp/-ntg/-npl): one model, one thread count.
int run_batched(BatchedOptions& b, const BenchOptions& opt, const std::string& prompts,
                const std::string& gens, const std::string& parallel) {
  if (opt.models.size() != 1)
    return fail("batched mode (-npp/-ntg/-npl) takes one model");
  if (opt.threads.size() > 1)
    return fail("batched mode takes one -t");
  b.model_path = opt.models.front();
  b.threads = opt.threads.empty() ? 0 : opt.threads.front();
  b.output = opt.output == "md" ? "md" : "jsonl";
  if (!parse_ints(prompts, &b.n_pp) || !parse_ints(gens, &b.n_tg) ||
      !parse_ints(parallel, &b.n_pl) ||
      std::any_of(b.n_pl.begin(), b.n_pl.end(), [](int64_t v) { return v < 1; }))
    return fail("-npp and -ntg take comma-separated non-negative integers, -npl positive ones");
  auto report = run_batched_bench(b, [](const BatchedRow& row) {
    std::cerr << "pshard-bench: PP " << row.pp << " TG " << row.tg << " B " << row.pl << "\n";
  });
  if (!report.ok())
    return fail(report.status().to_string());
  if (b.output == "md")
    print_batched_markdown(std::cout, *report);
  else
    print_batched_jsonl(std::cout, *report);
  return 0;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

} // namespace

int main(int argc, char** argv) {
  BenchOptions opt;
  std::vector<std::string> models;
  std::string prompts = "512", gens = "128", threads, isas, mmaps = "1";
  CLI::App app{"pshard-bench: prompt-processing and generation speed, llama-bench style"};
  app.add_option("-m,--model", models, "GGUF model(s); repeat or separate with commas")->required();
  app.add_option("-p,--n-prompt", prompts, "prompt lengths (ppN tests); 0 skips")
      ->capture_default_str();
  app.add_option("-n,--n-gen", gens, "generated lengths (tgN tests); 0 skips")
      ->capture_default_str();
  app.add_option("-t,--threads", threads,
                 "thread counts, e.g. 1,2 (default: all hardware threads)");
  app.add_option("-r,--repetitions", opt.repetitions, "repetitions of each test")
      ->capture_default_str()
      ->check(cli::between(1, 1000));
  app.add_option("-o,--output", opt.output, "output format: md, csv or json (batched: md or jsonl)")
      ->check(CLI::IsMember({"md", "csv", "json", "jsonl"}))
      ->capture_default_str();
  app.add_option("--isa", isas,
                 "ISA paths to sweep, e.g. avx512,avx2vnni,avx2 (default: the active one; "
                 "PSHARD_ISA caps it)");
  app.add_option("--text", opt.text_path,
                 "take the tests' tokens from this text (the model's vocabulary, cycled) "
                 "instead of random ids: a MoE then routes as on that text, as a routing "
                 "profile of it expects")
      ->check(CLI::ExistingFile);
  app.add_option("--bw-mib", opt.bandwidth_mib, "MiB read by the bandwidth probe")
      ->capture_default_str()
      ->check(cli::between(1, 1 << 20));
  app.add_option("--mmap", mmaps,
                 "1: weights used in place from the file mapping; 0: read into RAM on huge "
                 "pages (llama.cpp's --no-mmap); 0,1 sweeps both (llama-bench: -mmp)")
      ->capture_default_str();
  // Batched mode, llama-batched-bench's flags (-npp, -ntg, -npl) and pshard-run's.
  BatchedOptions batched;
  std::string batch_pp, batch_tg, batch_pl;
  app.add_option("--n-pp", batch_pp, "batched mode (-npp): prompt lengths per sequence");
  app.add_option("--n-tg", batch_tg, "batched mode (-ntg): tokens generated per sequence");
  app.add_option("--n-pl", batch_pl, "batched mode (-npl): numbers of sequences decoded together");
  HybridTarget target; // both modes: the CPU alone, or a schedule's plans on a device
  cli::add_hybrid_options(app, target.schedule_path, target.backend, target.vram,
                          target.emu_pcie_gbps);
  app.add_option("-c,--ctx-size", batched.n_ctx, "batched mode: positions per sequence")
      ->check(cli::at_least(0));
  app.add_option("-b,--batch-size", batched.n_batch,
                 "batched mode: tokens one pass carries at most")
      ->check(cli::between(1, 1 << 20));
  app.add_flag("--swa-full", batched.swa_full,
               "batched mode: sliding-window layers keep every position's KV pages instead of "
               "their last window's");
  cli::add_kv_type_options(app, batched.cache_type_k, batched.cache_type_v);
  constexpr FlagSpelling kLlamaFlags[] = {{"-npp", "--n-pp"},
                                          {"-ntg", "--n-tg"},
                                          {"-npl", "--n-pl"},
                                          {"-ctk", "--cache-type-k"},
                                          {"-ctv", "--cache-type-v"}};
  const std::vector<std::string> args = expand_llama_flags(argc, argv, kLlamaFlags);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args)
    arg_ptrs.push_back(a.c_str());
  CLI11_PARSE(app, static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  const bool batched_mode = !batch_pp.empty() || !batch_tg.empty() || !batch_pl.empty();

  for (const std::string& m : models)
    for (const std::string& part : comma_list(m))
      opt.models.push_back(part);
  if (!parse_ints(prompts, &opt.n_prompt) || !parse_ints(gens, &opt.n_gen))
    return fail("-p and -n take comma-separated non-negative integers");
  std::vector<int64_t> thread_list;
  if (threads.empty())
    thread_list = {ThreadPool::hardware_threads()};
  else if (!parse_ints(threads, &thread_list))
    return fail("-t takes comma-separated positive integers");
  for (int64_t t : thread_list) {
    if (t <= 0)
      return fail("-t takes comma-separated positive integers");
    opt.threads.push_back(static_cast<int>(t));
  }
  if (opt.repetitions < 1)
    return fail("-r must be at least 1");
  if (!parse_ints(mmaps, &opt.use_mmap) ||
      std::any_of(opt.use_mmap.begin(), opt.use_mmap.end(), [](int64_t v) { return v > 1; }))
    return fail("--mmap takes 0, 1 or 0,1");
  std::vector<kernels::Isa> isa_list;
  for (const std::string& name : comma_list(isas)) {
    kernels::Isa isa;
    if (!kernels::parse_isa(name, &isa))
      return fail("unknown ISA '" + name + "' (expected scalar, avx2 or avx512)");
    if (!kernels::isa_supported(isa))
      return fail(std::string("this CPU lacks the ") + kernels::isa_name(isa) + " path");
    isa_list.push_back(isa);
  }
  if (isa_list.empty())
    isa_list.push_back(kernels::active_isa());
  if (Status s = BenchSession::check_target(target); !s.ok())
    return fail(s.to_string());
  batched.target = target;
  if (batched_mode && !opt.text_path.empty())
    return fail("--text gives the ppN/tgN tests their tokens; the batched mode (-npp/-ntg/-npl) "
                "takes none: leave it out there");
  if (batched_mode)
    return run_batched(batched, opt, batch_pp.empty() ? "128" : batch_pp,
                       batch_tg.empty() ? "128" : batch_tg,
                       batch_pl.empty() ? "1,2,4,8,16" : batch_pl);

  // The bandwidth probe runs on the best path, whatever path the models run.
  MachineInfo machine{cpu_model_name(), {}};
  std::map<int, double> bandwidth;
  const kernels::Isa model_isa = kernels::active_isa();
  kernels::force_isa(kernels::detected_isa());
  for (int t : opt.threads) {
    if (bandwidth.count(t))
      continue;
    std::cerr << "pshard-bench: measuring memory read bandwidth with " << t << " thread(s)...\n";
    const BandwidthProbe probe =
        measure_read_bandwidth(t, static_cast<size_t>(opt.bandwidth_mib) << 20, 9);
    for (const BandwidthVariant& v : probe.variants)
      std::cerr << "pshard-bench:   " << v.name << ": " << v.bytes_per_s / 1e9 << " GB/s\n";
    bandwidth[t] = probe.best_bytes_per_s;
    machine.bandwidth.push_back({t, bandwidth[t]});
  }
  kernels::force_isa(model_isa);

  std::vector<BenchRow> rows;
  int test_index = 0;
  auto positive = [](const std::vector<int64_t>& v) {
    return static_cast<size_t>(std::count_if(v.begin(), v.end(), [](int64_t n) { return n > 0; }));
  };
  const size_t per_model = isa_list.size() * opt.threads.size();
  size_t n_tests = opt.models.size() * opt.use_mmap.size() * per_model *
                   (positive(opt.n_prompt) + positive(opt.n_gen));
  for (const std::string& path : opt.models)
    for (int64_t use_mmap : opt.use_mmap) {
      auto model =
          Model::load(path, use_mmap ? gguf::OpenMode::kMapData : gguf::OpenMode::kReadData);
      if (!model.ok())
        return fail(model.status().to_string());
      const ModelFacts facts = describe_model(**model, base_name(path));
      std::vector<TokenId> text;
      if (!opt.text_path.empty()) {
        auto ids = text_tokens(**model, opt.text_path);
        if (!ids.ok())
          return fail(ids.status().to_string());
        text = std::move(*ids);
      }
      // A model that attends both ways embeds: its pp test embeds the prompt in one pass,
      // and it has no tg test.
      const bool embeds = !(*model)->hparams().causal;
      if (embeds && positive(opt.n_gen) > 0) {
        n_tests -= per_model * positive(opt.n_gen);
        std::cerr << "pshard-bench: " << facts.filename
                  << " only embeds (attention both ways): its pp tests embed the prompt in one "
                     "pass, and its tg tests are skipped\n";
      }
      for (kernels::Isa isa : isa_list) {
        kernels::force_isa(isa);
        for (int t : opt.threads) {
          std::vector<std::pair<int64_t, int64_t>> tests;
          for (int64_t p : opt.n_prompt)
            if (p > 0)
              tests.push_back({p, 0});
          for (int64_t g : opt.n_gen)
            if (g > 0 && !embeds)
              tests.push_back({0, g});
          for (const auto& [p, g] : tests) {
            ++test_index;
            BenchRow row;
            row.model = facts;
            row.isa = kernels::isa_name(isa);
            row.n_threads = t;
            row.use_mmap = use_mmap != 0;
            row.n_prompt = p;
            row.n_gen = g;
            row.mem_bw_bytes_per_s = bandwidth[t];
            if (!text.empty())
              row.tokens =
                  base_name(opt.text_path) + " (" + std::to_string(text.size()) + " tokens)";
            auto progress = [&](int rep) {
              std::cerr << "pshard-bench: [" << test_index << "/" << n_tests << "] "
                        << facts.filename << " " << row.isa << " threads " << t << " "
                        << row.test_name() << " "
                        << (rep == 0 ? std::string("warm-up")
                                     : "rep " + std::to_string(rep) + "/" +
                                           std::to_string(opt.repetitions))
                        << "\n";
            };
            if (Status s = run_test(**model, target, opt.repetitions, row, text, progress); !s.ok())
              return fail(s.to_string());
            rows.push_back(row);
          }
        }
      }
    }
  kernels::force_isa(model_isa);

  if (opt.output == "json")
    print_json(std::cout, rows, machine);
  else if (opt.output == "csv")
    print_csv(std::cout, rows, machine);
  else
    print_markdown(std::cout, rows, machine);
  return 0;
}
