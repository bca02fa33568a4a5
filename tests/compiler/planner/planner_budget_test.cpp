// Budgets: the minimum-budget error, CPU-only plans, no-GPU machines, the auto ladder, and
// the 235B-shaped MoE planning time against the shipped laptop profile.
#include "pshard/Planner/Planner.h"
#include "test_shapes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>

namespace pshard::planner {
namespace {

ModelHParams small_model() { return testing::llama1b_shape(); }

TEST(PlannerBudgets, BelowTheMinimumIsAnErrorNamingIt) {
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  const FixedMachineModel machine({});
  CompileOptions o;
  const uint64_t minimum = minimum_budget(graph, o);
  o.budgets = {minimum - 1};
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_FALSE(grid.ok());
  EXPECT_EQ(grid.status().code(), StatusCode::kOutOfMemory);
  EXPECT_NE(grid.status().message().find(std::to_string(minimum) + " B"), std::string::npos)
      << grid.status().message();
  EXPECT_NE(grid.status().message().find("context 4096"), std::string::npos);
  o.budgets = {minimum};
  EXPECT_TRUE(plan_grid(graph, machine, o).ok());
  // A longer context needs more: the minimum grows with the KV cache.
  CompileOptions longer = o;
  longer.n_ctx = 32768;
  EXPECT_GT(minimum_budget(graph, longer), minimum);
}

// --parallel: every resident KV cache holds the context for each sequence served, the
// activations the logits of min(tier, parallel) rows, and the minimum budget grows with
// them; one sequence plans exactly as before.
TEST(PlannerBudgets, ParallelSequencesSizeTheResidentKvCachesAndLogits) {
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  const FixedMachineModel machine({});
  CompileOptions one;
  one.tiers = {1, 4, 16};
  one.n_ctx = 1024;
  one.strategy = Strategy::kStatic; // attention and its KV cache resident
  CompileOptions four = one;
  four.parallel = 4;
  EXPECT_GT(minimum_budget(graph, four), minimum_budget(graph, one));
  one.budgets = four.budgets = {1ull << 30};
  const Result<PlanGrid> a = plan_grid(graph, machine, one), b = plan_grid(graph, machine, four);
  ASSERT_TRUE(a.ok() && b.ok()) << a.status().to_string() << b.status().to_string();
  int kv_buffers = 0;
  for (size_t t = 0; t < one.tiers.size(); ++t) {
    const int64_t tier = one.tiers[t];
    for (const VramBuffer& buf : b->at(0, t).vram_layout) {
      const SubLayerInfo* s = buf.sublayer >= 0 ? &graph.sublayers[buf.sublayer] : nullptr;
      if (buf.kind == BufferKind::kKvCache) {
        EXPECT_EQ(buf.size, s->kv_bytes_per_token(one.kv_type) * 1024 * 4);
        ++kv_buffers;
      }
      if (buf.kind == BufferKind::kActivations) {
        EXPECT_EQ(buf.size, graph.activation_bytes(tier, std::min<int64_t>(tier, 4)));
      }
    }
    for (const VramBuffer& buf : a->at(0, t).vram_layout)
      if (buf.kind == BufferKind::kActivations) {
        EXPECT_EQ(buf.size, graph.activation_bytes(tier));
      }
  }
  EXPECT_GT(kv_buffers, 0) << "no plan kept a KV cache resident";
}

// The GPU backend's fixed kernel scratch is inside the budget: every GPU plan's
// workspace buffer holds it and the minimum budget grows by it; the compile option
// overrides the machine's figure.
TEST(PlannerBudgets, EveryGpuPlanReservesTheKernelScratch) {
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  FixedMachineParams p;
  p.kernel_workspace_bytes = 37ull << 20;
  const FixedMachineModel cuda_like(p);
  const FixedMachineModel emu_like({});
  CompileOptions o;
  o.tiers = {1, 16};
  const uint64_t plain = minimum_budget(graph, emu_like, o);
  const uint64_t with_scratch = minimum_budget(graph, cuda_like, o);
  EXPECT_EQ(with_scratch - plain, 37ull << 20);
  EXPECT_EQ(minimum_budget(graph, o), plain) << "options without the figure count none";

  o.budgets = {0, with_scratch, 1ull << 30};
  const Result<PlanGrid> grid = plan_grid(graph, cuda_like, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  EXPECT_EQ(grid->options.kernel_workspace_bytes, std::optional<uint64_t>(37ull << 20));
  EXPECT_EQ(grid->minimum_budget_bytes, with_scratch);
  for (size_t b = 0; b < grid->budgets.size(); ++b)
    for (size_t t = 0; t < grid->tiers.size(); ++t) {
      const Plan& plan = grid->at(b, t);
      uint64_t workspace = 0;
      for (const VramBuffer& buf : plan.vram_layout)
        if (buf.kind == BufferKind::kWorkspace)
          workspace = buf.size;
      if (grid->budgets[b] == 0) {
        EXPECT_EQ(workspace, 0u);
        continue;
      }
      EXPECT_EQ(workspace, graph.attention_workspace_bytes(plan.tier) + (37ull << 20));
      EXPECT_LE(plan.arena_bytes, plan.budget_bytes);
    }
  o.budgets = {with_scratch - 1};
  const Result<PlanGrid> below = plan_grid(graph, cuda_like, o);
  ASSERT_FALSE(below.ok());
  EXPECT_NE(below.status().message().find("kernel scratch"), std::string::npos)
      << below.status().message();
  o.kernel_workspace_bytes = 0; // planning for the emulated GPU on a CUDA profile
  EXPECT_TRUE(plan_grid(graph, cuda_like, o).ok());
}

TEST(PlannerBudgets, ZeroMeansCpuOnly) {
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  const FixedMachineModel machine({});
  CompileOptions o;
  o.budgets = {0, 1ull << 30};
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  for (const Plan& p : grid->plans[0].back()) {
    EXPECT_EQ(p.strategy, "cpu-only");
    EXPECT_EQ(p.arena_bytes, 0u);
    EXPECT_EQ(p.count(Placement::kCpu), static_cast<int>(graph.sublayers.size()));
  }
}

TEST(PlannerBudgets, NoGpuMachine) {
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  FixedMachineParams p;
  p.has_gpu = false;
  const FixedMachineModel machine(p);
  CompileOptions o;
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  EXPECT_EQ(grid->budgets, std::vector<uint64_t>{0});
  o.budgets = {1ull << 30};
  EXPECT_EQ(plan_grid(graph, machine, o).status().code(), StatusCode::kInvalidArgument);
}

TEST(PlannerBudgets, AutoLadderRisesToTheVram) {
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  FixedMachineParams p;
  p.vram_bytes = 8ull << 30;
  const FixedMachineModel machine(p);
  CompileOptions o;
  const std::vector<uint64_t> ladder = auto_budgets(graph, machine, o);
  ASSERT_GE(ladder.size(), 5u);
  EXPECT_GE(ladder.front(), minimum_budget(graph, o));
  EXPECT_LE(ladder.back(), p.vram_bytes);
  EXPECT_TRUE(std::is_sorted(ladder.begin(), ladder.end()));
  // This ~1 GB model fits 8 GiB many times over: the top rung is full residency, not the
  // VRAM, and it holds every sub-layer.
  EXPECT_LT(ladder.back(), 2ull << 30);
  o.budgets = {ladder.back()};
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  for (const Plan& plan : grid->plans[0].back())
    for (Placement pl : plan.placements)
      EXPECT_EQ(pl, Placement::kGpuResident) << "tier " << plan.tier;
}

TEST(PlannerBudgets, DifferentStrategiesWinWhereTheyShould) {
  // Decode (tier 1) at a small budget keeps most non-resident sub-layers on the CPU
  // (streaming only what hides behind CPU work); a large tier streams most to the GPU,
  // each on a resident set of its own when the workload's switches pay for it.
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  FixedMachineParams p;
  p.cpu_flops = 300e9;
  p.cpu_bandwidth = 60e9;
  p.gpu_flops = 30e12;
  p.gpu_bandwidth = 250e9;
  p.h2d_bandwidth = 12e9;
  const FixedMachineModel machine(p);
  CompileOptions o;
  o.budgets = {256ull << 20};
  o.tiers = {1, 256};
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  const Plan& decode = grid->at(0, 0);
  const Plan& prefill = grid->at(0, 1);
  EXPECT_GT(decode.count(Placement::kCpu), decode.count(Placement::kGpuStreamed)) << decode.strategy;
  EXPECT_GT(prefill.count(Placement::kGpuStreamed), prefill.count(Placement::kCpu)) << prefill.strategy;
  // Where the two tiers keep different sets, the switch between them is recorded both ways.
  auto resident = [](const Plan& p) {
    std::vector<bool> r;
    for (Placement q : p.placements)
      r.push_back(q == Placement::kGpuResident);
    return r;
  };
  int recorded = 0;
  for (const PlanSwitch& sw : grid->switches[0])
    recorded += sw.from_context == o.n_ctx && sw.to_context == o.n_ctx;
  EXPECT_EQ(recorded, resident(decode) == resident(prefill) ? 0 : 2);
}

#if defined(__SANITIZE_ADDRESS__) // GCC defines it under -fsanitize=address (CI's ASan build)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

TEST(PlannerTiming, Moe235bShapeTenBudgetsSixTiers) {
  const std::string path = std::string(PSHARD_PROFILES_BUILD_DIR) + "/laptop-rtx4060-8gb.pshprof";
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << "shipped profile not built: " << path;
  Result<Profile> profile = Profile::load_file(path);
  ASSERT_TRUE(profile.ok()) << profile.status().to_string();
  auto machine = ProfileMachineModel::create(*profile);
  ASSERT_TRUE(machine.ok()) << machine.status().to_string();
  ModelHParams hp; // Qwen3-235B-A22B's shape
  hp.name = "235b-shape";
  hp.n_vocab = 151936;
  hp.n_embd = 4096;
  hp.n_layer = 94;
  hp.n_head = 64;
  hp.n_head_kv = 4;
  hp.head_dim = 128;
  hp.n_ff = 1536;
  hp.n_expert = 128;
  hp.n_expert_used = 8;
  hp.n_ff_exp = hp.n_ff;
  const auto start = std::chrono::steady_clock::now();
  const ModelGraph graph = synthetic_model_graph(hp, TensorType::kQ4_0);
  CompileOptions o;
  o.tiers = {1, 4, 16, 64, 256, 512};
  o.max_budgets = 10;
  const Result<PlanGrid> grid = plan_grid(graph, **machine, o);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  std::printf("235B-shaped MoE (190 sub-layers): %zu budgets x %zu tiers planned in %.1f ms\n",
              grid->budgets.size(), grid->tiers.size(), seconds * 1e3);
  EXPECT_EQ(grid->budgets.size() * grid->tiers.size(), 60u);
  // A bound against blow-ups only, not a speed test: 1.4-1.8 s measured on the 2-vCPU
  // VM (RelWithDebInfo, other jobs running), 5.3 s under ASan+UBSan, which slow the
  // planner's containers about threefold — and 11 s at the lowest priority beside a CI
  // build, where the earlier 5 s bound failed. Planning that blew up (a search gone
  // exponential) would take minutes.
  EXPECT_LT(seconds, kSanitized ? 90.0 : 30.0);
  EXPECT_TRUE(validate_grid(graph, *grid).ok());
}

// A budget switch uploads or evicts only the difference: every buffer a smaller budget
// keeps resident and a larger one keeps too sits at the same offset in both arenas.
TEST(PlannerBudgets, ResidentBuffersKeepTheirOffsetsAcrossBudgets) {
  const ModelGraph graph = synthetic_model_graph(small_model(), TensorType::kQ4_0);
  const FixedMachineModel machine({});
  CompileOptions o;
  o.tiers = {1, 16};
  o.strategy = Strategy::kStatic; // greedy resident sets: they interleave with sub-layer order
  const uint64_t lo = minimum_budget(graph, o), w = graph.total_weight_bytes();
  o.budgets = {lo, lo + w / 4, lo + w / 2, lo + 3 * w / 4, lo + w + (64ull << 20)};
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  using Key = std::pair<int32_t, int32_t>; // (sub-layer, tensor; -1 for the KV cache)
  auto resident = [](const Plan& p) {
    std::map<Key, uint64_t> at;
    for (const VramBuffer& b : p.vram_layout)
      if (b.kind == BufferKind::kWeights || b.kind == BufferKind::kKvCache)
        at[{b.sublayer, b.kind == BufferKind::kWeights ? b.tensor : -1}] = b.offset;
    return at;
  };
  int compared = 0, nested_pairs = 0;
  for (size_t b = 0; b + 1 < grid->budgets.size(); ++b) {
    const auto small = resident(grid->at(b, 0)), large = resident(grid->at(b + 1, 0));
    // Only where the larger budget keeps everything the smaller one holds (greedy sets
    // nest; under auto, a budget won by the layer-wise set may not): otherwise what
    // follows an evicted buffer may move, and the switch re-uploads it.
    const bool nested = std::all_of(small.begin(), small.end(),
                                    [&](const auto& kv) { return large.count(kv.first) > 0; });
    if (!nested)
      continue;
    ++nested_pairs;
    for (const auto& [key, offset] : small) {
      EXPECT_EQ(large.at(key), offset) << "sub-layer " << key.first << " tensor " << key.second
                                       << " moves between budgets " << b << " and " << b + 1;
      ++compared;
    }
  }
  EXPECT_EQ(nested_pairs, 4) << "greedy resident sets of growing budgets nest";
  EXPECT_GT(compared, 20) << "the budgets share too few resident buffers to test anything";
}

} // namespace
} // namespace pshard::planner
