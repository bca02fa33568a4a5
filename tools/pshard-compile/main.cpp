// pshard-compile: plan a model for a machine ahead of time and write the schedule artifact.
//
//   pshard-compile -m model.gguf --profile laptop.pshprof -o model.pshard
//   pshard-compile -m model.gguf --profile laptop.pshprof -o model.pshard
//       --budgets 512M,1G,2G,4G --tiers 1,4,16,64,256 -c 4096 -t 8 --strategy auto
//   pshard-compile -m model.gguf --profile laptop.pshprof -o model.pshard
//       --contexts 4K,16K,64K --workload 1024:256
//   pshard-compile -m moe.gguf --profile laptop.pshprof -o moe.pshard --routing moe.routing.json
//   pshard-compile -m model.gguf --profile laptop.pshprof --emit mlir   # the IR, planned
//       by the MLIR pass pipeline (builds with PSHARD_BUILD_COMPILER)
//   pshard-compile ... --pipeline mlir -o model.pshard   # the artifact, through the passes
//   pshard-compile -m qwen2vl.gguf --mmproj mmproj.gguf --image-sizes 480p,1080p,1440p ...
//       # a VLM: the vision phase planned per budget and image size too (VLMOpt)
//
// Reads only the GGUF's metadata. Prints the budget × context × tier summary (which
// strategy won, how many sub-layers are resident / streamed / on the CPU, predicted ms
// per pass and tokens/s, VRAM used, which resident set and what switching to it from the
// decode plan costs) from the written artifact, exactly as the runtime will read it, then
// every trade where sharing a resident set beat a forced strategy's faster plan.
#include "pshard/Planner/Planner.h"
#include "pshard/Planner/VisionPlanner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/model/hparams.h"
#include "runtime/model/kv_types.h"
#include "runtime/model/routing_profile.h"
#include "runtime/profile/profile.h"
#include "tools/common/cli_checks.h"
#include "tools/common/cli_image_options.h"
#include "tools/common/llama_flags.h"
#include "tools/common/size_parse.h"
#include "tools/pshard-compile/emit_mlir.h"
#include "tools/schedule/schedule_report.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>

namespace cli = pshard::cli;

namespace {

int fail(const pshard::Status& s) {
  std::cerr << "pshard-compile: " << s.to_string() << "\n";
  return 1;
}

pshard::Status parse_contexts(const std::string& text, std::vector<int64_t>* out) {
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    PSHARD_ASSIGN_OR_RETURN(uint64_t positions, pshard::parse_size(item));
    if (positions == 0 || positions > (1u << 24))
      return pshard::invalid_argument("--contexts takes positions between 1 and 16M, got '" +
                                      item + "'");
    out->push_back(static_cast<int64_t>(positions));
  }
  return pshard::Status::ok_status();
}

void print_trades(const pshard::planner::PlanGrid& grid, std::ostream& out) {
  const auto& w = grid.options.workload;
  for (const pshard::planner::Trade& t : grid.trades) {
    char line[512];
    std::snprintf(line, sizeof line,
                  "trade: %s context %lld tier %lld: auto %.3f ms/pass on a shared resident set; "
                  "%s takes %.3f ms (a set of its own %.3f ms), but the switches cost more: "
                  "workload %lld:%lld %.3f ms shared, %.3f ms on its own set\n",
                  pshard::format_bytes(t.budget_bytes).c_str(), static_cast<long long>(t.context),
                  static_cast<long long>(t.tier), t.auto_ms, t.forced_strategy.c_str(), t.forced_ms,
                  t.own_ms, static_cast<long long>(w.prompt_tokens),
                  static_cast<long long>(w.generated_tokens), t.workload_ms, t.workload_own_ms);
    out << line;
  }
}

pshard::Status parse_budgets(const std::string& text, std::vector<uint64_t>* out) {
  if (text == "auto")
    return pshard::Status::ok_status();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    PSHARD_ASSIGN_OR_RETURN(uint64_t bytes, pshard::parse_size(item));
    out->push_back(bytes);
  }
  return pshard::Status::ok_status();
}

// A model that attends both ways embeds each text in one pass: unless told otherwise, plan
// an encoder's whole position table (EmbeddingGemma: its training context) as the context
// and the context as the largest tier.
void encoder_defaults(const pshard::ModelHParams& hp, bool ctx_given, bool tiers_given,
                      pshard::planner::CompileOptions* o) {
  if (!ctx_given && (hp.family->encoder || hp.family->attends_both_ways))
    o->n_ctx = hp.n_ctx_train;
  if (tiers_given)
    return;
  std::erase_if(o->tiers, [&](int64_t t) { return t >= o->n_ctx; });
  o->tiers.push_back(o->n_ctx);
}

} // namespace

int main(int argc, char** argv) {
  std::string model_path, profile_path, out_path,
      budgets = "auto", strategy = "auto", kv_type = "f16", emit = "artifact",
      kernel_workspace = "profile", contexts, workload = "1024:256", pipeline = "direct",
      routing_path, mmproj_path, image_sizes = "480p,720p,1080p,1440p";
  pshard::planner::CompileOptions options;
  bool quiet = false;
  CLI::App app{"pshard-compile: plan a model for a machine and write its schedule (*.pshard)"};
  app.add_option("-m,--model", model_path, "the model (GGUF; only its metadata is read)")->required();
  app.add_option("--profile", profile_path, "the machine profile (*.pshprof)")->required();
  app.add_option("-o,--output", out_path,
                 "the schedule artifact to write (*.pshard); with --emit mlir, the IR (default: "
                 "stdout)");
  app.add_option("--emit", emit,
                 "artifact (the *.pshard schedule), or mlir: the pshard IR planned by the MLIR "
                 "pass pipeline")
      ->check(CLI::IsMember({"artifact", "mlir"}))
      ->capture_default_str();
  app.add_option("--budgets", budgets,
                 "VRAM budgets, e.g. 512M,1G,2G,4G (0: a CPU-only plan), or auto: a ladder "
                 "from the minimum budget up to the profiled VRAM")->capture_default_str();
  app.add_option("--tiers", options.tiers, "token tiers (new tokens per pass)")
      ->delimiter(',')->capture_default_str()->check(cli::between(1, 1 << 20));
  app.add_option("-c,--ctx", options.n_ctx, "context length to plan for")->capture_default_str()
      ->check(cli::between(1, 1 << 24));
  app.add_option("--contexts", contexts,
                 "context ranges planned apart, e.g. 4K,16K,64K: resident KV caches sized for "
                 "each, so short contexts leave VRAM to weights (default: one range, -c; "
                 "without -c the largest is the context)");
  app.add_option("--workload", workload,
                 "PROMPT:GENERATED tokens of a typical request: switches between the plans of "
                 "a budget are priced against it")
      ->capture_default_str();
  app.add_option("--routing", routing_path,
                 "a routing profile (pshard-profile --routing) of a MoE model: passes are "
                 "expected to touch the experts it measured, not uniformly chosen ones");
  app.add_option("--pipeline", pipeline,
                 "direct (the planner core), or mlir: the same planning through the MLIR pass "
                 "pipeline, which must write the same artifact")
      ->check(CLI::IsMember({"direct", "mlir"}))
      ->capture_default_str();
  app.add_option("-t,--threads", options.threads, "CPU threads (0: the profile's most)")
      ->capture_default_str()->check(cli::between(0, cli::kMaxThreads));
  app.add_option("--kv-type", kv_type,
                 "KV cache element type the plans size caches for: f16 (llama.cpp's default), "
                 "q8_0 (half the bytes) or f32; pshard-run -ctk/-ctv must match")
      ->capture_default_str();
  app.add_option("--strategy", strategy,
                 "auto (search), or force one: gpu-only, static, dynamic, layers")
      ->capture_default_str();
  bool whole_moe = false;
  app.add_flag("--whole-moe", whole_moe,
               "place every MoE block whole (resident, streamed or CPU): no hot experts "
               "resident, none split between copies and the CPU (to compare with)");
  app.add_option("--kernel-workspace", kernel_workspace,
                 "kernel scratch every GPU plan reserves inside its budget: profile (the "
                 "profile's figure; CUDA's ~37 MiB), or bytes, e.g. 0 to plan for the "
                 "emulated GPU only (the CUDA backend refuses such plans)")
      ->capture_default_str();
  app.add_option("--parallel", options.parallel,
                 "sequences served at once (-np, as pshard-server's): resident KV caches hold "
                 "the context for each of them (the device KV pages of a batch) and "
                 "activations their logits; a pass of T tokens is priced as min(T, N) "
                 "sequences, each reading its own KV cache (or recurrent state); a batch "
                 "engine for more sequences is refused")
      ->capture_default_str()
      ->check(cli::between(1, 1 << 16));
  bool swa_full = false;
  app.add_flag("--swa-full", swa_full,
               "keep whole KV caches for sliding-window layers (as llama.cpp's --swa-full) "
               "instead of rings of window + largest tier positions (with --parallel, a pool "
               "of every sequence's last window's pages): costs memory, lets a session rewind "
               "to any position (pshard_context_rewind)");
  app.add_option("--mmproj", mmproj_path,
                 "a VLM's vision projector (llama.cpp's mmproj GGUF; only its metadata is "
                 "read): the vision phase is planned per budget and image size as well, "
                 "sharing the arena with the language phase in time");
  app.add_option("--image-sizes", image_sizes,
                 "with --mmproj, the image-size tiers the vision phase is planned for: named "
                 "16:9 frames (360p, 480p, 720p, 1080p, 1440p, 2160p) or patch counts")
      ->capture_default_str();
  int64_t image_min_tokens = 0, image_max_tokens = 0;
  pshard::cli::add_image_token_options(app, image_min_tokens, image_max_tokens, "--mmproj");
  app.add_flag("-q,--quiet", quiet, "do not print the summary");
  constexpr pshard::FlagSpelling kLlamaFlags[] = {{"-np", "--parallel"}};
  const std::vector<std::string> args = pshard::expand_llama_flags(argc, argv, kLlamaFlags);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args)
    arg_ptrs.push_back(a.c_str());
  CLI11_PARSE(app, static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  if (swa_full)
    options.kv_ring = 0;

  if (kernel_workspace != "profile") {
    auto bytes = pshard::parse_size(kernel_workspace);
    if (!bytes.ok())
      return fail(bytes.status().with_context("--kernel-workspace takes profile or a size"));
    options.kernel_workspace_bytes = *bytes;
  }

  if (pshard::Status s = parse_budgets(budgets, &options.budgets); !s.ok())
    return fail(s);
  if (pshard::Status s = parse_contexts(contexts, &options.contexts); !s.ok())
    return fail(s);
  if (!options.contexts.empty() && app.count("--ctx") == 0)
    options.n_ctx = *std::max_element(options.contexts.begin(), options.contexts.end());
  auto parsed_workload = pshard::planner::parse_workload(workload);
  if (!parsed_workload.ok())
    return fail(parsed_workload.status());
  options.workload = *parsed_workload;
  auto parsed_strategy = pshard::planner::parse_strategy(strategy);
  if (!parsed_strategy.ok())
    return fail(parsed_strategy.status());
  options.strategy = *parsed_strategy;
  options.expert_level = !whole_moe;
  auto parsed_kv = pshard::parse_kv_type(kv_type);
  if (!parsed_kv.ok())
    return fail(parsed_kv.status());
  options.kv_type = *parsed_kv;
  options.pshard_version = PSHARD_VERSION;
  // A file that does not open is reported below (or by the MLIR importer), not here.
  auto file = pshard::gguf::GgufFile::open(model_path, pshard::gguf::OpenMode::kMetadataOnly);
  if (file.ok())
    if (auto hp = pshard::read_model_hparams(**file); hp.ok() && !hp->causal)
      encoder_defaults(*hp, app.count("--ctx") > 0 || !options.contexts.empty(),
                       app.count("--tiers") > 0, &options);
  std::optional<pshard::RoutingProfile> routing;
  if (!routing_path.empty()) {
    auto loaded = pshard::RoutingProfile::load(routing_path);
    if (!loaded.ok())
      return fail(loaded.status());
    routing = std::move(*loaded);
  }

  if ((emit == "mlir" || pipeline == "mlir") && !mmproj_path.empty())
    return fail(pshard::unsupported("the MLIR pipeline does not plan vision phases yet; use "
                                    "--pipeline direct (the default) with --mmproj"));
#ifdef PSHARD_HAVE_MLIR
  if ((emit == "mlir" || pipeline == "mlir") && options.parallel > 1)
    return fail(pshard::unsupported("the MLIR pipeline plans for one sequence; use --pipeline "
                                    "direct with --parallel"));
  if ((emit == "mlir" || pipeline == "mlir") && swa_full)
    return fail(pshard::unsupported("the MLIR pipeline keeps sliding-window caches as rings; "
                                    "use --pipeline direct with --swa-full"));
  const pshard::tools::EmitMlirRequest request{model_path, profile_path, out_path, strategy,
                                               options, routing ? &*routing : nullptr};
  if (emit == "mlir") {
    if (pshard::Status s = pshard::tools::emit_mlir(request); !s.ok())
      return fail(s);
    return 0;
  }
#else
  if (emit == "mlir" || pipeline == "mlir")
    return fail(pshard::unsupported(
        "--emit mlir and --pipeline mlir need the compiler's MLIR part: install MLIR 16 "
        "(libmlir-16-dev mlir-16-tools llvm-16-dev llvm-16-tools) and configure with "
        "-DPSHARD_BUILD_COMPILER=ON"));
#endif
  if (out_path.empty())
    return fail(pshard::invalid_argument("-o/--output is required: the schedule artifact to write"));

  if (!file.ok())
    return fail(file.status());
  auto profile = pshard::Profile::load_file(profile_path);
  if (!profile.ok())
    return fail(profile.status());
  auto machine = pshard::planner::ProfileMachineModel::create(*profile);
  if (!machine.ok())
    return fail(machine.status().with_context("profile '" + profile_path + "'"));

  const auto start = std::chrono::steady_clock::now();
  auto graph = pshard::planner::build_model_graph(**file);
  if (!graph.ok())
    return fail(graph.status());
  if (routing)
    if (pshard::Status s = pshard::planner::apply_routing_profile(*graph, *routing); !s.ok())
      return fail(s.with_context("--routing '" + routing_path + "'"));
#ifdef PSHARD_HAVE_MLIR
  pshard::Result<pshard::planner::PlanGrid> grid =
      pipeline == "mlir" ? pshard::tools::plan_with_mlir(request, (*machine)->summary())
                         : pshard::planner::plan_grid(*graph, **machine, options);
#else
  pshard::Result<pshard::planner::PlanGrid> grid =
      pshard::planner::plan_grid(*graph, **machine, options);
#endif
  if (!grid.ok())
    return fail(grid.status());
  std::optional<pshard::planner::VisionGraph> vision;
  std::optional<pshard::planner::VisionPhasePlans> vision_plans;
  std::vector<pshard::planner::ImageTier> image_tiers;
  if (!mmproj_path.empty()) {
    auto projector =
        pshard::gguf::GgufFile::open(mmproj_path, pshard::gguf::OpenMode::kMetadataOnly);
    if (!projector.ok())
      return fail(projector.status().with_context("--mmproj"));
    auto built = pshard::planner::build_vision_graph(**projector);
    if (!built.ok())
      return fail(built.status().with_context("--mmproj '" + mmproj_path + "'"));
    vision = std::move(*built);
    if (pshard::Status st =
            pshard::set_image_tokens(vision->hp, image_min_tokens, image_max_tokens);
        !st.ok())
      return fail(st);
    auto tiers = pshard::planner::parse_image_tiers(image_sizes, *vision);
    if (!tiers.ok())
      return fail(tiers.status().with_context("--image-sizes"));
    image_tiers = std::move(*tiers);
    vision_plans = pshard::planner::plan_vision_phase(*vision, **machine, *grid, image_tiers);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string tool = std::string("pshard-compile ") + PSHARD_VERSION;
  if (pshard::Status s = pshard::planner::write_schedule_file(
          *graph, *grid, out_path, tool, vision_plans ? &*vision_plans : nullptr);
      !s.ok())
    return fail(s);
  auto written = pshard::Schedule::load_file(out_path);
  if (!written.ok())
    return fail(written.status());
  if (!quiet) {
    std::cout << graph->name << ": " << graph->sublayers.size() << " sub-layers, "
              << pshard::format_bytes(graph->total_weight_bytes()) << " of weights; machine "
              << grid->machine.name << "; context " << grid->options.n_ctx << ", "
              << grid->options.threads << " threads; " << grid->options.parallel
              << " parallel sequence(s); minimum budget "
              << pshard::format_bytes(grid->minimum_budget_bytes) << "\n";
    pshard::print_summary(*written, std::cout);
    print_trades(*grid, std::cout);
    if (vision) {
      pshard::planner::VisionPlanOptions vo;
      vo.threads = grid->options.threads;
      vo.kernel_workspace_bytes = grid->options.kernel_workspace_bytes.value_or(0);
      std::cout << "vision (" << pshard::projector_type_name(vision->hp.type) << ", "
                << vision->sublayers.size() << " sub-layers, "
                << pshard::format_bytes(vision->total_weight_bytes())
                << " of weights): minimum VRAM per image size, and predicted vision-phase ms "
                   "per budget (VLMOpt: phases share the arena, vision weights streamed or on "
                   "the CPU, tiled attention)\n"
                << pshard::planner::vision_table(*vision, **machine, image_tiers, grid->budgets,
                                                 grid->minimum_budget_bytes, vo);
      const int64_t tokens = image_tiers.back().patches / (vision->hp.n_merge * vision->hp.n_merge);
      if (tokens > grid->options.n_ctx)
        std::cout << "note: a " << image_tiers.back().name << " image is " << tokens
                  << " tokens, more than the planned context " << grid->options.n_ctx
                  << "; plan with -c covering the image and the prompt\n";
    }
    std::cout << "planned " << grid->budgets.size() << " budgets x " << grid->contexts.size()
              << " context ranges x " << grid->tiers.size() << " tiers in " << seconds * 1e3
              << " ms (" << pipeline << "); wrote " << out_path << "\n";
  }
  return 0;
}
