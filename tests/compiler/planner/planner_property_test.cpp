// Properties of plan_grid over random model shapes and machines: every plan is valid
// (arena ≤ budget, no overlapping buffers, every sub-layer placed once), the chosen plan
// is never predicted slower than GPU-only, Static or Dynamic on the same resident set,
// and budgets are monotonic: no larger budget is ever predicted slower at any (context,
// tier), none slower than the CPU-only plan — on hand-made machines, the shipped
// reference profiles and a profile of the emulated GPU.
#include "pshard/Planner/Planner.h"
#include "runtime/core/file_bytes.h"
#include "runtime/profile/profile_json.h"
#include "test_shapes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <random>

namespace pshard::planner {
namespace {

ModelHParams random_shape(std::mt19937_64& rng) {
  auto pick = [&](std::initializer_list<int64_t> v) {
    return *(v.begin() + std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng));
  };
  ModelHParams hp;
  hp.name = "random";
  hp.n_embd = pick({256, 512, 1024, 2048, 4096});
  hp.n_head = pick({4, 8, 16, 32});
  hp.head_dim = hp.n_embd / hp.n_head;
  hp.n_head_kv = std::max<int64_t>(1, hp.n_head / pick({1, 2, 4, 8}));
  hp.n_layer = pick({1, 2, 4, 8, 16, 32});
  hp.n_ff = hp.n_embd * pick({2, 3, 4});
  hp.n_vocab = pick({512, 32000, 128000});
  if (pick({0, 1}) == 1) {
    hp.n_expert = pick({4, 8, 64});
    hp.n_expert_used = std::min<int64_t>(hp.n_expert, pick({1, 2, 8}));
    hp.n_ff = hp.n_embd / 2;
    hp.n_ff_exp = hp.n_ff;
  }
  if (hp.n_expert == 0 && pick({0, 1}) == 1) { // Gemma 3: local layers priced over a window
    hp.family = find_arch_family("gemma3");
    hp.qk_norm = hp.post_norms = true;
    hp.sliding_window = pick({64, 512, 4096});
    for (int64_t il = 0; il < hp.n_layer; ++il)
      hp.local_layers.push_back(il % 6 < 5);
  }
  return hp;
}

FixedMachineParams random_machine(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> f(0.0, 1.0);
  auto log_uniform = [&](double lo, double hi) { return lo * std::pow(hi / lo, f(rng)); };
  FixedMachineParams p;
  p.vram_bytes = static_cast<uint64_t>(log_uniform(2e9, 32e9));
  p.threads = 8;
  p.cpu_flops = log_uniform(50e9, 2e12);
  p.cpu_bandwidth = log_uniform(20e9, 120e9);
  p.cpu_overhead_s = log_uniform(1e-6, 50e-6);
  p.cpu_load_factor = 0.6 + 0.4 * f(rng);
  p.gpu_flops = log_uniform(5e12, 200e12);
  p.gpu_bandwidth = log_uniform(200e9, 2e12);
  p.gpu_launch_s = log_uniform(2e-6, 20e-6);
  p.h2d_bandwidth = log_uniform(3e9, 60e9);
  p.d2h_bandwidth = p.h2d_bandwidth;
  p.copy_latency_s = log_uniform(2e-6, 30e-6);
  p.copy_load_factor = 0.5 + 0.5 * f(rng);
  return p;
}

std::vector<bool> resident_of(const Plan& p) {
  std::vector<bool> r;
  for (Placement q : p.placements)
    r.push_back(q == Placement::kGpuResident);
  return r;
}

TEST(PlannerProperties, RandomShapesAndMachines) {
  std::mt19937_64 rng(20240611);
  for (int trial = 0; trial < 40; ++trial) {
    const ModelHParams hp = random_shape(rng);
    const TensorType type = trial % 3 == 0 ? TensorType::kF16 : TensorType::kQ4_0;
    const ModelGraph graph = synthetic_model_graph(hp, type);
    const FixedMachineModel machine(random_machine(rng));
    CompileOptions o;
    o.n_ctx = trial % 2 ? 4096 : 512;
    o.tiers = {1, 4, 64, 256};
    o.max_budgets = 5;
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(hp.n_layer) +
                 " layers, n_embd " + std::to_string(hp.n_embd) + ", experts " +
                 std::to_string(hp.n_expert));
    const Result<PlanGrid> grid = plan_grid(graph, machine, o);
    if (!grid.ok()) { // only a VRAM below the model's minimum may refuse
      EXPECT_EQ(grid.status().code(), StatusCode::kOutOfMemory) << grid.status().to_string();
      continue;
    }
    ASSERT_TRUE(validate_grid(graph, *grid).ok()) << validate_grid(graph, *grid).to_string();
    for (size_t b = 0; b < grid->budgets.size(); ++b)
      for (size_t t = 0; t < grid->tiers.size(); ++t) {
        const Plan& p = grid->at(b, t);
        ASSERT_EQ(p.placements.size(), graph.sublayers.size());
        EXPECT_LE(p.arena_bytes, p.budget_bytes);
        EXPECT_GT(p.predicted_ms_per_pass, 0);
        for (Strategy s : {Strategy::kGpuOnly, Strategy::kStatic, Strategy::kDynamic}) {
          const Result<Plan> fixed = plan_fixed_strategy(graph, machine, grid->options, s,
                                                         p.budget_bytes, p.tier, resident_of(p));
          if (!fixed.ok())
            continue;
          EXPECT_LE(p.predicted_ms_per_pass, fixed->predicted_ms_per_pass * (1 + 1e-9))
              << strategy_name(s) << " beats the chosen " << p.strategy << " at budget "
              << p.budget_bytes << " tier " << p.tier;
        }
      }
  }
}

TEST(PlannerProperties, ForcedStrategiesAreValidToo) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 10; ++trial) {
    const ModelGraph graph = synthetic_model_graph(random_shape(rng), TensorType::kQ8_0);
    const FixedMachineModel machine(random_machine(rng));
    for (Strategy s : {Strategy::kGpuOnly, Strategy::kStatic, Strategy::kDynamic, Strategy::kLayers}) {
      CompileOptions o;
      o.strategy = s;
      o.max_budgets = 4;
      const Result<PlanGrid> grid = plan_grid(graph, machine, o);
      if (!grid.ok())
        continue;
      EXPECT_TRUE(validate_grid(graph, *grid).ok()) << strategy_name(s);
      for (size_t b = 0; b < grid->budgets.size(); ++b)
        for (size_t t = 0; t < grid->tiers.size(); ++t) {
          const Plan& p = grid->at(b, t);
          EXPECT_EQ(p.strategy, strategy_name(s));
          if (s == Strategy::kStatic || s == Strategy::kLayers) {
            EXPECT_EQ(p.count(Placement::kGpuStreamed), 0);
          }
        }
    }
  }
}

// The machines of the monotonicity property: the shipped profiles with a GPU, and the
// emulated GPU's profile (pshard-profile --backend emu, kept as JSON with the tests).
struct ProfiledMachine {
  std::string name;
  std::unique_ptr<Profile> profile;
  std::unique_ptr<ProfileMachineModel> model;
};

std::vector<ProfiledMachine> profiled_machines() {
  std::vector<ProfiledMachine> out;
  auto add = [&](const std::string& name, Result<Profile> p) {
    if (!p.ok())
      return;
    ProfiledMachine m{name, std::make_unique<Profile>(std::move(*p)), nullptr};
    auto model = ProfileMachineModel::create(*m.profile);
    if (!model.ok())
      return;
    m.model = std::move(*model);
    out.push_back(std::move(m));
  };
  for (const char* name : {"laptop-rtx4060-8gb", "desktop-rtx4090-24gb", "desktop-rtx5090-32gb"}) {
    const std::string path = std::string(PSHARD_PROFILES_BUILD_DIR) + "/" + name + ".pshprof";
    if (std::filesystem::exists(path))
      add(name, Profile::load_file(path));
  }
  std::vector<uint8_t> json;
  if (read_whole_file(std::string(PSHARD_PLANNER_TEST_DATA) + "/emu-2vcpu.json", 1 << 24, "profile",
                      &json)
          .ok())
    add("emu", profile_from_json(std::string_view(reinterpret_cast<const char*>(json.data()),
                                                  json.size())));
  return out;
}

TEST(PlannerProperties, LargerBudgetsAreNeverPredictedSlower) {
  const std::vector<ProfiledMachine> profiled = profiled_machines();
  ASSERT_GE(profiled.size(), 1u) << "no shipped or emulated profile found";
  bool emu_seen = false;
  std::mt19937_64 rng(1312);
  int grids = 0, compared = 0;
  for (int trial = 0; trial < 36; ++trial) {
    ModelHParams hp = random_shape(rng);
    hp.n_vocab = std::min<int64_t>(hp.n_vocab, 32000);
    const ModelGraph graph = synthetic_model_graph(hp, trial % 2 ? TensorType::kQ4_0 : TensorType::kQ8_0);
    // Every machine in turn, and hand-made ones in between.
    const size_t pick = static_cast<size_t>(trial) % (profiled.size() + 1);
    std::unique_ptr<FixedMachineModel> fixed;
    const MachineModel* machine = nullptr;
    if (pick < profiled.size()) {
      machine = profiled[pick].model.get();
      emu_seen = emu_seen || profiled[pick].name == "emu";
    } else {
      fixed = std::make_unique<FixedMachineModel>(random_machine(rng));
      machine = fixed.get();
    }
    CompileOptions o;
    o.n_ctx = trial % 3 == 0 ? 8192 : 1024;
    if (trial % 4 == 1)
      o.contexts = {o.n_ctx / 8, o.n_ctx};
    o.tiers = {1, 4, 64, 256};
    if (trial % 5 == 2)
      o.workload = {64, 4096}; // decode-heavy
    const uint64_t lo = minimum_budget(graph, *machine, o);
    const auto hi = static_cast<double>(graph.total_weight_bytes()) * 1.3 + static_cast<double>(lo);
    std::uniform_real_distribution<double> f(0.0, 1.0);
    for (int k = 0; k < 4; ++k)
      o.budgets.push_back(static_cast<uint64_t>(static_cast<double>(lo) *
                                                std::pow(hi / static_cast<double>(lo), f(rng))));
    if (trial % 2 == 0)
      o.budgets.push_back(0);
    SCOPED_TRACE("trial " + std::to_string(trial) + " on " +
                 (pick < profiled.size() ? profiled[pick].name : std::string("a hand-made machine")) +
                 ": " + std::to_string(hp.n_layer) + " layers, n_embd " + std::to_string(hp.n_embd) +
                 ", experts " + std::to_string(hp.n_expert));
    const Result<PlanGrid> grid = plan_grid(graph, *machine, o);
    ASSERT_TRUE(grid.ok()) << grid.status().to_string();
    ASSERT_TRUE(validate_grid(graph, *grid).ok()) << validate_grid(graph, *grid).to_string();
    ++grids;
    for (size_t c = 0; c < grid->contexts.size(); ++c)
      for (size_t t = 0; t < grid->tiers.size(); ++t) {
        double smaller = grid->cpu_only[c][t].predicted_ms_per_pass;
        for (size_t b = 0; b < grid->budgets.size(); ++b) {
          const Plan& p = grid->at(b, t, c);
          EXPECT_LE(p.predicted_ms_per_pass, smaller * (1 + 1e-9))
              << "budget " << p.budget_bytes << " B, context " << p.context << ", tier " << p.tier
              << " is predicted slower than " << (b == 0 ? "CPU only" : "the budget below it");
          smaller = p.predicted_ms_per_pass;
          ++compared;
        }
      }
  }
  EXPECT_TRUE(emu_seen) << "the emulated GPU's profile was not among the machines";
  std::printf("%d grids, %d (budget, context, tier) cells compared with the budget below\n", grids,
              compared);
}

// The case: a 1B-shaped Q4_0 model on the emulated GPU's profile at context 512.
// Budgets 0 / 160 / 320 MiB were predicted 18.2 / 19.8 / 22.2 ms at tier 1, although the
// smaller budgets' plans fit the larger ones.
TEST(PlannerProperties, TheEmulatedGpusLargerBudgetsAreNotSlower) {
  std::vector<ProfiledMachine> machines = profiled_machines();
  const auto emu = std::find_if(machines.begin(), machines.end(),
                                [](const ProfiledMachine& m) { return m.name == "emu"; });
  ASSERT_NE(emu, machines.end()) << "the emulated GPU's profile is missing from the test data";
  const ModelGraph graph = synthetic_model_graph(testing::llama1b_shape(), TensorType::kQ4_0);
  CompileOptions o;
  o.n_ctx = 512;
  o.budgets = {0, 160ull << 20, 320ull << 20};
  const Result<PlanGrid> grid = plan_grid(graph, *emu->model, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  for (size_t t = 0; t < grid->tiers.size(); ++t) {
    EXPECT_LE(grid->at(1, t).predicted_ms_per_pass, grid->at(0, t).predicted_ms_per_pass * (1 + 1e-9));
    EXPECT_LE(grid->at(2, t).predicted_ms_per_pass, grid->at(1, t).predicted_ms_per_pass * (1 + 1e-9));
  }
  std::printf("emulated GPU, 1B Q4_0, tier 1: %.3f / %.3f / %.3f ms at 0 / 160 / 320 MiB\n",
              grid->at(0, 0).predicted_ms_per_pass, grid->at(1, 0).predicted_ms_per_pass,
              grid->at(2, 0).predicted_ms_per_pass);
}

} // namespace
} // namespace pshard::planner
