// A plan made ready to execute against the arena the session holds: device views of
// every resident sub-layer's weights and KV cache, each streamed sub-layer's slot and
// packing, and the device activation buffers. Built once per plan (after a budget
// switch, again), so a pass does no planning and no layout work.
#pragma once

#include "runtime/device/device.h"
#include "runtime/executor/plan_layout.h"

#include <memory>
#include <vector>

namespace pshard {

struct PlanRuntime {
  const SchedulePlan* plan = nullptr;
  PlanLayout layout;
  // Per sub-layer.
  std::vector<bool> on_device;
  std::vector<int> stream_index;               // position in plan->stream_order, or -1
  std::vector<SubLayerWeights> device_weights; // resident and (fully packed) streamed
  std::vector<SlotPacking> packing;            // streamed, fully packed
  std::vector<bool> route_on_host;             // streamed MoE whose experts do not all fit
  std::vector<bool> gather_rows;               // streamed embed: only the pass's token rows
  // Expert-level MoE blocks (expert_dispatch.h): the plan's split (null: placed whole)
  // and the device addresses of its resident experts (ExpertMatrices::placed).
  std::vector<const SchedulePlan::Experts*> experts;
  std::vector<MoeWeights> resident_experts;
  // Expert-level blocks copying no more experts than one token routes to: all of them
  // copied ahead (packing, device_weights), without waiting for the router — as priced.
  std::vector<bool> copy_ahead;
  std::vector<KvView> device_kv;               // attention on the device
  ActivationPtrs device_act;
  int64_t device_logit_rows = 0; // rows of logits device_act holds
  int slot_count = 0;
  int prefetch_depth = 1;
};

// What the builder needs from the session.
struct PlanInputs {
  const Model& model;
  const std::vector<SubLayerTensors>& tensors;
  const std::vector<SubLayerWeights>& host_weights;
  KvCache& host_kv;
  Device& device;
  uint8_t* arena;
  int64_t n_ctx; // rows of host_kv (a batch: its page pool)
  // Where the builder records host memory it maps for the device (streamed attention's
  // KV cache), each range once, as soon as it is mapped (a build that fails later still
  // leaves it there). Plans of a session map the same cache — the device gives the same
  // address again — so the session, not a plan, unmaps them: when it ends.
  std::vector<void*>& mapped_host;
};

Result<PlanRuntime> build_plan_runtime(const SchedulePlan& plan, const PlanInputs& in);

// Events handed out during a pass and reused by the next (all complete by then).
class EventPool {
public:
  explicit EventPool(Device& device) : device_(device) {}
  Result<DeviceEvent*> next();
  void reset() { used_ = 0; }

private:
  Device& device_;
  std::vector<std::unique_ptr<DeviceEvent>> events_;
  size_t used_ = 0;
};

} // namespace pshard
