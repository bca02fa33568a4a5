#include "runtime/executor/plan_runtime.h"

#include "runtime/executor/expert_dispatch.h"

#include <algorithm>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

std::vector<uint8_t*> bases_at(uint8_t* arena, const std::vector<uint64_t>& offsets) {
  std::vector<uint8_t*> out;
  for (uint64_t o : offsets)
    out.push_back(o == kNoOffset ? nullptr : arena + o);
  return out;
}

void note_mapped(std::vector<void*>& mapped, void* host) {
  if (std::find(mapped.begin(), mapped.end(), host) == mapped.end())
    mapped.push_back(host);
}

} // namespace

Result<DeviceEvent*> EventPool::next() {
  if (used_ == events_.size()) {
    PSHARD_ASSIGN_OR_RETURN(auto e, device_.create_event());
    events_.push_back(std::move(e));
  }
  return events_[used_++].get();
}

Result<PlanRuntime> build_plan_runtime(const SchedulePlan& plan, const PlanInputs& in) {
  const auto& subs = in.model.sublayers();
  const ModelHParams& hp = in.model.hparams();
  PlanRuntime r;
  r.plan = &plan;
  PSHARD_ASSIGN_OR_RETURN(r.layout, resolve_layout(plan, in.model, in.tensors, in.host_kv));
  const size_t n = subs.size();
  r.on_device.assign(n, false);
  r.stream_index.assign(n, -1);
  r.device_weights.resize(n);
  r.packing.resize(n);
  r.route_on_host.assign(n, false);
  r.gather_rows.assign(n, false);
  r.experts.assign(n, nullptr);
  r.resident_experts.resize(n);
  r.copy_ahead.assign(n, false);
  r.device_kv.resize(n);
  r.slot_count = plan.stream_slot_count;
  r.prefetch_depth = std::max(plan.prefetch_depth, 1);
  for (size_t k = 0; k < plan.stream_order.size(); ++k)
    r.stream_index[static_cast<size_t>(plan.stream_order[k])] = static_cast<int>(k);

  for (size_t i = 0; i < n; ++i) {
    const sfb::Placement p = plan.placements[i];
    if (p == sfb::Placement::Cpu)
      continue;
    r.on_device[i] = true;
    const SubLayer& s = subs[i];
    if (p == sfb::Placement::GpuResident) {
      const auto bases = bases_at(in.arena, r.layout.tensor_offset[i]);
      PSHARD_ASSIGN_OR_RETURN(r.device_weights[i],
                              rebase_weights(s, in.host_weights[i], in.tensors[i], bases));
      if (s.kind == SubLayerKind::kAttention) {
        // The layer's cache in the host's types and rows (a ring too), K rows then V rows
        // for the plan's positions.
        KvView kv = in.host_kv.layer(s.layer);
        kv.n_ctx = r.layout.kv_positions;
        kv.k = in.arena + r.layout.kv_offset[i];
        kv.v = kv.k + in.host_kv.k_bytes(in.host_kv.rows_held(s.layer, kv.n_ctx));
        r.device_kv[i] = kv;
      }
      continue;
    }
    // Streamed: copy k of the stream order goes to slot k mod S, the same every pass.
    if (r.stream_index[i] < 0)
      return invalid_format("the plan streams " + s.name + " but its stream order omits it");
    uint8_t* slot =
        in.arena + r.layout.slot_offset[static_cast<size_t>(r.stream_index[i] % r.slot_count)];
    r.experts[i] = s.kind == SubLayerKind::kMoe ? plan.experts_of(i) : nullptr;
    auto pack = r.experts[i] ? Result<SlotPacking>(unsupported("split"))
                             : pack_slot(in.tensors[i], plan.stream_slot_bytes, s.name);
    std::vector<uint8_t*> bases(in.tensors[i].tensors.size(), nullptr);
    if (r.experts[i]) {
      // Expert-level: the unit and the routed copied experts are packed per pass.
      r.route_on_host[i] = true;
      r.resident_experts[i] = in.host_weights[i].moe;
      place_resident_experts(in.tensors[i], r.layout, i, in.arena, in.host_weights[i].moe,
                             &r.resident_experts[i]);
      const auto copied = static_cast<int64_t>(r.experts[i]->copied.size());
      if (copied <= hp.n_expert_used) { // as the planner priced it (ExpertPlacement.cpp)
        const std::vector<int64_t> ids(r.experts[i]->copied.begin(), r.experts[i]->copied.end());
        PSHARD_ASSIGN_OR_RETURN(r.packing[i], pack_experts(in.tensors[i], ids,
                                                           plan.stream_slot_bytes, s.name));
        for (const SlotPiece& piece : r.packing[i].pieces)
          if (piece.expert < 0)
            bases[static_cast<size_t>(piece.tensor)] = slot + piece.offset;
        PSHARD_ASSIGN_OR_RETURN(r.device_weights[i],
                                rebase_weights(s, in.host_weights[i], in.tensors[i], bases));
        place_experts(in.tensors[i], r.packing[i], slot, in.host_weights[i].moe,
                      &r.device_weights[i].moe);
        overlay_resident_experts(r.resident_experts[i], &r.device_weights[i].moe);
        r.copy_ahead[i] = true;
        continue;
      }
    } else if (pack.ok()) {
      r.packing[i] = std::move(pack).value();
      for (const SlotPiece& piece : r.packing[i].pieces)
        bases[static_cast<size_t>(piece.tensor)] = slot + piece.offset;
    } else if (s.kind == SubLayerKind::kEmbed) {
      // The slot holds only the rows of the pass's tokens, row t at t * row_bytes; the
      // device gathers rows 0..n-1 of that small table.
      r.gather_rows[i] = true;
      MatrixView table = in.host_weights[i].embed;
      table.data = slot;
      table.rows = plan.tier;
      if (table.row_bytes * static_cast<uint64_t>(plan.tier) > plan.stream_slot_bytes)
        return pack.status();
      r.device_weights[i].embed = table;
      continue;
    } else if (s.kind == SubLayerKind::kMoe) {
      // Only the experts a pass routes to will be copied (pack_experts, per pass); the
      // shared tensors' addresses are set then too.
      r.route_on_host[i] = true;
    } else {
      return pack.status();
    }
    PSHARD_ASSIGN_OR_RETURN(r.device_weights[i],
                            rebase_weights(s, in.host_weights[i], in.tensors[i], bases));
    if (s.kind == SubLayerKind::kAttention) {
      // Plans keep a streamed attention's KV cache in host RAM; the device reaches it
      // through a mapping.
      KvView host = in.host_kv.layer(s.layer);
      KvView mapped = host;
      const int64_t rows = in.host_kv.rows_held(s.layer, in.n_ctx);
      PSHARD_ASSIGN_OR_RETURN(mapped.k,
                              in.device.map_host_memory(host.k, in.host_kv.k_bytes(rows)));
      note_mapped(in.mapped_host, host.k);
      PSHARD_ASSIGN_OR_RETURN(mapped.v,
                              in.device.map_host_memory(host.v, in.host_kv.v_bytes(rows)));
      note_mapped(in.mapped_host, host.v);
      r.device_kv[i] = mapped;
    }
  }
  if (r.layout.activations_offset != kNoOffset) {
    r.device_act = carve_activations(
        hp, plan.tier, reinterpret_cast<float*>(in.arena + r.layout.activations_offset));
    // The logits rows follow the tier's activations: as many as the buffer holds.
    const uint64_t before = activation_floats(hp, plan.tier, 0) * sizeof(float);
    if (r.layout.activations_bytes > before)
      r.device_logit_rows =
          static_cast<int64_t>((r.layout.activations_bytes - before) /
                               (static_cast<uint64_t>(hp.n_vocab) * sizeof(float)));
  }
  return r;
}

} // namespace pshard
