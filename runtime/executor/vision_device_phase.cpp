// A vision plan's sub-layers on a device whose memory the host may address (emu). The
// arena, in the order the planner sums it (VisionPlan.arena_bytes):
//
//   0                 resident     stream slots         activations       workspace
//   +-----------------+------------+----+----+---------+-----------------+-----------+
//   | resident tensors, 256-aligned | slot 0 | slot 1 | VisionBuffers    | attention |
//   | in sub-layer order            | (streamed, packed)| (hidden ... ff_b)| tile slots|
//   +-----------------+------------+----+----+---------+-----------------+-----------+
//
// Every region is checked against the plan's figure before anything is uploaded, so a
// plan the runtime cannot honour is refused (recompile) rather than overrun.
#include "runtime/executor/vision_device_phase.h"

#include "runtime/vision/tiled_attention.h"

#include <algorithm>
#include <functional>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

constexpr uint64_t kResidentAlign = 256; // the planner's kVramAlignment
constexpr uint64_t kSlotAlign = 16;      // tensors packed inside a slot

uint64_t align_up(uint64_t bytes, uint64_t to) { return (bytes + to - 1) / to * to; }

// One weight tensor of a sub-layer: its host bytes and how to point its view elsewhere.
struct WeightRef {
  const void* host;
  uint64_t bytes;
  std::function<void(const uint8_t*)> rebind;
};

void add_vector(std::vector<WeightRef>& out, VectorWeight& v, int64_t n) {
  if (v.data)
    out.push_back({v.data, static_cast<uint64_t>(n) * sizeof(float),
                   [&v](const uint8_t* p) { v.data = reinterpret_cast<const float*>(p); }});
}

void add_matrix(std::vector<WeightRef>& out, MatrixView& m) {
  if (m.data)
    out.push_back({m.data, static_cast<uint64_t>(m.rows) * m.row_bytes,
                   [&m](const uint8_t* p) { m.data = p; }});
}

void add_linear(std::vector<WeightRef>& out, VisionLinear& l) {
  add_matrix(out, l.w);
  add_vector(out, l.b, l.w.rows);
}

void add_norm(std::vector<WeightRef>& out, VisionNorm& n, int64_t width) {
  add_vector(out, n.weight, width);
  add_vector(out, n.bias, width);
}

// The tensors sub-layer `s` reads, as views inside `w` (which the refs rebind).
std::vector<WeightRef> weight_refs(const VisionSubLayer& s, ProjectorWeights& w,
                                   const ProjectorHParams& hp) {
  std::vector<WeightRef> out;
  const auto b = static_cast<size_t>(s.block);
  switch (s.kind) {
  case VisionSubLayerKind::kPatchEmbed:
    add_matrix(out, w.patch); // the summed kernel (projector.h)
    add_vector(out, w.patch_bias, hp.n_embd);
    add_vector(out, w.positions, hp.n_embd * hp.pos_side * hp.pos_side);
    break;
  case VisionSubLayerKind::kAttention:
    add_norm(out, w.attn[b].norm, hp.n_embd);
    for (VisionLinear* l : {&w.attn[b].q, &w.attn[b].k, &w.attn[b].v, &w.attn[b].out})
      add_linear(out, *l);
    break;
  case VisionSubLayerKind::kFfn:
    add_norm(out, w.ffn[b].norm, hp.n_embd);
    for (VisionLinear* l : {&w.ffn[b].gate, &w.ffn[b].up, &w.ffn[b].down})
      add_linear(out, *l);
    if (w.ffn[b].deepstack.fc1.w.data) {
      add_norm(out, w.ffn[b].deepstack.norm, 4 * hp.n_embd);
      add_linear(out, w.ffn[b].deepstack.fc1);
      add_linear(out, w.ffn[b].deepstack.fc2);
    }
    break;
  case VisionSubLayerKind::kMerger:
    add_norm(out, w.merger.norm, hp.n_embd);
    add_linear(out, w.merger.fc0);
    add_linear(out, w.merger.fc2);
    break;
  }
  return out;
}

uint64_t packed_bytes(const std::vector<WeightRef>& refs, uint64_t align) {
  uint64_t at = 0;
  for (const WeightRef& r : refs)
    at = align_up(at, align) + r.bytes;
  return at;
}

std::string mib(uint64_t bytes) {
  return std::to_string(bytes) + " B (" + std::to_string(bytes >> 20) + " MiB)";
}

// The planned phase on a device whose memory the host may address (emu).
class DevicePhase {
public:
  DevicePhase(const VisionPhaseInputs& in, const sfb::VisionPlan& plan, VisionPass& pass,
              VisionPhaseStats& stats)
      : in_(in), plan_(plan), pass_(pass), stats_(stats), d_(*in.device),
        hp_(in.projector.hparams()), subs_(vision_sublayers(hp_)), w_(in.projector.weights()) {
    w_.patch_kernel.clear(); // the device copy's views point at the host's kernel
  }
  ~DevicePhase() {
    (void)d_.synchronize();
    d_.free_arena();
  }
  Status run();

private:
  Status lay_out();
  Status issue_copies();
  // Copies a sub-layer's tensors to base + at on (each aligned to `align`), pointing its
  // views there; returns the end offset and adds the bytes to *bytes.
  uint64_t copy_in(const std::vector<WeightRef>& refs, uint8_t* base, uint64_t at, uint64_t align,
                   uint64_t* bytes);
  Status to_host();
  Status to_device();
  Status run_device(size_t i);
  // Waits for what is enqueued on q so far, not for the other queues (the prefetches).
  Status wait_for(Queue q);
  bool placed(size_t i, sfb::Placement p) const {
    return plan_.placements()->Get(static_cast<flatbuffers::uoffset_t>(i)) == p;
  }

  const VisionPhaseInputs& in_;
  const sfb::VisionPlan& plan_;
  VisionPass& pass_;
  VisionPhaseStats& stats_;
  Device& d_;
  const ProjectorHParams& hp_;
  std::vector<VisionSubLayer> subs_;
  ProjectorWeights w_; // views into the arena for the device sub-layers
  std::vector<std::vector<WeightRef>> refs_;
  std::vector<int> stream_index_;
  uint64_t slots_offset_ = 0, act_offset_ = 0, workspace_offset_ = 0;
  VisionBuffers dev_;
  int slot_count_ = 0;
  int next_copy_ = 0, done_ = 0;
  std::vector<std::unique_ptr<DeviceEvent>> copied_;
  std::unique_ptr<DeviceEvent> uploaded_, crossed_; // resident uploads; the last crossing
  bool host_valid_ = true, device_valid_ = false;
};

Status DevicePhase::lay_out() {
  const std::string recompile = "; recompile the schedule with pshard-compile --mmproj";
  if (d_.arena())
    return internal_error("the device still holds an arena; the language phase's must be "
                          "released (HybridSession::release_device) before the vision phase");
  uint64_t resident = 0;
  stream_index_.assign(subs_.size(), -1);
  for (size_t i = 0; i < subs_.size(); ++i) {
    refs_.push_back(weight_refs(subs_[i], w_, hp_));
    if (placed(i, sfb::Placement::GpuResident))
      resident = align_up(resident, kResidentAlign) + packed_bytes(refs_[i], kResidentAlign);
  }
  resident = align_up(resident, kResidentAlign);
  if (resident > plan_.resident_bytes())
    return internal_error("the vision plan's resident sub-layers take " + mib(resident) +
                          " here, more than the " + mib(plan_.resident_bytes()) + " it planned" +
                          recompile);
  const auto* order = plan_.stream_order();
  for (flatbuffers::uoffset_t k = 0; order && k < order->size(); ++k) {
    const auto i = static_cast<size_t>(order->Get(k));
    if (i >= subs_.size() || !placed(i, sfb::Placement::GpuStreamed))
      return invalid_format("the vision plan streams sub-layer " + std::to_string(i) +
                            ", which it does not place as streamed" + recompile);
    stream_index_[i] = static_cast<int>(k);
    if (packed_bytes(refs_[i], kSlotAlign) > plan_.stream_slot_bytes())
      return internal_error(subs_[i].name + " takes " + mib(packed_bytes(refs_[i], kSlotAlign)) +
                            ", more than the plan's streaming slot of " +
                            mib(plan_.stream_slot_bytes()) + recompile);
  }
  slot_count_ = plan_.stream_slot_count();
  if (order && order->size() > 0 && slot_count_ < 1)
    return invalid_format("the vision plan streams sub-layers without a slot" + recompile);
  slots_offset_ = plan_.resident_bytes();
  act_offset_ = slots_offset_ + plan_.stream_slot_bytes() * static_cast<uint64_t>(slot_count_);
  workspace_offset_ = act_offset_ + plan_.activation_bytes();
  const auto act_bytes =
      static_cast<uint64_t>(vision_activation_floats(w_, hp_, pass_.n_tokens())) * sizeof(float);
  if (act_bytes > plan_.activation_bytes())
    return internal_error("the image's activations take " + mib(act_bytes) + ", more than the " +
                          mib(plan_.activation_bytes()) + " the plan has" + recompile);
  const int64_t tile = plan_.attention_tile() > 0 ? plan_.attention_tile() : kDefaultVisionTile;
  const uint64_t per_worker =
      tiled_attention_scratch_bytes(tile, hp_.head_dim(), 1, pass_.n_tokens());
  const auto workers = std::min<int64_t>(
      in_.pool.size(), static_cast<int64_t>(plan_.workspace_bytes() / per_worker));
  if (workers < 1)
    return internal_error("the vision plan's workspace of " + mib(plan_.workspace_bytes()) +
                          " holds no attention tile of " + std::to_string(tile) + " queries (" +
                          mib(per_worker) + ")" + recompile);
  if (workspace_offset_ + plan_.workspace_bytes() > plan_.arena_bytes())
    return invalid_format("the vision plan's buffers add up to more than its arena" + recompile);
  PSHARD_ASSIGN_OR_RETURN(uint8_t * arena, d_.allocate_arena(plan_.arena_bytes()));
  stats_.peak_device_bytes = d_.arena_bytes();
  dev_ = carve_vision_buffers(reinterpret_cast<float*>(arena + act_offset_), w_, hp_,
                              pass_.n_tokens());
  dev_.scratch = reinterpret_cast<float*>(arena + workspace_offset_);
  dev_.scratch_workers = workers;
  dev_.tile = tile;
  stats_.attention_tile = tile;
  // The resident tensors, uploaded once.
  uint64_t at = 0;
  for (size_t i = 0; i < subs_.size(); ++i)
    if (placed(i, sfb::Placement::GpuResident))
      at = copy_in(refs_[i], arena, at, kResidentAlign, &stats_.bytes_uploaded);
  copied_.resize(order ? order->size() : 0);
  PSHARD_ASSIGN_OR_RETURN(uploaded_, d_.create_event());
  d_.record(*uploaded_, Queue::kCopy);
  PSHARD_ASSIGN_OR_RETURN(crossed_, d_.create_event());
  return Status::ok_status();
}

uint64_t DevicePhase::copy_in(const std::vector<WeightRef>& refs, uint8_t* base, uint64_t at,
                              uint64_t align, uint64_t* bytes) {
  for (const WeightRef& r : refs) {
    at = align_up(at, align);
    d_.copy_to_device(Queue::kCopy, base + at, r.host, r.bytes);
    r.rebind(base + at);
    *bytes += r.bytes;
    at += r.bytes;
  }
  return at;
}

Status DevicePhase::wait_for(Queue q) {
  d_.record(*crossed_, q);
  return d_.synchronize(*crossed_);
}

// Copies streamed sub-layers into their slots as far ahead as the slots allow: copy k
// goes once sub-layer k - slots has run (the host computes synchronously here, so a
// sub-layer that returned no longer reads its slot).
Status DevicePhase::issue_copies() {
  const auto n = static_cast<int>(copied_.size());
  while (next_copy_ < n && next_copy_ < done_ + slot_count_) {
    const int k = next_copy_++;
    const auto i =
        static_cast<size_t>(plan_.stream_order()->Get(static_cast<flatbuffers::uoffset_t>(k)));
    uint8_t* slot = d_.arena() + slots_offset_ +
                    plan_.stream_slot_bytes() * static_cast<uint64_t>(k % slot_count_);
    copy_in(refs_[i], slot, 0, kSlotAlign, &stats_.bytes_streamed);
    PSHARD_ASSIGN_OR_RETURN(copied_[static_cast<size_t>(k)], d_.create_event());
    d_.record(*copied_[static_cast<size_t>(k)], Queue::kCopy);
  }
  return Status::ok_status();
}

Status DevicePhase::to_host() {
  if (host_valid_)
    return Status::ok_status();
  const auto bytes = static_cast<uint64_t>(pass_.n_tokens() * hp_.n_embd) * sizeof(float);
  d_.copy_to_host(Queue::kTransfer, pass_.host.hidden, dev_.hidden, bytes);
  stats_.bytes_crossed += bytes;
  host_valid_ = true;
  return wait_for(Queue::kTransfer);
}

Status DevicePhase::to_device() {
  if (device_valid_)
    return Status::ok_status();
  const auto bytes = static_cast<uint64_t>(pass_.n_tokens() * hp_.n_embd) * sizeof(float);
  d_.copy_to_device(Queue::kTransfer, dev_.hidden, pass_.host.hidden, bytes);
  stats_.bytes_crossed += bytes;
  device_valid_ = true;
  return wait_for(Queue::kTransfer);
}

Status DevicePhase::run_device(size_t i) {
  const VisionSubLayer& s = subs_[i];
  const int k = stream_index_[i];
  if (k >= 0)
    PSHARD_RETURN_IF_ERROR(d_.synchronize(*copied_[static_cast<size_t>(k)]));
  else
    PSHARD_RETURN_IF_ERROR(d_.synchronize(*uploaded_)); // the resident weights are there
  const int64_t n = pass_.n_tokens();
  if (s.kind == VisionSubLayerKind::kPatchEmbed) { // the pixels cross, not a hidden state
    vision_patch_rows(pass_, pass_.host.ff_a);
    const auto bytes = static_cast<uint64_t>(n * 3 * hp_.patch_size * hp_.patch_size) * 4;
    d_.copy_to_device(Queue::kTransfer, dev_.ff_a, pass_.host.ff_a, bytes);
    stats_.bytes_crossed += bytes;
    PSHARD_RETURN_IF_ERROR(wait_for(Queue::kTransfer));
    pass_.buf = dev_;
    vision_patch_embed(pass_, w_);
  } else {
    PSHARD_RETURN_IF_ERROR(to_device());
    pass_.buf = dev_;
    const VisionLinear* merged = nullptr; // a merger whose rows come back to the host
    if (s.kind == VisionSubLayerKind::kMerger) {
      vision_merger_forward(pass_, w_.merger);
      merged = &w_.merger.fc2;
    } else {
      run_vision_sublayer(s, pass_, w_);
      if (s.kind == VisionSubLayerKind::kFfn &&
          w_.ffn[static_cast<size_t>(s.block)].deepstack.fc1.w.data)
        merged = &w_.ffn[static_cast<size_t>(s.block)].deepstack.fc2;
    }
    if (merged) {
      const int64_t dim = merged->w.rows;
      const auto bytes = static_cast<uint64_t>(pass_.merged_rows() * dim) * sizeof(float);
      d_.copy_to_host(Queue::kTransfer, pass_.host.ff_b, dev_.ff_b, bytes);
      stats_.bytes_crossed += bytes;
      PSHARD_RETURN_IF_ERROR(wait_for(Queue::kTransfer));
      if (s.kind == VisionSubLayerKind::kMerger)
        vision_gather_output(pass_, pass_.host.ff_b, dim);
      else
        vision_keep_deepstack(pass_, hp_.deepstack_index(s.block), pass_.host.ff_b, dim);
    }
  }
  device_valid_ = true;
  host_valid_ = false;
  if (k >= 0) {
    done_ = k + 1;
    PSHARD_RETURN_IF_ERROR(issue_copies());
  }
  return Status::ok_status();
}

Status DevicePhase::run() {
  PSHARD_RETURN_IF_ERROR(lay_out());
  PSHARD_RETURN_IF_ERROR(issue_copies());
  for (size_t i = 0; i < subs_.size(); ++i) {
    if (!placed(i, sfb::Placement::Cpu)) {
      PSHARD_RETURN_IF_ERROR(run_device(i));
      continue;
    }
    PSHARD_RETURN_IF_ERROR(to_host());
    pass_.buf = pass_.host;
    run_vision_sublayer(subs_[i], pass_, in_.projector.weights());
    host_valid_ = true;
    device_valid_ = false;
  }
  return d_.synchronize();
}

} // namespace

Status run_vision_plan_on_device(const VisionPhaseInputs& in, const fb::schedule::VisionPlan& plan,
                                 VisionPass& pass, VisionPhaseStats& stats) {
  DevicePhase phase(in, plan, pass, stats);
  return phase.run();
}

} // namespace pshard
