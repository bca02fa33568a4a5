// The vision graph's costs and the vision phase's plans (VLMOpt), and the issue's
// prediction: for a 7B-VL shape and a 1440p image the minimum budget with VLMOpt is at
// most a fifth of the baseline's on every shipped reference profile with a GPU.
#include "pshard/Planner/Planner.h"
#include "pshard/Planner/VisionPlanner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/schedule/schedule_file.h"
#include "tools/pshard-mkmodel/model_generator.h"
#include "tools/pshard-mkmodel/projector_generator.h"

#include <filesystem>
#include <gtest/gtest.h>

namespace pshard::planner {
namespace {

std::string profile_path(const std::string& name) {
  return std::string(PSHARD_PROFILES_BUILD_DIR) + "/" + name + ".pshprof";
}

// Qwen2.5-VL-7B's vision tower: 32 blocks of width 1280, FFN 3420, 16 heads, 14-pixel
// patches, 112-pixel windows with full attention in blocks 7, 15, 23, 31, merged into
// the language model's 3584. The cap on the longer side is raised past 2560 so that a
// 1440p frame keeps its resolution.
ProjectorSpec qwen25vl_7b_tower() {
  ProjectorSpec s;
  s.hp.type = ProjectorType::kQwen25Vl;
  s.hp.n_embd = 1280;
  s.hp.n_ff = 3420;
  s.hp.n_layer = 32;
  s.hp.n_head = 16;
  s.hp.patch_size = 14;
  s.hp.n_wa_pattern = 8;
  s.hp.window_size = 112;
  s.hp.image_size = 2576;
  s.hp.projection_dim = 3584;
  s.type_matrices = TensorType::kF16;
  s.sparse = true;
  return s;
}

// Qwen2.5-VL-7B's language model shape, Q4_0, as a sparse file.
ModelSpec qwen25vl_7b_lm() {
  ModelSpec s;
  s.arch = "qwen2vl";
  s.n_embd = 3584;
  s.n_layer = 28;
  s.n_head = 28;
  s.n_head_kv = 4;
  s.n_ff = 18944;
  s.n_vocab = 152064;
  s.n_ctx = 32768;
  s.type = TensorType::kQ4_0;
  s.sparse = true;
  return s;
}

template <class Spec, class Writer>
std::unique_ptr<gguf::GgufFile> written(const Spec& spec, Writer write, const std::string& name) {
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  if (!std::filesystem::exists(path)) {
    const Status st = write(spec, path);
    EXPECT_TRUE(st.ok()) << st.to_string();
  }
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  return file.ok() ? std::move(*file) : nullptr;
}

VisionGraph tower_graph() {
  auto file = written(qwen25vl_7b_tower(), write_projector, "vision-7b-tower");
  auto g = build_vision_graph(*file);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return std::move(*g);
}

TEST(VisionGraphTest, FromTheFileMatchesTheLayoutAndTheCostFormulas) {
  const VisionGraph g = tower_graph();
  const ProjectorHParams& hp = g.hp;
  ASSERT_EQ(g.sublayers.size(), static_cast<size_t>(2 + 2 * hp.n_layer));
  EXPECT_EQ(g.sublayers.front().id.name, "v.patch");
  EXPECT_EQ(g.sublayers.back().id.name, "v.merger");
  // A file and a synthetic graph of the same shape agree on every byte.
  const VisionGraph synth = synthetic_vision_graph(hp, TensorType::kF16);
  EXPECT_EQ(g.total_weight_bytes(), synth.total_weight_bytes());
  EXPECT_FALSE(g.fingerprint.is_zero());

  const double n = 4096, c = 1280, f = 3420, p = 14, proj = 3584;
  const double window = 64; // 112 pixels = 8 patches per side
  EXPECT_DOUBLE_EQ(g.flops(g.sublayers[0], 4096), 2 * n * 3 * p * p * c);
  const VisionSubLayerInfo& windowed = g.sublayers[1];     // v.attn[0]
  const VisionSubLayerInfo& full = g.sublayers[1 + 2 * 7]; // v.attn[7]
  ASSERT_EQ(full.id.name, "v.attn[7]");
  EXPECT_FALSE(windowed.full_attention);
  EXPECT_TRUE(full.full_attention);
  EXPECT_DOUBLE_EQ(g.flops(windowed, 4096), 8 * n * c * c + 4 * n * window * c);
  EXPECT_DOUBLE_EQ(g.flops(full, 4096), 8 * n * c * c + 4 * n * n * c);
  EXPECT_DOUBLE_EQ(g.flops(g.sublayers[2], 4096), 2 * n * 3 * c * f);
  EXPECT_DOUBLE_EQ(g.flops(g.sublayers.back(), 4096), 2 * (n / 4) * (16 * c * c + 4 * c * proj));
  EXPECT_EQ(g.sublayers[0].weight_bytes, 2ull * 3 * 14 * 14 * 1280 * 2); // two F16 halves
}

TEST(VisionGraphTest, TiledScratchStaysFlatAndUntiledGrowsQuadratically) {
  const VisionGraph g = tower_graph();
  const int64_t small = g.patches_for({854, 480}), big = g.patches_for({2560, 1440});
  ASSERT_GT(big, 8 * small / 2);
  EXPECT_EQ(g.attention_scratch_bytes(small, kAttentionTile),
            g.attention_scratch_bytes(big, kAttentionTile));
  EXPECT_EQ(g.attention_scratch_bytes(big, 0), 16ull * big * big * 4);
  EXPECT_GT(g.attention_scratch_bytes(big, 0),
            100 * g.attention_scratch_bytes(big, kAttentionTile));
}

TEST(VisionPlannerTest, PlansFitTheirBudgetAndStreamWhenWeightsDoNotFit) {
  const VisionGraph g = tower_graph();
  auto profile = Profile::load_file(profile_path("laptop-rtx4060-8gb"));
  ASSERT_TRUE(profile.ok()) << profile.status().to_string();
  auto machine = ProfileMachineModel::create(*profile);
  ASSERT_TRUE(machine.ok());
  auto tiers = parse_image_tiers("480p,1080p", g);
  ASSERT_TRUE(tiers.ok()) << tiers.status().to_string();
  for (const ImageTier& t : *tiers) {
    const uint64_t min = vision_minimum_budget(g, t.patches, 0);
    for (const uint64_t budget : {min - 1, min, min + (uint64_t{256} << 20), uint64_t{8} << 30}) {
      const VisionPlan p = plan_vision(g, **machine, budget, t, {});
      EXPECT_LE(p.arena_bytes, budget) << t.name;
      ASSERT_EQ(p.placements.size(), g.sublayers.size());
      if (budget < min) {
        EXPECT_EQ(p.strategy, "cpu-only");
        continue;
      }
      EXPECT_GE(p.attention_tile, kAttentionTile);
      EXPECT_GT(p.predicted_ms, 0);
    }
    // Below the total weight bytes something must stream or run on the CPU.
    const VisionPlan tight = plan_vision(g, **machine, min, t, {});
    EXPECT_LT(tight.resident_bytes, g.total_weight_bytes());
  }
  EXPECT_FALSE(parse_image_tiers("999p", g).ok());
  EXPECT_FALSE(parse_image_tiers("", g).ok());
}

TEST(VisionPlannerTest, VlmOptNeedsAtMostAFifthOfTheBaselineAt1440p) {
  const VisionGraph vision = tower_graph();
  auto lm_file = written(qwen25vl_7b_lm(), write_model, "vision-7b-lm");
  ASSERT_TRUE(lm_file);
  auto lm = build_model_graph(*lm_file);
  ASSERT_TRUE(lm.ok()) << lm.status().to_string();
  auto tiers = parse_image_tiers("1440p", vision);
  ASSERT_TRUE(tiers.ok());
  const ImageTier t = tiers->front();
  int checked = 0;
  for (const char* name : {"laptop-rtx4060-8gb", "desktop-rtx4090-24gb", "desktop-rtx5090-32gb"}) {
    auto profile = Profile::load_file(profile_path(name));
    if (!profile.ok())
      GTEST_SKIP() << "shipped profile missing: " << profile.status().to_string();
    auto machine = ProfileMachineModel::create(*profile);
    ASSERT_TRUE(machine.ok());
    CompileOptions options;
    options.n_ctx = t.patches / 4 + 1024; // the image's tokens and a prompt
    const uint64_t language = minimum_budget(*lm, **machine, options);
    const uint64_t ws = (*machine)->kernel_workspace_bytes();
    const VlmMinimum m = vlm_minimum(vision, t.patches, language, ws);
    EXPECT_LE(m.vlmopt() * 5, m.baseline())
        << name << ": with " << m.vlmopt() << " B, without " << m.baseline() << " B";
    // The minimum is a budget a GPU vision plan really fits in.
    const VisionPlan p = plan_vision(vision, **machine, m.vlmopt(), t, {0, ws, 0});
    EXPECT_NE(p.strategy, "cpu-only") << name;
    EXPECT_LE(p.arena_bytes, m.vlmopt()) << name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

// The vision plans travel in the artifact (schema 1.4) with the projector's fingerprint;
// a 1.3 file reads as one without vision plans.
TEST(VisionArtifactTest, VisionPlansRoundTripAndOlderFilesHaveNone) {
  ProjectorSpec small;
  small.hp.n_layer = 2;
  small.hp.projection_dim = 64;
  auto projector = written(small, write_projector, "vision-small-projector");
  auto lm_file = written(ModelSpec{}, write_model, "vision-small-lm");
  ASSERT_TRUE(projector && lm_file);
  auto vision = build_vision_graph(*projector);
  ASSERT_TRUE(vision.ok()) << vision.status().to_string();
  auto lm = build_model_graph(*lm_file);
  ASSERT_TRUE(lm.ok()) << lm.status().to_string();
  const FixedMachineModel machine(FixedMachineParams{});
  CompileOptions o;
  o.budgets = {0, 4ull << 20, 64ull << 20};
  o.tiers = {1, 16};
  o.n_ctx = 256;
  auto grid = plan_grid(*lm, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  auto tiers = parse_image_tiers("480p,1024", *vision);
  ASSERT_TRUE(tiers.ok());
  const VisionPhasePlans phase = plan_vision_phase(*vision, machine, *grid, *tiers);
  ASSERT_TRUE(validate_vision_phase(phase).ok());
  auto bytes = serialize_schedule(*lm, *grid, "test", &phase);
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto s = Schedule::load_bytes(*bytes);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  ASSERT_NE(s->vision(), nullptr);
  EXPECT_EQ(s->vision()->plans()->size(), o.budgets.size() * tiers->size());
  EXPECT_EQ(s->vision()->sublayers()->size(), vision->sublayers.size());
  for (size_t i = 0; i < phase.plans.size(); ++i) {
    const auto* p = s->vision()->plans()->Get(static_cast<uint32_t>(i));
    EXPECT_EQ(p->arena_bytes(), phase.plans[i].arena_bytes);
    EXPECT_LE(p->arena_bytes(), p->budget_bytes());
    EXPECT_DOUBLE_EQ(p->predicted_ms(), phase.plans[i].predicted_ms);
  }
  EXPECT_EQ(phase.at(0, 0).strategy, "cpu-only"); // budget 0
  EXPECT_TRUE(s->check_projector(*projector).ok());
  const Status other = s->check_projector(*lm_file);
  EXPECT_EQ(other.code(), StatusCode::kModelMismatch);
  EXPECT_NE(other.message().find("another projector"), std::string::npos);

  // A 1.3 writer had no Schedule.vision.
  std::unique_ptr<fb::schedule::ScheduleT> t(
      fb::schedule::GetSizePrefixedSchedule(bytes->data())->UnPack());
  t->schema_minor = 3;
  t->vision.reset();
  flatbuffers::FlatBufferBuilder builder;
  fb::schedule::FinishSizePrefixedScheduleBuffer(builder,
                                                 fb::schedule::Schedule::Pack(builder, t.get()));
  auto old = Schedule::load_bytes({builder.GetBufferPointer(), builder.GetSize()});
  ASSERT_TRUE(old.ok()) << old.status().to_string();
  EXPECT_EQ(old->vision(), nullptr);
  EXPECT_NE(old->check_projector(*projector).message().find("no vision plans"), std::string::npos);
}

} // namespace
} // namespace pshard::planner
