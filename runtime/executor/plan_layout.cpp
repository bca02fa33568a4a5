#include "runtime/executor/plan_layout.h"

#include <algorithm>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

Status bad_layout(const SchedulePlan& p, const std::string& what) {
  return invalid_format("the plan for budget " + std::to_string(p.budget_bytes) + " B, tier " +
                        std::to_string(p.tier) + " has an unusable VRAM layout: " + what +
                        "; recompile the schedule with pshard-compile");
}

bool on_gpu(sfb::Placement p) { return p != sfb::Placement::Cpu; }

} // namespace

Status check_kernel_workspace(const SchedulePlan& plan, uint64_t kernel_bytes,
                              const std::string& backend) {
  if (kernel_bytes == 0 ||
      std::none_of(plan.placements.begin(), plan.placements.end(), on_gpu))
    return Status::ok_status();
  uint64_t workspace = 0;
  for (const SchedulePlan::Buffer& b : plan.vram_layout)
    if (b.kind == sfb::BufferKind::Workspace)
      workspace = std::max(workspace, b.size);
  if (workspace >= kernel_bytes)
    return Status::ok_status();
  return invalid_argument(
      "the plan for budget " + std::to_string(plan.budget_bytes) + " B, tier " +
      std::to_string(plan.tier) + " reserves a workspace of " + std::to_string(workspace) +
      " B, but the " + backend + " backend's kernels need " + std::to_string(kernel_bytes) +
      " B there: the schedule was compiled against a profile without this GPU's kernel "
      "scratch (an emu or an older profile, or --kernel-workspace); recompile it with "
      "pshard-compile against a profile of this GPU (pshard-profile --backend " + backend +
      ", or a shipped reference profile)");
}

std::vector<uint64_t> expert_slice_offsets(const SubLayerTensors& t, uint64_t* total) {
  std::vector<uint64_t> at(t.tensors.size(), kNoOffset);
  uint64_t end = 0;
  for (size_t j = 0; j < t.tensors.size(); ++j)
    if (t.tensors[j].experts) {
      at[j] = end;
      end += (t.tensors[j].bytes / static_cast<uint64_t>(t.tensors[j].n_expert) + 255) / 256 * 256;
    }
  *total = end;
  return at;
}

uint64_t kv_layer_bytes(const KvCache& kv, int64_t n) { return kv.k_bytes(n) + kv.v_bytes(n); }

int64_t device_kv_positions(const SchedulePlan& plan, const KvCache& kv) {
  // The plan's context range per sequence (a shorter session: its context).
  return plan.context > 0
             ? std::min(plan.context * std::max<int64_t>(plan.sequences, 1), kv.n_ctx())
             : kv.n_ctx();
}

Result<PlanLayout> resolve_layout(const SchedulePlan& plan, const Model& model,
                                  const std::vector<SubLayerTensors>& tensors, const KvCache& kv) {
  const auto& subs = model.sublayers();
  const ModelHParams& hp = model.hparams();
  PlanLayout l;
  l.arena_bytes = plan.arena_bytes;
  l.kv_positions = device_kv_positions(plan, kv);
  l.tensor_offset.resize(subs.size());
  for (size_t i = 0; i < subs.size(); ++i)
    l.tensor_offset[i].assign(tensors[i].tensors.size(), kNoOffset);
  l.kv_offset.assign(subs.size(), kNoOffset);
  l.slot_offset.assign(static_cast<size_t>(std::max(plan.stream_slot_count, 0)), kNoOffset);
  uint64_t activations_size = 0;
  for (const SchedulePlan::Buffer& b : plan.vram_layout) {
    const size_t s = static_cast<size_t>(std::max(b.sublayer, 0));
    switch (b.kind) {
    case sfb::BufferKind::Weights: {
      if (b.sublayer < 0 || b.index < 0 ||
          static_cast<size_t>(b.index) >= tensors[s].tensors.size())
        return bad_layout(plan, "a weights buffer names no tensor");
      if (b.size < tensors[s].tensors[static_cast<size_t>(b.index)].bytes)
        return bad_layout(plan, "the buffer of " +
                                    tensors[s].tensors[static_cast<size_t>(b.index)].name +
                                    " is smaller than the tensor");
      l.tensor_offset[s][static_cast<size_t>(b.index)] = b.offset;
      break;
    }
    case sfb::BufferKind::KvCache:
      if (b.sublayer < 0 || subs[s].kind != SubLayerKind::kAttention)
        return bad_layout(plan, "a KV cache buffer belongs to no attention sub-layer");
      if (b.size < kv_layer_bytes(kv, kv.rows_held(subs[s].layer, l.kv_positions)))
        return bad_layout(plan, "the KV cache of " + subs[s].name + " holds fewer than " +
                                    std::to_string(kv.rows_held(subs[s].layer, l.kv_positions)) +
                                    " positions");
      l.kv_offset[s] = b.offset;
      break;
    case sfb::BufferKind::StreamSlot:
      if (b.index < 0 || static_cast<size_t>(b.index) >= l.slot_offset.size() ||
          b.size < plan.stream_slot_bytes)
        return bad_layout(plan, "a streaming slot buffer is out of range or too small");
      l.slot_offset[static_cast<size_t>(b.index)] = b.offset;
      break;
    case sfb::BufferKind::Activations:
      l.activations_offset = b.offset;
      l.activations_bytes = activations_size = b.size;
      break;
    case sfb::BufferKind::Workspace: // scratch for tiled kernels (CUDA)
      l.workspace_offset = b.offset;
      l.workspace_bytes = b.size;
      break;
    case sfb::BufferKind::Expert: {
      const SchedulePlan::Experts* e = b.sublayer < 0 ? nullptr : plan.experts_of(s);
      uint64_t need = 0;
      if (e)
        expert_slice_offsets(tensors[s], &need);
      const int64_t n_expert = subs[s].kind == SubLayerKind::kMoe ? hp.n_expert : 0;
      if (!e || b.index < 0 || b.index >= n_expert || b.size < need)
        return bad_layout(plan, "an expert buffer names no expert of an expert-level MoE "
                                "block, or is smaller than the expert");
      l.expert_offset.resize(subs.size());
      l.expert_offset[s].resize(static_cast<size_t>(n_expert), kNoOffset);
      l.expert_offset[s][static_cast<size_t>(b.index)] = b.offset;
      break;
    }
    }
  }
  for (const SchedulePlan::Experts& e : plan.experts)
    for (int32_t id : e.resident)
      if (l.expert_offset.empty() || l.expert_offset[static_cast<size_t>(e.sublayer)].size() <= static_cast<size_t>(id) ||
          l.expert_offset[static_cast<size_t>(e.sublayer)][static_cast<size_t>(id)] == kNoOffset)
        return bad_layout(plan, "resident expert " + std::to_string(id) + " of " +
                                    subs[static_cast<size_t>(e.sublayer)].name + " has no buffer");
  bool any_gpu = false;
  for (size_t i = 0; i < subs.size(); ++i) {
    const sfb::Placement p = plan.placements[i];
    any_gpu = any_gpu || on_gpu(p);
    if (p != sfb::Placement::GpuResident)
      continue;
    for (size_t j = 0; j < l.tensor_offset[i].size(); ++j)
      if (l.tensor_offset[i][j] == kNoOffset)
        return bad_layout(plan, "resident " + subs[i].name + " has no buffer for tensor " +
                                    tensors[i].tensors[j].name);
    if (subs[i].kind == SubLayerKind::kAttention && l.kv_offset[i] == kNoOffset)
      return bad_layout(plan, "resident " + subs[i].name + " has no KV cache buffer");
  }
  for (uint64_t o : l.slot_offset)
    if (o == kNoOffset)
      return bad_layout(plan, "a streaming slot has no buffer");
  const uint64_t act_need = activation_floats(hp, plan.tier) * sizeof(float);
  if (any_gpu && (l.activations_offset == kNoOffset || activations_size < act_need))
    return bad_layout(plan, "the activation buffer is missing or smaller than the " +
                                std::to_string(act_need) + " B a pass of " +
                                std::to_string(plan.tier) + " tokens needs");
  return l;
}

} // namespace pshard
