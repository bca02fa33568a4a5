// The budget switch: what the arena holds (the resident weights and KV caches of one
// budget's plans) and how the session moves from one budget to another between passes.
//
// Order of a switch, so device memory never exceeds the larger budget and ends within
// the new one: (1) KV caches that leave the device or move inside it are copied to the
// host; (2) the arena is resized in place (or freed and reallocated when the device
// cannot resize — then nothing is kept); (3) what the new budget holds and the arena
// does not yet — weights from the mapping, KV caches from the host — is uploaded. A
// buffer at the same offset and size in both layouts is kept untouched.
#include "runtime/executor/hybrid_session.h"

#include <algorithm>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

bool kept(const std::optional<PlanLayout>& from, uint64_t to_offset, uint64_t from_offset) {
  return from && to_offset != kNoOffset && to_offset == from_offset;
}

} // namespace

Result<int> HybridSession::budget_index_for(uint64_t bytes) const {
  if (bytes == 0 && schedule_->budgets().front() > 0)
    return -1; // CPU only: the device gives all its memory back
  PSHARD_ASSIGN_OR_RETURN(PlanIndex at, schedule_->select(1, bytes));
  return static_cast<int>(at.budget);
}

uint64_t HybridSession::arena_bytes_for(int b) const {
  uint64_t bytes = 0;
  if (b >= 0)
    for (size_t t = 0; t < schedule_->tiers().size(); ++t)
      bytes = std::max(bytes, schedule_->plan({static_cast<size_t>(b), t}).arena_bytes);
  return bytes;
}

Status HybridSession::set_budget(uint64_t bytes) {
  if (!schedule_) {
    budget_ = bytes;
    return Status::ok_status();
  }
  auto b = budget_index_for(bytes);
  if (!b.ok())
    return b.status().with_context(
        "cannot set the VRAM budget to " + std::to_string(bytes) + " B" +
        (budget_set_ ? " (the session keeps its budget of " + std::to_string(budget_) + " B)"
                     : std::string()));
  if (device_ && arena_bytes_for(*b) > device_->info().memory_bytes)
    return Status(StatusCode::kOutOfMemory,
                  "the plans for a budget of " + std::to_string(bytes) + " B need " +
                      std::to_string(arena_bytes_for(*b)) + " B, more than the " +
                      device_->info().name + "'s " + std::to_string(device_->info().memory_bytes) +
                      " B; use a smaller --vram budget");
  const uint64_t old = budget_;
  budget_ = bytes;
  budget_set_ = true;
  Status st = switch_to(*b);
  if (!st.ok() && residency_ < 0 && *b >= 0)
    budget_ = old; // fell back to the CPU: report the budget that failed, keep running
  return st;
}

Status HybridSession::switch_to(int b) {
  if (!device_ || b == residency_) {
    residency_ = b;
    return Status::ok_status();
  }
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  std::optional<PlanLayout> to;
  if (b >= 0 && arena_bytes_for(b) > 0) {
    // Every tier of a budget has the same resident set at the same offsets.
    PSHARD_ASSIGN_OR_RETURN(
        to, resolve_layout(schedule_->plan({static_cast<size_t>(b), 0}), model_, tensors_, kv_));
  }
  const uint64_t new_bytes = to ? arena_bytes_for(b) : 0;
  const bool can_resize = device_->arena() && device_->resize_arena(device_->arena_bytes()).ok();
  std::optional<PlanLayout> from = can_resize ? resident_layout_ : std::nullopt;
  if (!to)
    from.reset();
  plans_.clear();
  PSHARD_RETURN_IF_ERROR(evict_kv(resident_layout_, from ? to : std::nullopt));
  resident_layout_.reset();
  residency_ = -1;
  Status st;
  if (!to) {
    device_->free_arena();
  } else if (device_->arena() && can_resize) {
    st = device_->resize_arena(new_bytes);
  } else {
    device_->free_arena();
    st = device_->allocate_arena(new_bytes).status();
  }
  if (!st.ok())
    return fall_back_to_cpu(st);
  stats_.peak_device_bytes = std::max(stats_.peak_device_bytes, device_->arena_bytes());
  if (to) {
    PSHARD_RETURN_IF_ERROR(upload(*to, from));
    resident_layout_ = std::move(to);
  }
  residency_ = b;
  ++stats_.budget_switches;
  return device_->synchronize();
}

// Copies every device KV cache that `to` does not keep in place back to the host.
Status HybridSession::evict_kv(const std::optional<PlanLayout>& held,
                               const std::optional<PlanLayout>& to) {
  if (!held)
    return Status::ok_status();
  const uint64_t k_rows = kv_.k_bytes(n_past_), v_rows = kv_.v_bytes(n_past_);
  const auto& subs = model_.sublayers();
  for (size_t i = 0; i < subs.size(); ++i) {
    const uint64_t at = held->kv_offset[i];
    if (at == kNoOffset || (to && kept(held, to->kv_offset[i], at)) || n_past_ == 0)
      continue;
    const uint8_t* k = device_->arena() + at;
    KvView host = kv_.layer(subs[i].layer);
    device_->copy_to_host(Queue::kTransfer, host.k, k, k_rows);
    device_->copy_to_host(Queue::kTransfer, host.v, k + kv_.k_bytes(n_ctx_), v_rows);
    stats_.bytes_switched += k_rows + v_rows;
  }
  return device_->synchronize();
}

// Uploads what `to` holds and the arena (laid out as `kept_from`) does not.
Status HybridSession::upload(const PlanLayout& to, const std::optional<PlanLayout>& kept_from) {
  const auto& subs = model_.sublayers();
  uint8_t* arena = device_->arena();
  for (size_t i = 0; i < subs.size(); ++i) {
    for (size_t j = 0; j < to.tensor_offset[i].size(); ++j) {
      const uint64_t at = to.tensor_offset[i][j];
      if (at == kNoOffset || kept(kept_from, at, kept_from ? kept_from->tensor_offset[i][j] : 0))
        continue;
      const TensorBytes& t = tensors_[i].tensors[j];
      device_->copy_to_device(Queue::kCopy, arena + at, t.host, t.bytes);
      stats_.bytes_switched += t.bytes;
    }
    const uint64_t at = to.kv_offset[i];
    if (at == kNoOffset || kept(kept_from, at, kept_from ? kept_from->kv_offset[i] : 0))
      continue;
    if (n_past_ == 0)
      continue;
    uint8_t* k = arena + at;
    KvView host = kv_.layer(subs[i].layer);
    device_->copy_to_device(Queue::kTransfer, k, host.k, kv_.k_bytes(n_past_));
    device_->copy_to_device(Queue::kTransfer, k + kv_.k_bytes(n_ctx_), host.v,
                            kv_.v_bytes(n_past_));
    stats_.bytes_switched += kv_.k_bytes(n_past_) + kv_.v_bytes(n_past_);
  }
  return Status::ok_status();
}

Status HybridSession::fall_back_to_cpu(const Status& why) {
  device_->free_arena();
  resident_layout_.reset();
  residency_ = -1;
  plans_.clear();
  return why.with_context("the device memory for the new budget could not be allocated; the "
                          "session continues on the CPU (set a smaller budget to use the device)");
}

} // namespace pshard
