// What the executor hands a device besides weights, checked on the emulated GPU behind a
// recording wrapper (so no GPU is needed to catch a CUDA-only defect):
// - a MoE pass routed on the host gives the device the host's routes, and every expert
//   they name was copied (a device that recomputed the routing with other rounding
//   could pick an expert that was never copied: a null address on CUDA);
// - every GPU plan's workspace buffer holds the device's fixed kernel scratch, inside
//   the arena and the budget; a schedule planned without it is refused at session
//   creation, naming both sizes and the fix;
// - host memory mapped for the device (streamed attention's KV cache) is mapped again by
//   every plan that streams it — the device must give the same address, as CUDA's
//   mapping now does (registering a range twice was an error there, which failed the
//   first decode pass after a prompt) — and all of it is unmapped when the session ends,
//   before the cache is freed;
// - an expert-level MoE block hands the device all of a pass's device experts in one
//   run_expert_groups call (CUDA runs them as grouped launches, not one expert at a time).
#include "executor_test_util.h"
#include "forwarding_device.h"
#include "runtime/executor/host_routes.h"

#include <map>

namespace pshard {
namespace {

using namespace pshard::testing;

// Forwards to the emu's Ops; checks every MoE dispatch the executor enqueues.
class CheckingOps final : public Ops {
public:
  explicit CheckingOps(Ops& inner) : inner_(inner) {}
  int routed_dispatches = 0;

  void rms_norm(const float* x, const float* w, float* y, int64_t n, int64_t d,
                float eps) override {
    inner_.rms_norm(x, w, y, n, d, eps);
  }
  void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n, int64_t d,
                  float eps) override {
    inner_.layer_norm(x, w, b, y, n, d, eps);
  }
  void matmul(const MatrixView& w, const float* x, int64_t n, float* y) override {
    inner_.matmul(w, x, n, y);
  }
  void rope(float* x, int64_t n, int64_t h, int64_t pos0, const RopeParams& p) override {
    inner_.rope(x, n, h, pos0, p);
  }
  void kv_append(const KvView& kv, const float* k, const float* v, int64_t pos0,
                 int64_t n) override {
    inner_.kv_append(kv, k, v, pos0, n);
  }
  void attention(const float* q, const KvView& kv, const AttentionDims& s, int64_t pos0, int64_t n,
                 float* out) override {
    inner_.attention(q, kv, s, pos0, n, out);
  }
  void silu_mul(const float* g, const float* u, float* out, int64_t n) override {
    inner_.silu_mul(g, u, out, n);
  }
  void gelu_mul(const float* g, const float* u, float* out, int64_t n) override {
    inner_.gelu_mul(g, u, out, n);
  }
  void gelu(float* x, int64_t n) override { inner_.gelu(x, n); }
  void gelu_erf_mul(const float* g, const float* u, float* out, int64_t n) override {
    inner_.gelu_erf_mul(g, u, out, n);
  }
  void swiglu_oai(const float* g, const float* u, float* out, int64_t n) override {
    inner_.swiglu_oai(g, u, out, n);
  }
  void scale(float* x, float s, int64_t n) override { inner_.scale(x, s, n); }
  void softcap(float* x, float cap, int64_t n) override { inner_.softcap(x, cap, n); }
  void add(float* y, const float* x, int64_t n) override { inner_.add(y, x, n); }
  void add_bias(float* y, const float* b, int64_t n, int64_t d) override {
    inner_.add_bias(y, b, n, d);
  }
  void matmul_heads(const ExpertMatrices& w, const float* x, int64_t x_stride, int64_t x_head,
                    int64_t n, float* y, int64_t y_stride, int64_t y_head) override {
    inner_.matmul_heads(w, x, x_stride, x_head, n, y, y_stride, y_head);
  }
  void copy_rows(const float* x, int64_t x_stride, float* y, int64_t y_stride, int64_t n_rows,
                 int64_t width) override {
    inner_.copy_rows(x, x_stride, y, y_stride, n_rows, width);
  }
  void add_gated(float* y, const float* x, const float* g, int64_t n, int64_t d) override {
    inner_.add_gated(y, x, g, n, d);
  }
  void sigmoid_mul(float* x, const float* g, int64_t n) override { inner_.sigmoid_mul(x, g, n); }
  void delta_net(const DeltaNetDims& d, const DeltaNetWeights& w, float* mixed, const float* b,
                 const float* a, int64_t stride, const KvView& state, int64_t pos0, int64_t n,
                 float* out) override {
    inner_.delta_net(d, w, mixed, b, a, stride, state, pos0, n, out);
  }
  void embed_rows(const MatrixView& t, std::span<const TokenId> ids, float* out) override {
    inner_.embed_rows(t, ids, out);
  }
  void moe_dispatch(const float* x, float* logits, const MoeDispatch& moe, int64_t n,
                    float* out) override {
    if (!moe.gate.placed.empty()) {
      ++routed_dispatches;
      EXPECT_TRUE(moe.routes) << "a pass routed on the host must hand the device its routes";
      if (moe.routes) {
        EXPECT_EQ(moe.routes->n_tokens, n);
        EXPECT_EQ(moe.routes->k, moe.n_expert_used);
        for (size_t i = 0; i < moe.routes->experts.size(); ++i) {
          const int32_t e = moe.routes->experts[i];
          ASSERT_TRUE(e >= 0 && e < moe.gate.n_expert) << "route " << i << " names expert " << e;
          if (i % static_cast<size_t>(moe.routes->k) > 0) {
            EXPECT_LT(moe.routes->experts[i - 1], e) << "experts ascend per token";
          }
          for (const ExpertMatrices* m : {&moe.gate, &moe.up, &moe.down})
            EXPECT_NE(m->placed[static_cast<size_t>(e)], nullptr)
                << "expert " << e << " is routed but was not copied";
        }
      }
    }
    inner_.moe_dispatch(x, logits, moe, n, out);
  }

private:
  Ops& inner_;
};

// The emulated GPU, claiming a kernel scratch of `kernel_bytes` and recording what the
// executor hands it.
class CheckingDevice final : public ForwardingDevice {
public:
  CheckingDevice(std::unique_ptr<EmuDevice> inner, uint64_t kernel_bytes)
      : ForwardingDevice(std::move(inner)), ops_(emu().compute()), kernel_bytes_(kernel_bytes) {}
  CheckingOps& ops() { return ops_; }
  int workspaces_set = 0;

  Ops& compute() override { return ops_; }
  uint64_t kernel_workspace_bytes() const override { return kernel_bytes_; }
  void set_workspace(uint8_t* p, uint64_t bytes) override {
    ++workspaces_set;
    EXPECT_GE(bytes, kernel_bytes_) << "the plan's workspace cannot hold the kernel scratch";
    EXPECT_GE(p, arena());
    EXPECT_LE(p + bytes, arena() + arena_bytes()) << "the workspace leaves the arena";
    ForwardingDevice::set_workspace(p, bytes);
  }

private:
  CheckingOps ops_;
  uint64_t kernel_bytes_;
};

TEST(HostRoutes, PerTokenInAscendingExpertOrder) {
  // Token 0 -> experts 3 and 1, token 1 -> experts 0 and 3 (moe_routes lists by expert).
  const std::vector<std::vector<MoeRoute>> by_expert = {
      {{1, 0.25f}}, {{0, 0.5f}}, {}, {{0, 0.5f}, {1, 0.75f}}};
  auto r = routes_by_token(by_expert, 2, 2);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ((*r)->experts, (std::vector<int32_t>{1, 3, 0, 3}));
  EXPECT_EQ((*r)->weights, (std::vector<float>{0.5f, 0.5f, 0.25f, 0.75f}));
}

TEST(HostRoutes, ATokenWithoutItsKExpertsIsAnInternalError) {
  const std::vector<std::vector<MoeRoute>> by_expert = {{{0, 1.0f}}, {}};
  auto r = routes_by_token(by_expert, 2, 1); // token 1 has no expert
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

constexpr int64_t kCtx = 64;
const std::vector<TokenId> kPrompt = {1, 40, 47, 26, 37, 29, 31};

// Runs `steps` greedy tokens with every plan of `sched` forced in turn on a checking
// emulated device whose backend needs `kernel_bytes` of scratch; `check` sees each run.
template <typename Check>
void for_every_plan(const Model& model, const Schedule& sched, uint64_t kernel_bytes, int steps,
                    Check check) {
  for (uint64_t budget : sched.budgets())
    for (int64_t tier : sched.tiers()) {
      SCOPED_TRACE("budget " + std::to_string(budget) + " tier " + std::to_string(tier));
      auto emu = EmuDevice::create(fast_emu(budget));
      ASSERT_TRUE(emu.ok());
      CheckingDevice device(std::move(*emu), kernel_bytes);
      const HybridParams params = forced_params(kCtx, budget, tier);
      auto session = HybridSession::create(model, &sched, &device, params);
      ASSERT_TRUE(session.ok()) << session.status().to_string();
      Trace trace;
      ASSERT_OK(greedy_trace(**session, kPrompt, steps, &trace));
      check(device, budget, trace);
    }
}

TEST(DeviceHandoff, RoutedExpertsComeWithTheHostsRoutes) {
  const std::string path = invariance_model_path("mk-moe6", "handoff-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto reference_session = CpuSession::create(**model, {kCtx, 2, 256});
  ASSERT_TRUE(reference_session.ok());
  Trace reference;
  ASSERT_OK(greedy_trace(**reference_session, kPrompt, 4, &reference));

  int routed = 0;
  auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1, 4, 16}, kCtx);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  for_every_plan(**model, sched, 0, 4, [&](CheckingDevice& device, uint64_t, const Trace& trace) {
    EXPECT_TRUE(same_trace(reference, trace)) << "the emu stays bit-identical to the CPU";
    routed += device.ops().routed_dispatches;
  });
  EXPECT_GT(routed, 0) << "no pass streamed routed experts: the test would check nothing";
}

TEST(DeviceHandoff, EveryGpuPlanHoldsTheKernelScratchWithinItsBudget) {
  const std::string path = invariance_model_path("mk-dense6", "handoff-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const uint64_t kernel = 3ull << 20;
  planner::FixedMachineParams machine = test_machine();
  machine.kernel_workspace_bytes = kernel;
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 16}, kCtx, {}, machine);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  EXPECT_GE(compiled->minimum_budget, kernel);
  const Schedule& sched = compiled->schedule;
  for_every_plan(**model, sched, kernel, 2,
                 [](CheckingDevice& device, uint64_t budget, const Trace&) {
                   EXPECT_GT(device.workspaces_set, 0);
                   EXPECT_LE(device.arena_bytes(), budget);
                 });
}

TEST(DeviceHandoff, APlanWithoutTheKernelScratchIsRefusedAtCreation) {
  const std::string path = invariance_model_path("mk-dense6", "handoff-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1}, kCtx); // no scratch
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const uint64_t budget = compiled->schedule.budgets().back();
  auto emu = EmuDevice::create(fast_emu(budget + (64ull << 20)));
  ASSERT_TRUE(emu.ok());
  CheckingDevice device(std::move(*emu), 32ull << 20);
  HybridParams params;
  params.n_ctx = kCtx;
  params.vram_budget = budget;
  auto session = HybridSession::create(**model, &compiled->schedule, &device, params);
  ASSERT_FALSE(session.ok());
  const std::string m = session.status().message();
  EXPECT_NE(m.find(std::to_string(32ull << 20) + " B"), std::string::npos) << m;
  EXPECT_NE(m.find("reserves a workspace of"), std::string::npos) << m;
  EXPECT_NE(m.find("recompile"), std::string::npos) << m;
}

// The emulated GPU, keeping CUDA's bookkeeping of mapped host ranges: a range inside a
// live mapping gets its address again (counted), a partial overlap is refused, and
// unregister_host_memory ends the mapping that begins at its address.
// The emulated GPU, recording each run_expert_groups call's groups.
class GroupsDevice final : public ForwardingDevice {
public:
  using ForwardingDevice::ForwardingDevice;
  std::vector<std::vector<ExpertRowGroup>> calls;

  void run_expert_groups(const MoeDispatch& moe, std::span<const ExpertRowGroup> groups,
                         const float* in, float* out) override {
    calls.emplace_back(groups.begin(), groups.end());
    ForwardingDevice::run_expert_groups(moe, groups, in, out);
  }
};

TEST(DeviceHandoff, ASplitBlockHandsTheDeviceAllItsExpertsInOneCall) {
  const std::string path = invariance_model_path("mk-moe6", "handoff-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const int64_t n_expert = (*model)->hparams().n_expert;
  auto reference_session = CpuSession::create(**model, {kCtx, 2, 256});
  ASSERT_TRUE(reference_session.ok());
  Trace reference;
  ASSERT_OK(greedy_trace(**reference_session, kPrompt, 4, &reference));

  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1, 4, 16}, kCtx);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  size_t calls = 0, groups = 0;
  for (uint64_t budget : sched.budgets())
    for (int64_t tier : sched.tiers()) {
      SCOPED_TRACE("budget " + std::to_string(budget) + " tier " + std::to_string(tier));
      auto emu = EmuDevice::create(fast_emu(budget));
      ASSERT_TRUE(emu.ok());
      GroupsDevice device(std::move(*emu));
      const HybridParams params = forced_params(kCtx, budget, tier);
      auto session = HybridSession::create(**model, &sched, &device, params);
      ASSERT_TRUE(session.ok()) << session.status().to_string();
      Trace trace;
      ASSERT_OK(greedy_trace(**session, kPrompt, 4, &trace));
      EXPECT_TRUE(same_trace(reference, trace)) << "the emu stays bit-identical to the CPU";
      uint64_t on_device = 0; // the session's count of expert uses on the device
      for (const PlanUse& u : (*session)->stats().plans)
        on_device += u.experts.resident + u.experts.copied;
      uint64_t handed = 0;
      for (const std::vector<ExpertRowGroup>& call : device.calls) {
        ASSERT_FALSE(call.empty()) << "a call without experts";
        for (size_t g = 0; g < call.size(); ++g) {
          EXPECT_GE(call[g].rows, 1);
          EXPECT_TRUE(call[g].expert >= 0 && call[g].expert < n_expert);
          if (g > 0) {
            EXPECT_LT(call[g - 1].expert, call[g].expert) << "experts ascend, each once";
          }
        }
        handed += call.size();
      }
      EXPECT_EQ(handed, on_device) << "every device expert of a pass, in the pass's one call";
      calls += device.calls.size();
      groups += handed;
    }
  std::cout << calls << " split passes handed the device " << groups << " experts\n";
  EXPECT_GT(calls, 0u) << "no plan split a MoE block: the test would check nothing";
  EXPECT_GT(groups, calls) << "no call carried more than one expert";
}

class MappingDevice final : public ForwardingDevice {
public:
  using ForwardingDevice::ForwardingDevice;
  std::map<const uint8_t*, uint64_t> live; // first address -> bytes
  int mapped = 0, mapped_again = 0;

  Result<uint8_t*> map_host_memory(void* h, uint64_t bytes) override {
    const auto* b = static_cast<const uint8_t*>(h);
    for (const auto& [at, n] : live) {
      if (b >= at && b + bytes <= at + n) {
        ++mapped_again;
        return ForwardingDevice::map_host_memory(h, bytes);
      }
      if (b < at + n && at < b + bytes)
        return internal_error("a range overlapping a mapped one");
    }
    live[b] = bytes;
    ++mapped;
    return ForwardingDevice::map_host_memory(h, bytes);
  }
  void unregister_host_memory(const void* h) override {
    live.erase(static_cast<const uint8_t*>(h));
    ForwardingDevice::unregister_host_memory(h);
  }
};

TEST(DeviceHandoff, MappedKvIsSharedByThePlansAndUnmappedAtTheEnd) {
  const std::string path = invariance_model_path("mk-dense6", "handoff-");
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  // gpu-only at its smallest budgets streams attention, whose KV cache stays on the host.
  auto compiled = compile_schedule(path, planner::Strategy::kGpuOnly, {1, 4, 16}, kCtx);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  const Schedule& sched = compiled->schedule;
  const uint64_t budget = sched.budgets().front();
  auto emu = EmuDevice::create(fast_emu(sched.budgets().back()));
  ASSERT_TRUE(emu.ok());
  MappingDevice device(std::move(*emu));
  {
    HybridParams params;
    params.n_ctx = kCtx;
    params.n_threads = 2;
    params.vram_budget = budget;
    auto session = HybridSession::create(**model, &sched, &device, params);
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    Trace trace; // the prompt's tier, then decode's: two plans
    ASSERT_OK(greedy_trace(**session, kPrompt, 3, &trace));
    // Budget changes rebuild the plans, which map the same cache again.
    for (uint64_t b : {sched.budgets().back(), budget})
      ASSERT_OK((*session)->set_budget(b));
    ASSERT_OK(greedy_trace(**session, kPrompt, 2, &trace));
    EXPECT_GT(device.mapped, 0) << "no plan streamed attention: the test would check nothing";
    EXPECT_GT(device.mapped_again, 0) << "no second plan mapped the cache";
    EXPECT_FALSE(device.live.empty());
  }
  EXPECT_TRUE(device.live.empty()) << device.live.size() << " mapped ranges outlive the session";
}

} // namespace
} // namespace pshard
