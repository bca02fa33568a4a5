// Which passes the executor hands a device as one recorded graph (pass_graph.h), and
// that it keeps its promise while recording: nothing but compute() ops between
// begin_graph and end_graph (no copy, event, wait or synchronization — what CUDA stream
// capture forbids). Checked on the emulated GPU behind a recording wrapper, so no GPU
// is needed; the CUDA capture itself is tested in cuda_graph_test (skips without one).
#include "executor_test_util.h"
#include "forwarding_device.h"
#include "runtime/executor/pass_graph.h"

#include <string>

namespace pshard {
namespace {

using namespace pshard::testing;

// --- The plan rules, on hand-made plans -----------------------------------------------

const std::vector<SubLayer> kDense = {{SubLayerKind::kEmbed, -1, "embed"},
                                      {SubLayerKind::kAttention, 0, "attn[0]"},
                                      {SubLayerKind::kFfn, 0, "ffn[0]"},
                                      {SubLayerKind::kHead, -1, "head"}};

PlanRuntime resident(size_t n) {
  PlanRuntime r;
  r.on_device.assign(n, true);
  r.stream_index.assign(n, -1);
  r.route_on_host.assign(n, false);
  r.gather_rows.assign(n, false);
  r.experts.assign(n, nullptr);
  r.device_kv.resize(n);
  return r;
}

bool says(const char* why, const std::string& word) {
  return why != nullptr && std::string(why).find(word) != std::string::npos;
}

TEST(PassGraphPlan, AFullyResidentDensePlanFits) {
  EXPECT_EQ(graph_unfit_plan(resident(kDense.size()), kDense), nullptr);
}

TEST(PassGraphPlan, EveryWayOffTheComputeQueueIsRefusedWithItsReason) {
  PlanRuntime cpu = resident(kDense.size());
  cpu.on_device[2] = false;
  EXPECT_TRUE(says(graph_unfit_plan(cpu, kDense), "CPU"));
  PlanRuntime streamed = resident(kDense.size());
  streamed.stream_index[2] = 0;
  EXPECT_TRUE(says(graph_unfit_plan(streamed, kDense), "streams"));
  PlanRuntime gathered = resident(kDense.size());
  gathered.gather_rows[0] = true;
  EXPECT_TRUE(says(graph_unfit_plan(gathered, kDense), "streams"));
  PlanRuntime paged = resident(kDense.size());
  const int32_t table[1] = {0};
  paged.device_kv[1].pages = table;
  EXPECT_TRUE(says(graph_unfit_plan(paged, kDense), "paged"));
  PlanRuntime short_plan = resident(kDense.size() - 1);
  EXPECT_TRUE(says(graph_unfit_plan(short_plan, kDense), "cover"));
}

TEST(PassGraphPlan, AResidentWholeMoeBlockFitsAnExpertLevelOneDoesNot) {
  std::vector<SubLayer> moe = kDense;
  moe[2] = {SubLayerKind::kMoe, 0, "moe[0]"};
  EXPECT_EQ(graph_unfit_plan(resident(moe.size()), moe), nullptr);
  PlanRuntime split = resident(moe.size());
  const SchedulePlan::Experts experts{};
  split.experts[2] = &experts;
  EXPECT_TRUE(says(graph_unfit_plan(split, moe), "expert by expert"));
}

// --- The executor's side, on the emulated GPU ------------------------------------------

// Records every pass the executor offers (as a CUDA device would) and fails the test
// when anything but a compute() op reaches it while recording. The ops run as they
// come, which is exactly what replaying them at end_graph must be equivalent to.
class RecordingDevice final : public ForwardingDevice {
public:
  using ForwardingDevice::ForwardingDevice;
  int64_t recorded = 0, replayed = 0, dropped = 0;
  std::vector<int64_t> recorded_tokens;

  bool begin_graph(uint64_t, int64_t n_tokens) override {
    EXPECT_FALSE(recording_) << "begin_graph while recording";
    recording_ = true;
    ++recorded;
    recorded_tokens.push_back(n_tokens);
    return true;
  }
  bool end_graph(bool replay) override {
    EXPECT_TRUE(recording_) << "end_graph without begin_graph";
    recording_ = false;
    ++(replay ? replayed : dropped);
    return replay;
  }
  void copy_to_device(Queue q, void* d, const void* h, uint64_t b) override {
    forbidden("copy_to_device");
    ForwardingDevice::copy_to_device(q, d, h, b);
  }
  void copy_to_host(Queue q, void* h, const void* d, uint64_t b) override {
    forbidden("copy_to_host");
    ForwardingDevice::copy_to_host(q, h, d, b);
  }
  void record(DeviceEvent& e, Queue q) override {
    forbidden("record");
    ForwardingDevice::record(e, q);
  }
  void wait(Queue q, const DeviceEvent& e) override {
    forbidden("wait");
    ForwardingDevice::wait(q, e);
  }
  Status synchronize(const DeviceEvent& e) override {
    forbidden("synchronize(event)");
    return ForwardingDevice::synchronize(e);
  }
  Status synchronize() override {
    forbidden("synchronize");
    return ForwardingDevice::synchronize();
  }
  void set_workspace(uint8_t* p, uint64_t bytes) override {
    forbidden("set_workspace");
    ForwardingDevice::set_workspace(p, bytes);
  }

private:
  void forbidden(const char* call) const {
    EXPECT_FALSE(recording_) << call << " while the pass is recorded as a graph";
  }
  bool recording_ = false;
};

constexpr int64_t kCtx = 64;
constexpr int kSteps = 6;
// 12 tokens: a chunk of tier 16 is a prefill pass (not recorded), of tiers 1 and 4 not.
const std::vector<TokenId> kPrompt = {1, 40, 47, 26, 37, 29, 31, 12, 55, 8, 19, 3};

struct Counts {
  int64_t recorded = 0, skipped = 0; // runs with and without recorded passes
};

// Every plan of the model's schedule forced in turn, greedy from kPrompt: the tokens
// and logits stay the CPU's, and exactly the passes pass_graph.h admits are recorded.
Counts run_every_plan(const std::string& name) {
  Counts counts;
  const std::string path = invariance_model_path(name, "graph-");
  auto model = Model::load(path);
  EXPECT_TRUE(model.ok()) << model.status().to_string();
  if (!model.ok())
    return counts;
  auto cpu = CpuSession::create(**model, {kCtx, 2, 256});
  EXPECT_TRUE(cpu.ok());
  Trace reference;
  EXPECT_TRUE(greedy_trace(**cpu, kPrompt, kSteps, &reference).ok());
  auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1, 4, 16}, kCtx);
  EXPECT_TRUE(compiled.ok()) << compiled.status().to_string();
  if (!compiled.ok())
    return counts;
  const Schedule& sched = compiled->schedule;
  for (size_t b = 0; b < sched.budgets().size(); ++b)
    for (size_t t = 0; t < sched.tiers().size(); ++t) {
      const uint64_t budget = sched.budgets()[b];
      const int64_t tier = sched.tiers()[t];
      SCOPED_TRACE(name + " budget " + std::to_string(budget) + " tier " + std::to_string(tier));
      auto emu = EmuDevice::create(fast_emu(budget));
      EXPECT_TRUE(emu.ok());
      if (!emu.ok())
        continue;
      RecordingDevice device(std::move(*emu));
      const HybridParams params = forced_params(kCtx, budget, tier);
      auto session = HybridSession::create(**model, &sched, &device, params);
      EXPECT_TRUE(session.ok()) << session.status().to_string();
      if (!session.ok())
        continue;
      Trace trace;
      EXPECT_TRUE(greedy_trace(**session, kPrompt, kSteps, &trace).ok());
      EXPECT_TRUE(same_trace(reference, trace)) << "recorded passes change no bit on emu";
      // The prompt in chunks of the tier, then one token per step.
      const int64_t n = static_cast<int64_t>(kPrompt.size());
      const int64_t prompt_passes = tier <= kGraphMaxTokens ? (n + tier - 1) / tier : 0;
      const bool fits = all_resident(sched.plan({b, t, 0}));
      EXPECT_EQ(device.recorded, fits ? prompt_passes + kSteps - 1 : 0);
      EXPECT_EQ(device.dropped, 0);
      EXPECT_EQ(device.replayed, device.recorded);
      EXPECT_EQ((*session)->stats().graph_passes, device.replayed);
      for (int64_t tokens : device.recorded_tokens)
        EXPECT_LE(tokens, kGraphMaxTokens);
      ++(device.recorded > 0 ? counts.recorded : counts.skipped);
    }
  return counts;
}

TEST(PassGraphExecutor, ResidentDensePlansRecordTheirDecodePassesAndNothingElse) {
  const Counts c = run_every_plan("mk-dense6");
  EXPECT_GT(c.recorded, 0) << "no plan was fully resident: the test would check nothing";
  EXPECT_GT(c.skipped, 0) << "every plan was fully resident: the refusals go unchecked";
}

// Resident whole MoE blocks route on the device and upload no expert table: recorded
// like dense ones (the grouped dispatch, cuda_moe.cpp).
TEST(PassGraphExecutor, ResidentMoePlansRecordTheirDecodePassesToo) {
  const Counts c = run_every_plan("mk-moe6");
  EXPECT_GT(c.recorded, 0) << "no plan was fully resident: the test would check nothing";
  EXPECT_GT(c.skipped, 0) << "every plan was fully resident: the refusals go unchecked";
}

TEST(PassGraphExecutor, ATracedPassIsNotRecorded) {
  const std::string path = invariance_model_path("mk-dense6", "graph-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1}, kCtx);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  const uint64_t budget = sched.budgets().back(); // past the whole model: all resident
  ASSERT_TRUE(all_resident(sched.plan({sched.budgets().size() - 1, 0, 0})));
  auto emu = EmuDevice::create(fast_emu(budget));
  ASSERT_TRUE(emu.ok());
  RecordingDevice device(std::move(*emu));
  HybridParams params;
  params.n_ctx = kCtx;
  params.n_threads = 2;
  params.vram_budget = budget;
  auto session = HybridSession::create(**model, &sched, &device, params);
  ASSERT_TRUE(session.ok()) << session.status().to_string();
  Timeline timeline;
  (*session)->set_timeline(&timeline);
  Trace trace;
  ASSERT_OK(greedy_trace(**session, kPrompt, 3, &trace));
  EXPECT_EQ(device.recorded, 0);
  EXPECT_FALSE(timeline.slices().empty());
}

} // namespace
} // namespace pshard
