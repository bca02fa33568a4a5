// Expert-level MoE blocks (schedule 1.5 Plan.experts) in the executor: the router,
// norms and shared expert are the sub-layer's streamed unit; of the routed experts the
// plan keeps some resident (uploaded with the plan's residency), copies others when a
// pass routes to them, and runs the rest on the host — at the same time as the device
// runs its own. Every expert's output is summed on the host in ascending expert order
// per token with the CPU dispatch's own summation (moe_accumulate), so a split pass
// gives the `cpu` session's logits bit for bit whatever the split.
//
//   // building a plan: where the resident experts live
//   place_resident_experts(tensors[i], layout, i, arena, host_w.moe, &r.resident_experts[i]);
//   // per pass, after routing on the host:
//   SplitMoe job{...};
//   PSHARD_RETURN_IF_ERROR(run_split_moe(job));
#pragma once

#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/device/device.h"
#include "runtime/executor/plan_layout.h"

#include <optional>
#include <vector>

namespace pshard {

// Device addresses of sub-layer i's resident experts (placed[e] per expert tensor;
// null for the others), from the layout's Expert buffers.
void place_resident_experts(const SubLayerTensors& t, const PlanLayout& layout, size_t i,
                            uint8_t* arena, const MoeWeights& host, MoeWeights* device);

// Sets `device`'s placed[e] to the resident experts' addresses in `resident` (the others
// keep theirs: the experts copied into the slot).
void overlay_resident_experts(const MoeWeights& resident, MoeWeights* device);

// Uploads the resident experts `to` holds that the arena laid out as `kept_from` does
// not hold at the same offset; returns the bytes copied (on Queue::kCopy).
uint64_t upload_resident_experts(Device& device, const PlanLayout& to,
                                 const std::optional<PlanLayout>& kept_from,
                                 const std::vector<SubLayerTensors>& tensors);

// One split MoE pass. The router ran on the host (routes: moe_routes' result), the
// copied experts' copy was issued (`copied`: its event, null when nothing was copied).
struct SplitMoe {
  const ModelHParams& hp;
  Device& device;
  CpuOps& cpu;
  const ActivationPtrs& host_act;   // normed holds the block's input, hidden the residual
  const ActivationPtrs& device_act; // expert_in/out, gate and up as device scratch
  const MoeWeights& host_weights;
  const MoeWeights& device_weights; // placed[e] for every resident and copied expert
  const std::vector<std::vector<MoeRoute>>& routes;
  const std::vector<bool>& on_device; // per expert: resident or copied
  DeviceEvent* copied = nullptr;
  DeviceEvent* done = nullptr; // recorded on the compute queue after the device's experts
};
// Runs the device's experts (enqueued first, all in one Device::run_expert_groups) and
// the host's at once, then sums every expert's output in ascending order into
// host_act.moe_out and finishes the block on the host (shared expert, residual):
// host_act.hidden is the block's output.
Status run_split_moe(SplitMoe& job, ForwardPass& host_pass);

} // namespace pshard
