// The planner's side of recurrent layers' states (Qwen3.5's Gated DeltaNet): a switch
// that brings such a layer's cache onto the device or takes it off moves the whole state,
// fixed bytes whatever the cached positions (none with nothing cached); the switches list
// and price those bytes, and the artifact records them (schema 1.7).
#include "compiler/lib/Planner/PlannerInternal.h"
#include "pshard/Planner/Planner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/schedule/schedule_file.h"
#include "test_shapes.h"

#include <algorithm>
#include <gtest/gtest.h>
#include <optional>

namespace pshard::planner {
namespace {

// Qwen3.5's dense pattern: three recurrent layers to one attention layer.
ModelHParams qwen35_shape() {
  ModelHParams hp;
  hp.name = "qwen35-shaped";
  hp.family = find_arch_family("qwen35");
  hp.n_vocab = 4096;
  hp.n_embd = 2048;
  hp.n_layer = 16;
  hp.n_ff = 8192;
  hp.n_head = 8;
  hp.n_head_kv = 2;
  hp.head_dim = 64;
  hp.delta_net = {.n_k_heads = 4, .n_v_heads = 8, .d_k = 64, .d_v = 64, .conv_kernel = 4};
  hp.delta_net.grouped_ba = false;
  hp.delta_net.tiled_heads = true;
  for (int64_t il = 0; il < hp.n_layer; ++il)
    hp.recurrent_layers.push_back(il % 4 != 3);
  return hp;
}

TEST(RecurrentSwitches, AStateMovesWholeAndIsPricedSo) {
  const ModelGraph graph = synthetic_model_graph(qwen35_shape(), TensorType::kQ8_0);
  CompileOptions o;
  o.n_ctx = 4096;
  const std::vector<bool> none(graph.sublayers.size(), false);
  std::vector<bool> recurrent = none, attention = none;
  uint64_t states = 0;
  for (size_t i = 0; i < graph.sublayers.size(); ++i) {
    const SubLayerInfo& s = graph.sublayers[i];
    if (s.kind != SubLayerKind::kAttention)
      continue;
    (s.recurrent() ? recurrent : attention)[i] = true;
    states += s.state_bytes(o.kv_type);
  }
  ASSERT_GT(states, 0u);
  const LinkPricing link{0, 1 << 20, 0, 1 << 20}; // 1 ns per byte
  const auto set = [&](const std::vector<bool>& r) {
    return detail::make_resident_set(graph, o, r);
  };
  const detail::SwitchBytes up = detail::switch_bytes(graph, o, set(none), set(recurrent));
  const detail::SwitchBytes down = detail::switch_bytes(graph, o, set(recurrent), set(none));
  const detail::SwitchBytes attn = detail::switch_bytes(graph, o, set(none), set(attention));
  EXPECT_EQ(up.state_up, states);
  EXPECT_EQ(up.kv_up_per_position, 0u) << "a state is not per position";
  EXPECT_EQ(down.state_down, states);
  EXPECT_EQ(attn.state_up, 0u);
  EXPECT_GT(attn.kv_up_per_position, 0u);
  const double weights_s = static_cast<double>(up.weights_up) * 1e-9;
  // The same fixed bytes at any positions; nothing with none cached.
  EXPECT_NEAR(up.seconds(100, link) - weights_s, static_cast<double>(states) * 1e-9, 1e-12);
  EXPECT_NEAR(up.seconds(4000, link) - weights_s, static_cast<double>(states) * 1e-9, 1e-12);
  EXPECT_NEAR(up.seconds(0, link), weights_s, 1e-12);
  EXPECT_NEAR(down.seconds(4000, link), static_cast<double>(states) * 1e-9, 1e-12);
}

// Each budget's switches record the states they move, as the runtime will copy them;
// the artifact carries them.
TEST(RecurrentSwitches, TheArtifactRecordsTheStatesSwitchesMove) {
  const ModelGraph graph = synthetic_model_graph(qwen35_shape(), TensorType::kQ8_0);
  const FixedMachineModel machine(testing::fixed_gpu(2ull << 30));
  CompileOptions o;
  o.n_ctx = 4096;
  o.tiers = {1, 16, 256};
  o.contexts = {1024, 4096}; // caches sized per range: moving between ranges moves them
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  auto bytes = serialize_schedule(graph, *grid, "recurrent-switch-test");
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto schedule = Schedule::load_bytes(*bytes);
  ASSERT_TRUE(schedule.ok()) << schedule.status().to_string();
  size_t with_states = 0;
  for (size_t b = 0; b < grid->budgets.size(); ++b) {
    const std::vector<PlanSwitch>& planned = grid->switches[b];
    const std::vector<ScheduleSwitch>& read = schedule->switches(b);
    ASSERT_EQ(planned.size(), read.size());
    for (size_t i = 0; i < planned.size(); ++i) {
      EXPECT_EQ(read[i].state_upload_bytes, planned[i].state_upload_bytes);
      EXPECT_EQ(read[i].state_download_bytes, planned[i].state_download_bytes);
      // What the plans hold says what the switch moves: the states of the recurrent
      // layers whose caches one plan keeps on the device where the other does not.
      auto index = [](const std::vector<int64_t>& of, int64_t v) {
        return static_cast<size_t>(std::find(of.begin(), of.end(), v) - of.begin());
      };
      const PlanSwitch& w = planned[i];
      const Plan& from =
          grid->at(b, index(grid->tiers, w.from_tier), index(grid->contexts, w.from_context));
      const Plan& to =
          grid->at(b, index(grid->tiers, w.to_tier), index(grid->contexts, w.to_context));
      auto cache_of = [&](const Plan& p, size_t sub) -> std::optional<uint64_t> {
        for (const VramBuffer& v : p.vram_layout)
          if (v.kind == BufferKind::kKvCache && static_cast<size_t>(v.sublayer) == sub)
            return v.offset;
        return std::nullopt;
      };
      uint64_t enter = 0, leave = 0;
      for (size_t s = 0; s < graph.sublayers.size(); ++s) {
        if (!graph.sublayers[s].recurrent())
          continue;
        const uint64_t state = graph.sublayers[s].state_bytes(o.kv_type);
        const auto held = cache_of(from, s), wanted = cache_of(to, s);
        if (wanted && held != wanted)
          enter += state;
        if (held && held != wanted)
          leave += state;
      }
      EXPECT_EQ(planned[i].state_upload_bytes, enter);
      EXPECT_EQ(planned[i].state_download_bytes, leave);
      with_states += planned[i].state_upload_bytes + planned[i].state_download_bytes > 0;
    }
  }
  size_t all = 0;
  for (const auto& b : grid->switches)
    all += b.size();
  EXPECT_GT(with_states, 0u) << "no switch moved a state (of " << all << "): nothing checked";
}

} // namespace
} // namespace pshard::planner
