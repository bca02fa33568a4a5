#include "runtime/executor/expert_dispatch.h"

#include "runtime/model/sublayer.h"

#include <algorithm>

namespace pshard {
namespace {

// The host-side expert tensors of a MoE sub-layer's weights (gate, up, down order).
std::vector<std::pair<const ExpertMatrices*, ExpertMatrices*>> expert_pairs(const MoeWeights& host,
                                                                           MoeWeights* device) {
  return {{&host.gate, &device->gate}, {&host.up, &device->up}, {&host.down, &device->down}};
}

} // namespace

void place_resident_experts(const SubLayerTensors& t, const PlanLayout& layout, size_t i,
                            uint8_t* arena, const MoeWeights& host, MoeWeights* device) {
  if (layout.expert_offset.size() <= i || layout.expert_offset[i].empty())
    return;
  uint64_t total = 0;
  const std::vector<uint64_t> slice_at = expert_slice_offsets(t, &total);
  for (const auto& [h, d] : expert_pairs(host, device)) {
    d->placed.resize(static_cast<size_t>(d->n_expert), nullptr);
    for (size_t j = 0; j < t.tensors.size(); ++j) {
      if (!t.tensors[j].experts || h->first.data != t.tensors[j].host)
        continue;
      for (size_t e = 0; e < layout.expert_offset[i].size() && e < d->placed.size(); ++e)
        if (layout.expert_offset[i][e] != kNoOffset)
          d->placed[e] = arena + layout.expert_offset[i][e] + slice_at[j];
    }
  }
}

void overlay_resident_experts(const MoeWeights& resident, MoeWeights* device) {
  for (auto [d, r] : {std::pair{&device->gate, &resident.gate}, std::pair{&device->up, &resident.up},
                      std::pair{&device->down, &resident.down}}) {
    d->placed.resize(static_cast<size_t>(d->n_expert), nullptr);
    for (size_t e = 0; e < r->placed.size() && e < d->placed.size(); ++e)
      if (r->placed[e])
        d->placed[e] = r->placed[e];
  }
}

uint64_t upload_resident_experts(Device& device, const PlanLayout& to,
                                 const std::optional<PlanLayout>& kept_from,
                                 const std::vector<SubLayerTensors>& tensors) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < to.expert_offset.size(); ++i) {
    uint64_t total = 0;
    const std::vector<uint64_t> slice_at = expert_slice_offsets(tensors[i], &total);
    for (size_t e = 0; e < to.expert_offset[i].size(); ++e) {
      const uint64_t at = to.expert_offset[i][e];
      if (at == kNoOffset)
        continue;
      if (kept_from && kept_from->expert_offset.size() > i &&
          kept_from->expert_offset[i].size() > e && kept_from->expert_offset[i][e] == at)
        continue; // the same expert at the same offset: still there
      for (size_t j = 0; j < tensors[i].tensors.size(); ++j) {
        const TensorBytes& tb = tensors[i].tensors[j];
        if (!tb.experts)
          continue;
        const uint64_t slice = tb.bytes / static_cast<uint64_t>(tb.n_expert);
        device.copy_to_device(Queue::kCopy, device.arena() + at + slice_at[j],
                              tb.host + e * slice, slice);
        bytes += slice;
      }
    }
  }
  return bytes;
}

Status run_split_moe(SplitMoe& job, ForwardPass& host_pass) {
  const ModelHParams& hp = job.hp;
  const int64_t d = hp.n_embd, n = host_pass.n_tokens();
  const size_t n_expert = job.routes.size();
  const MoeDispatch on_device = moe_dispatch_of(hp, job.device_weights, job.device_act);
  const MoeDispatch on_host = moe_dispatch_of(hp, job.host_weights, job.host_act);
  if (job.copied)
    job.device.wait(Queue::kCompute, *job.copied);
  // The device's experts in one call: their rows gathered in ascending expert order, in
  // host memory until the sum (the device reads them until its queue passes `done`).
  std::vector<ExpertRowGroup> groups;
  std::vector<const float*> y(n_expert, nullptr); // each routed expert's output rows
  for (size_t e = 0; e < n_expert; ++e)
    if (!job.routes[e].empty() && job.on_device[e])
      groups.push_back({static_cast<int32_t>(e), static_cast<int64_t>(job.routes[e].size())});
  std::vector<float> rows(static_cast<size_t>(expert_group_rows(groups) * d));
  std::vector<float> device_out(rows.size());
  int64_t row = 0;
  for (const ExpertRowGroup& g : groups) {
    const std::vector<MoeRoute>& r = job.routes[static_cast<size_t>(g.expert)];
    moe_gather(r, job.host_act.normed, d, rows.data() + row * d, on_host.gating.weight_inputs);
    y[static_cast<size_t>(g.expert)] = device_out.data() + row * d;
    row += g.rows;
  }
  if (!groups.empty())
    job.device.run_expert_groups(on_device, groups, rows.data(), device_out.data());
  job.device.record(*job.done, Queue::kCompute);
  // The host's experts while the device runs its own.
  std::vector<std::vector<float>> host_out(n_expert);
  for (size_t e = 0; e < n_expert; ++e) {
    const std::vector<MoeRoute>& r = job.routes[e];
    if (r.empty() || job.on_device[e])
      continue;
    const auto m = static_cast<int64_t>(r.size());
    moe_gather(r, job.host_act.normed, d, job.host_act.expert_in, on_host.gating.weight_inputs);
    moe_expert_ffn(job.cpu, on_host, static_cast<int64_t>(e), m);
    host_out[e].assign(job.host_act.expert_out, job.host_act.expert_out + m * d);
    y[e] = host_out[e].data();
  }
  PSHARD_RETURN_IF_ERROR(job.device.synchronize(*job.done));
  std::fill_n(job.host_act.moe_out, n * d, 0.0f);
  for (size_t e = 0; e < n_expert; ++e)
    if (!job.routes[e].empty())
      moe_accumulate(job.routes[e], y[e], d, job.host_act.moe_out, on_host.gating.weight_inputs);
  moe_finish(host_pass, job.host_weights);
  return Status::ok_status();
}

} // namespace pshard
