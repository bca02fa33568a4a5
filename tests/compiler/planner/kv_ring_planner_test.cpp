// The planner's side of sliding-window rings (runtime/model/kv_ring.h): a Gemma-3-shaped
// model at 32K keeps its local layers' device caches as rings of window + largest tier
// positions (the runtime's rule), records the ring and each switch's ring bytes in the
// artifact, and prices those moves at the ring's positions; --swa-full (kv_ring = 0) keeps
// whole caches, and several sequences the batch engines' pool of window pages.
#include "compiler/lib/Planner/PlannerInternal.h"
#include "pshard/Planner/Planner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/schedule/schedule_file.h"
#include "test_shapes.h"

#include <gtest/gtest.h>

namespace pshard::planner {
namespace {

// Gemma 3's pattern: five local layers (window 1024) to one global.
ModelHParams gemma3_shape() {
  ModelHParams hp;
  hp.name = "gemma3-shaped";
  hp.family = find_arch_family("gemma3");
  hp.qk_norm = hp.post_norms = true;
  hp.n_vocab = 4096;
  hp.n_embd = 512;
  hp.n_layer = 6;
  hp.n_ff = 1024;
  hp.n_head = 8;
  hp.n_head_kv = 4;
  hp.head_dim = 64;
  hp.sliding_window = 1024;
  for (int64_t il = 0; il < hp.n_layer; ++il)
    hp.local_layers.push_back(il % 6 < 5);
  return hp;
}

CompileOptions at_32k() {
  CompileOptions o;
  o.n_ctx = 32768;
  o.tiers = {1, 16, 256};
  o.budgets = {2ull << 30};
  return o;
}

// The KV buffer bytes of every resident attention sub-layer of the plan, by sub-layer.
std::map<int32_t, uint64_t> kv_buffers(const Plan& p) {
  std::map<int32_t, uint64_t> out;
  for (const VramBuffer& b : p.vram_layout)
    if (b.kind == BufferKind::kKvCache)
      out[b.sublayer] = b.size;
  return out;
}

TEST(KvRingPlanner, LocalLayersDeviceCachesAreRings) {
  const ModelGraph graph = synthetic_model_graph(gemma3_shape(), TensorType::kQ8_0);
  const FixedMachineModel machine(testing::fixed_gpu(8ull << 30));
  const Result<PlanGrid> grid = plan_grid(graph, machine, at_32k());
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  EXPECT_EQ(kv_ring_positions(graph, grid->options), 1280); // 1024 + 256 - 1, rounded up
  const std::map<int32_t, uint64_t> kv = kv_buffers(grid->at(0, 0));
  ASSERT_EQ(kv.size(), 6u) << "every attention resident in 2 GiB";
  for (const auto& [i, bytes] : kv) {
    const SubLayerInfo& s = graph.sublayers[static_cast<size_t>(i)];
    const uint64_t per = s.kv_bytes_per_token(grid->options.kv_type);
    EXPECT_EQ(bytes, per * (s.attn_window > 0 ? 1280 : 32768)) << s.name;
  }

  // --swa-full: whole caches, more device memory for the same placement.
  CompileOptions full = at_32k();
  full.kv_ring = 0;
  const Result<PlanGrid> whole = plan_grid(graph, machine, full);
  ASSERT_TRUE(whole.ok());
  for (const auto& [i, bytes] : kv_buffers(whole->at(0, 0))) {
    const SubLayerInfo& s = graph.sublayers[static_cast<size_t>(i)];
    EXPECT_EQ(bytes, s.kv_bytes_per_token(full.kv_type) * 32768) << s.name;
  }
  EXPECT_LT(grid->at(0, 0).arena_bytes, whole->at(0, 0).arena_bytes);

  // Several sequences: the local layers' page pool in pages of 16, each sequence's window
  // and rewind margin (1023 + 65 positions: 68 pages, 2 more at the ends) and the largest
  // pass (256 positions); the global layers' caches whole.
  CompileOptions two = at_32k();
  two.parallel = 2;
  EXPECT_EQ(kv_ring_positions(graph, two), (2 * 70 + 16) * 16);
  const Result<PlanGrid> pooled = plan_grid(graph, machine, two);
  ASSERT_TRUE(pooled.ok()) << pooled.status().to_string();
  for (const auto& [i, bytes] : kv_buffers(pooled->at(0, 0))) {
    const SubLayerInfo& s = graph.sublayers[static_cast<size_t>(i)];
    EXPECT_EQ(bytes, s.kv_bytes_per_token(two.kv_type) * (s.attn_window > 0 ? 2496 : 65536))
        << s.name;
  }
  two.kv_ring = 0; // --swa-full
  EXPECT_EQ(kv_ring_positions(graph, two), 0);
}

TEST(KvRingPlanner, TheArtifactRecordsTheRing) {
  const ModelGraph graph = synthetic_model_graph(gemma3_shape(), TensorType::kQ8_0);
  const FixedMachineModel machine(testing::fixed_gpu(8ull << 30));
  CompileOptions o = at_32k();
  o.contexts = {4096};
  o.budgets = {};
  const Result<PlanGrid> grid = plan_grid(graph, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  auto bytes = serialize_schedule(graph, *grid, "kv-ring-test");
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto schedule = Schedule::load_bytes(*bytes);
  ASSERT_TRUE(schedule.ok()) << schedule.status().to_string();
  EXPECT_EQ(schedule->kv_ring_positions(), 1280);
  size_t recorded = 0;
  for (size_t b = 0; b < schedule->budgets().size(); ++b)
    for (const ScheduleSwitch& s : schedule->switches(b)) {
      EXPECT_LE(s.kv_ring_upload_bytes_per_position, s.kv_upload_bytes_per_position);
      EXPECT_LE(s.kv_ring_download_bytes_per_position, s.kv_download_bytes_per_position);
      // Past the ring, only the whole caches' bytes still grow.
      const uint64_t whole_up =
          s.kv_upload_bytes_per_position - s.kv_ring_upload_bytes_per_position;
      EXPECT_EQ(s.kv_upload_bytes(20000, 1280) - s.kv_upload_bytes(10000, 1280), whole_up * 10000);
      EXPECT_EQ(s.kv_upload_bytes(1000, 1280), s.kv_upload_bytes_per_position * 1000);
      ++recorded;
    }
  // (The executor's kv_ring_test runs switches that move rings, against the runtime.)
  EXPECT_GT(recorded, 0u) << "no switches: nothing checked";
}

// A switch that uploads a local layer's cache is priced at min(positions, ring) of it.
TEST(KvRingPlanner, SwitchesPriceRingsAtTheRingsPositions) {
  const ModelGraph graph = synthetic_model_graph(gemma3_shape(), TensorType::kQ8_0);
  CompileOptions o = at_32k();
  const std::vector<bool> none(graph.sublayers.size(), false);
  std::vector<bool> local = none, global = none;
  for (size_t i = 0; i < graph.sublayers.size(); ++i)
    if (graph.sublayers[i].kind == SubLayerKind::kAttention)
      (graph.sublayers[i].attn_window > 0 ? local : global)[i] = true;
  const LinkPricing link{0, 1 << 20, 0, 1 << 20}; // 1 ns per byte
  const detail::SwitchBytes to_local =
      detail::switch_bytes(graph, o, detail::make_resident_set(graph, o, none),
                           detail::make_resident_set(graph, o, local));
  const detail::SwitchBytes to_global =
      detail::switch_bytes(graph, o, detail::make_resident_set(graph, o, none),
                           detail::make_resident_set(graph, o, global));
  EXPECT_EQ(to_local.ring, 1280);
  EXPECT_EQ(to_local.kv_ring_up_per_position, to_local.kv_up_per_position);
  EXPECT_EQ(to_global.kv_ring_up_per_position, 0u);
  const double weights_s = static_cast<double>(to_local.weights_up) * 1e-9;
  EXPECT_NEAR(to_local.seconds(30000, link) - weights_s,
              static_cast<double>(to_local.kv_up_per_position) * 1280 * 1e-9, 1e-9);
  EXPECT_NEAR(to_local.seconds(1000, link) - weights_s,
              static_cast<double>(to_local.kv_up_per_position) * 1000 * 1e-9, 1e-9);
  const double global_weights_s = static_cast<double>(to_global.weights_up) * 1e-9;
  EXPECT_NEAR(to_global.seconds(30000, link) - global_weights_s,
              static_cast<double>(to_global.kv_up_per_position) * 30000 * 1e-9, 1e-9);
}

} // namespace
} // namespace pshard::planner
