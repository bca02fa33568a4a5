// The vision phase under a schedule (runtime/executor/vision_phase.h), on a generated
// qwen2vl language model and Qwen2.5-VL projector, and on a qwen3vl one with a Qwen3-VL
// projector (position table, fused q/k/v, DeepStack mergers whose rows the language
// model adds after its first layers): every vision plan — every budget and
// image tier — gives the host encoder's embeddings bit for bit on emu, and an image
// prompt's tokens and logits on emu are the CPU session's; the two phases share device
// memory in time (the measured peak is the larger phase's arena, not their sum); bad
// inputs are refused naming the fix.
#include "executor_test_util.h"
#include "pshard/Planner/VisionPlanner.h"
#include "runtime/executor/vision_phase.h"
#include "runtime/vision/image_prompt.h"
#include "tests/runtime/vision/vlm_schedule_util.h"
#include "tools/pshard-mkmodel/projector_generator.h"

#include <map>
#include <random>

namespace pshard::testing {
namespace {

namespace sfb = fb::schedule;

// 64 and 256 patches: images of 8 x 8 and 16 x 16 patches (112 and 224 pixels a side).
constexpr int64_t kTiers[] = {64, 256};

// A language model and its projector's type.
struct Variant {
  const char* arch;
  ProjectorType type;
  std::vector<int64_t> deepstack; // the projector's DeepStack blocks
};
const Variant kQwen25{"qwen2vl", ProjectorType::kQwen25Vl, {}};
const Variant kQwen3{"qwen3vl", ProjectorType::kQwen3Vl, {0, 2}};

std::string vlm_model(const Variant& v = kQwen25) {
  const std::string name = std::string("vision-phase-") + v.arch;
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  if (std::filesystem::exists(path))
    return path;
  ModelSpec spec;
  spec.name = name;
  spec.arch = v.arch;
  spec.n_deepstack = static_cast<int64_t>(v.deepstack.size());
  spec.n_embd = 128; // the language arena about the vision one's size
  spec.n_layer = 6;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ff = 256;
  spec.type = TensorType::kQ8_0;
  const Status s = write_model(spec, path);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return path;
}

// 64 wide, 4 blocks (every 2nd attends fully), windows of 4 x 4 patches; `image_size`
// changes the metadata, hence the fingerprint (random weights alone would not).
// qwen3vl_merger: 16-pixel patches, a 28 x 28 position table.
std::string projector(const std::string& name, int64_t image_size = 448,
                      const Variant& v = kQwen25) {
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  if (std::filesystem::exists(path))
    return path;
  ProjectorSpec spec;
  spec.hp.type = v.type;
  spec.hp.deepstack = v.deepstack;
  if (v.type == ProjectorType::kQwen3Vl)
    spec.hp.patch_size = 16;
  spec.hp.image_size = image_size;
  spec.hp.projection_dim = 128; // the language model's width
  const Status s = write_projector(spec, path);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return path;
}

// A random image already preprocessed: `side` patches a side.
VisionInput random_input(const ProjectorHParams& hp, int64_t side_x, int64_t side_y) {
  VisionInput in;
  in.width = side_x * hp.patch_size;
  in.height = side_y * hp.patch_size;
  in.chw.resize(static_cast<size_t>(3 * in.width * in.height));
  std::mt19937 rng(5);
  std::normal_distribution<float> d(0.0f, 1.0f);
  for (float& f : in.chw)
    f = d(rng);
  return in;
}

struct VlmSchedule {
  std::unique_ptr<Schedule> schedule;
};

Result<VlmSchedule> compile_vlm(const std::string& model, const std::string& proj) {
  PSHARD_ASSIGN_OR_RETURN(auto bytes, compile_vlm_schedule(model, proj, test_machine(), "64,256"));
  PSHARD_ASSIGN_OR_RETURN(Schedule s, Schedule::load_bytes(bytes));
  return VlmSchedule{std::make_unique<Schedule>(std::move(s))};
}

std::string variant_projector(const Variant& v) {
  return v.type == ProjectorType::kQwen25Vl
             ? projector("vision-phase-proj")
             : projector(std::string("vision-phase-proj-") + v.arch, 448, v);
}

// One compiled schedule per variant, for the whole suite.
class VisionPhase : public ::testing::TestWithParam<Variant> {
protected:
  static void TearDownTestSuite() { compiled_.clear(); }
  static const Schedule& schedule(const Variant& v = kQwen25) {
    std::unique_ptr<VlmSchedule>& c = compiled_[v.arch];
    if (!c) {
      auto got = compile_vlm(vlm_model(v), variant_projector(v));
      EXPECT_TRUE(got.ok()) << got.status().to_string();
      c = std::make_unique<VlmSchedule>(std::move(*got));
    }
    return *c->schedule;
  }
  static std::map<std::string, std::unique_ptr<VlmSchedule>> compiled_;
};
std::map<std::string, std::unique_ptr<VlmSchedule>> VisionPhase::compiled_;

// (a) Every (budget, tier) plan on emu and on the cpu backend: the host encoder's bits
// (and a DeepStack projector's DeepStack rows).
TEST_P(VisionPhase, EveryPlanGivesTheHostEmbeddingsBitForBit) {
  const Variant& v = GetParam();
  auto proj = Projector::open(variant_projector(v));
  ASSERT_TRUE(proj.ok()) << proj.status().to_string();
  const ProjectorHParams& hp = (*proj)->hparams();
  ThreadPool pool(2);
  int streamed_plans = 0, resident_plans = 0, mixed_plans = 0;
  for (int64_t tier : kTiers) {
    const auto side = static_cast<int64_t>(std::sqrt(static_cast<double>(tier)));
    const VisionInput in = random_input(hp, side, side);
    auto want = encode_image(**proj, in, pool);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    ASSERT_EQ(want->n_deepstack, static_cast<int64_t>(v.deepstack.size()));
    for (uint64_t budget : schedule(v).budgets()) {
      auto device = EmuDevice::create(fast_emu(budget + (64ull << 20)));
      ASSERT_TRUE(device.ok());
      for (Device* d : {static_cast<Device*>(device->get()), static_cast<Device*>(nullptr)}) {
        const VisionPhaseInputs vi{schedule(v), **proj, in, budget, d, pool};
        auto got = run_vision_phase(vi);
        ASSERT_TRUE(got.ok()) << got.status().to_string();
        const VisionPhaseStats& st = got->stats;
        EXPECT_EQ(st.tier, tier);
        EXPECT_EQ(st.budget_bytes, budget);
        ASSERT_EQ(got->embeddings.data.size(), want->data.size());
        EXPECT_EQ(std::memcmp(got->embeddings.data.data(), want->data.data(),
                              want->data.size() * sizeof(float)),
                  0)
            << "budget " << budget << ", tier " << tier << ", " << st.strategy << ", "
            << (d ? "emu" : "cpu");
        EXPECT_EQ(got->embeddings.deepstack, want->deepstack)
            << "budget " << budget << ", tier " << tier << ", " << (d ? "emu" : "cpu");
        if (!d)
          continue;
        if (st.resident + st.streamed > 0) {
          EXPECT_EQ(st.peak_device_bytes, st.arena_bytes); // the phase allocates its plan's arena
          EXPECT_LE(st.peak_device_bytes, budget);
        }
        streamed_plans += st.streamed > 0;
        resident_plans += st.streamed == 0 && st.on_cpu == 0;
        mixed_plans += st.resident > 0 && st.streamed > 0;
        EXPECT_EQ((*device)->arena(), nullptr) << "the phase frees its arena";
      }
    }
  }
  // The grid covers the placements the phase executes differently.
  EXPECT_GT(streamed_plans, 0);
  EXPECT_GT(resident_plans, 0);
  EXPECT_GT(mixed_plans + streamed_plans, 0);
}

// An image prompt on emu under the schedule, at every budget: the vision phase, then the
// language plans, give the CPU session's tokens and logits; the measured peak device
// memory is the larger phase's arena, less than their sum.
TEST_P(VisionPhase, ImagePromptOnEmuIsTheCpuSessionsAndPeaksAtTheLargerPhase) {
  const Variant& v = GetParam();
  auto model = Model::load(vlm_model(v));
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto proj = Projector::open(variant_projector(v));
  ASSERT_TRUE(proj.ok());
  const ProjectorHParams& hp = (*proj)->hparams();
  ThreadPool pool(2);
  const VisionInput in = random_input(hp, 16, 16); // 256 patches, 64 image tokens
  auto host = encode_image(**proj, in, pool);
  ASSERT_TRUE(host.ok());
  std::vector<TokenId> prompt = {1, 5, 9};
  const auto image_pos = static_cast<int64_t>(prompt.size());
  prompt.insert(prompt.end(), static_cast<size_t>(host->n_tokens()), TokenId{0});
  prompt.insert(prompt.end(), {17, 3, 12, 40});

  SessionParams sp;
  sp.n_ctx = 512;
  auto cpu = CpuSession::create(**model, sp);
  ASSERT_TRUE(cpu.ok());
  ImagePromptDecoder cpu_decoder(**cpu, *host, image_pos);
  Trace want;
  ASSERT_OK(greedy_trace(cpu_decoder, prompt, 4, &want));

  if (!v.deepstack.empty()) { // the DeepStack rows reach the model
    ImageEmbeddings without = *host;
    without.deepstack.assign(without.deepstack.size(), 0.0f);
    auto plain = CpuSession::create(**model, sp);
    ASSERT_TRUE(plain.ok());
    ImagePromptDecoder plain_decoder(**plain, std::move(without), image_pos);
    Trace zeroed;
    ASSERT_OK(greedy_trace(plain_decoder, prompt, 4, &zeroed));
    EXPECT_FALSE(same_trace(want, zeroed)) << "zeroed DeepStack rows changed nothing";
  }
  for (uint64_t budget : schedule(v).budgets()) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    auto device = EmuDevice::create(fast_emu(budget + (64ull << 20)));
    ASSERT_TRUE(device.ok());
    HybridParams params;
    params.n_ctx = 512;
    params.n_threads = 2;
    params.vram_budget = budget;
    auto session = HybridSession::create(**model, &schedule(v), device->get(), params);
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    const uint64_t language_arena = (*device)->arena_bytes();
    ASSERT_OK((*session)->release_device());
    EXPECT_EQ((*device)->arena(), nullptr);
    const VisionPhaseInputs vi{schedule(v), **proj, in, (*session)->budget(), device->get(), pool};
    auto phase = run_vision_phase(vi);
    ASSERT_TRUE(phase.ok()) << phase.status().to_string();
    const uint64_t vision_arena = phase->stats.peak_device_bytes;
    ImagePromptDecoder decoder(**session, std::move(phase->embeddings), image_pos);
    Trace got;
    ASSERT_OK(greedy_trace(decoder, prompt, 4, &got));
    EXPECT_TRUE(same_trace(want, got));
    EXPECT_EQ((*session)->stats().peak_device_bytes, language_arena);
    EXPECT_EQ((*device)->peak_allocated_bytes(), std::max(vision_arena, language_arena));
    if (budget != schedule(v).budgets().back())
      continue;
    // Everything resident in both phases, each more than a fifth of the other: the peak
    // is the larger, less than the sum.
    ASSERT_GT(vision_arena, language_arena / 5) << vision_arena << " vs " << language_arena;
    ASSERT_GT(language_arena, vision_arena / 5) << language_arena << " vs " << vision_arena;
    EXPECT_LT((*device)->peak_allocated_bytes(), vision_arena + language_arena);
    std::printf("largest budget: vision arena %llu B, language arena %llu B, measured peak %llu "
                "B\n",
                static_cast<unsigned long long>(vision_arena),
                static_cast<unsigned long long>(language_arena),
                static_cast<unsigned long long>((*device)->peak_allocated_bytes()));
  }
}

// (c) An image above the largest tier, and a projector the schedule was not compiled for.
class VisionPhaseRefusals : public VisionPhase {}; // on the qwen2vl schedule

TEST_F(VisionPhaseRefusals, BadImagesAndProjectorsAreRefusedNamingTheFix) {
  auto proj = Projector::open(projector("vision-phase-proj"));
  ASSERT_TRUE(proj.ok());
  ThreadPool pool(2);
  const VisionInput big = random_input((*proj)->hparams(), 18, 16); // 288 > 256 patches
  const VisionPhaseInputs vi{schedule(), **proj, big, schedule().budgets().back(), nullptr, pool};
  auto refused = run_vision_phase(vi);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("288 patches"), std::string::npos)
      << refused.status().message();
  EXPECT_NE(refused.status().message().find("256"), std::string::npos);
  EXPECT_NE(refused.status().message().find("--image-sizes"), std::string::npos);

  auto other = Projector::open(projector("vision-phase-other-proj", 336));
  ASSERT_TRUE(other.ok());
  const VisionInput small = random_input((*other)->hparams(), 8, 8);
  const VisionPhaseInputs vo{schedule(), **other, small, schedule().budgets().back(),
                             nullptr,    pool};
  auto mismatch = run_vision_phase(vo);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().code(), StatusCode::kModelMismatch);
  EXPECT_NE(mismatch.status().message().find("another projector"), std::string::npos)
      << mismatch.status().message();

  auto lower = run_vision_phase(VisionPhaseInputs{schedule(), **proj, small,
                                                  schedule().budgets().front() - 1, nullptr, pool});
  ASSERT_FALSE(lower.ok());
  EXPECT_EQ(lower.status().code(), StatusCode::kOutOfMemory);
}

INSTANTIATE_TEST_SUITE_P(Towers, VisionPhase, ::testing::Values(kQwen25, kQwen3),
                         [](const auto& info) { return std::string(info.param.arch); });

} // namespace
} // namespace pshard::testing
