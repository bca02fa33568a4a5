// Residency: what the arena holds (the resident weights and KV caches of one plan) and how
// the session moves it to another plan between passes — on a tier change, when the
// context crosses a range, and on a budget change, all the same way.
//
// Order of a move, so device memory never exceeds the larger budget and ends within the
// new one: (1) KV caches that leave the device, move inside it or change size are copied
// to the host; (2) the arena is resized in place (or freed and reallocated when the
// device cannot resize — then nothing is kept; within a budget it keeps its size); (3)
// what the new plan holds and the arena does not yet — weights from the mapping, KV
// caches from the host — is uploaded. A buffer at the same offset and size in both
// layouts is kept untouched. Within a budget the bytes moved are checked against the
// switch the schedule recorded, so the runtime uploads exactly what the compiler priced.
#include "runtime/executor/expert_dispatch.h"
#include "runtime/executor/hybrid_session.h"
#include "runtime/model/kv_ring.h"

#include <algorithm>
#include <chrono>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

bool kept(const std::optional<PlanLayout>& from, uint64_t to_offset, uint64_t from_offset) {
  return from && to_offset != kNoOffset && to_offset == from_offset;
}

// Layer il's cache stays where it is: same offset, same rows (a ring's are the same
// for any context past it).
bool kv_kept(const std::optional<PlanLayout>& from, const PlanLayout& to, size_t i,
             const KvCache& kv, int64_t il) {
  return kept(from, to.kv_offset[i], from ? from->kv_offset[i] : 0) &&
         kv.rows_held(il, from->kv_positions) == kv.rows_held(il, to.kv_positions);
}

// Two layouts whose resident buffers all coincide: moving between them copies nothing.
bool same_residency(const PlanLayout& a, const PlanLayout& b) {
  return a.tensor_offset == b.tensor_offset && a.kv_offset == b.kv_offset &&
         a.kv_positions == b.kv_positions && a.expert_offset == b.expert_offset;
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
    for (size_t c = 0; c < schedule_->contexts().size(); ++c)
      for (size_t t = 0; t < schedule_->tiers().size(); ++t)
        bytes = std::max(bytes, schedule_->plan({static_cast<size_t>(b), t, c}).arena_bytes);
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
  budget_index_ = *b;
  if (!device_)
    return Status::ok_status();
  std::optional<PlanIndex> to;
  if (*b >= 0) {
    // The plan the next pass most likely takes: the one in use, at the new budget.
    PlanIndex at;
    at.budget = static_cast<size_t>(*b);
    at.context = held_ ? held_->context : schedule_->context_index(select_positions(n_past_ + 1));
    at.tier = held_ ? held_->tier : 0;
    if (!held_ && force_tier_ > 0)
      at.tier = static_cast<size_t>(
          std::find(schedule_->tiers().begin(), schedule_->tiers().end(), force_tier_) -
          schedule_->tiers().begin());
    to = at;
  }
  Status st = move_residency(to, /*budget_switch=*/true);
  if (!st.ok() && !held_ && *b >= 0) {
    budget_ = old; // fell back to the CPU: report the budget that failed, keep running
    budget_index_ = -1;
  }
  return st;
}

Status HybridSession::move_residency(std::optional<PlanIndex> to, bool budget_switch) {
  const bool same = (!to && !held_) || (to && held_ && to->budget == held_->budget &&
                                        to->context == held_->context && to->tier == held_->tier);
  if (same)
    return Status::ok_status();
  const auto start = std::chrono::steady_clock::now();
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  const int b = to ? static_cast<int>(to->budget) : -1;
  std::optional<PlanLayout> layout;
  if (b >= 0 && arena_bytes_for(b) > 0) {
    PSHARD_ASSIGN_OR_RETURN(layout, resolve_layout(schedule_->plan(*to), model_, tensors_, kv_));
  }
  if (!budget_switch && held_ && to && held_->budget == to->budget &&
      (layout ? resident_layout_ && same_residency(*resident_layout_, *layout)
              : !resident_layout_)) {
    held_ = to; // the same resident set at the same offsets: nothing moves
    return Status::ok_status();
  }
  const uint64_t new_bytes = layout ? arena_bytes_for(b) : 0;
  const bool can_resize = device_->arena() && device_->resize_arena(device_->arena_bytes()).ok();
  std::optional<PlanLayout> from = can_resize ? resident_layout_ : std::nullopt;
  if (!layout)
    from.reset();
  const std::optional<PlanIndex> held = held_;
  plans_.clear();
  Moved moved;
  PSHARD_RETURN_IF_ERROR(evict_kv(resident_layout_, from ? layout : std::nullopt, &moved));
  resident_layout_.reset();
  held_.reset();
  Status st;
  if (!layout) {
    device_->free_arena();
  } else if (device_->arena() && can_resize) {
    if (device_->arena_bytes() != new_bytes)
      st = device_->resize_arena(new_bytes);
  } else {
    device_->free_arena();
    st = device_->allocate_arena(new_bytes).status();
  }
  if (!st.ok())
    return fall_back_to_cpu(st);
  stats_.peak_device_bytes = std::max(stats_.peak_device_bytes, device_->arena_bytes());
  if (layout) {
    PSHARD_RETURN_IF_ERROR(upload(*layout, from, &moved));
    resident_layout_ = std::move(layout);
  }
  held_ = to;
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const ScheduleLink& link = schedule_->link();
  stats_.bytes_switched += moved.weights_up + moved.kv_up + moved.kv_down;
  stats_.switch_ms += ms;
  stats_.switch_predicted_ms +=
      link.h2d_ms(moved.weights_up + moved.kv_up) + link.d2h_ms(moved.kv_down);
  if (budget_switch) {
    ++stats_.budget_switches;
    return Status::ok_status();
  }
  ++stats_.plan_switches;
  // A move inside one budget is a switch the compiler recorded: it must move exactly that.
  return held && to && held->budget == to->budget && can_resize ? check_recorded(*held, *to, moved)
                                                                : Status::ok_status();
}

int64_t HybridSession::kv_rows_recorded(int64_t il) const {
  if (kv_.state_rows(il) > 0) // a recurrent layer's state: not priced per position
    return 0;
  const bool windowed = model_.hparams().attention_window(il) > 0;
  return kv_rows_held(windowed && schedule_ ? schedule_->kv_ring_positions() : 0, kv_rows());
}

Status HybridSession::check_recorded(PlanIndex from, PlanIndex to, const Moved& moved) const {
  const ScheduleSwitch* s = schedule_->find_switch(from.budget, from, to);
  const int64_t positions = kv_rows();
  const uint64_t weights = s ? s->upload_bytes : 0;
  const int64_t ring = schedule_->kv_ring_positions();
  const uint64_t kv_up = s ? s->kv_upload_bytes(positions, ring) : 0;
  const uint64_t kv_down = s ? s->kv_download_bytes(positions, ring) : 0;
  // A state with no positions is not moved; a file before 1.7 records no states, so the
  // copies made stand unchecked.
  const uint64_t slots = s && positions > 0 ? static_cast<uint64_t>(kv_.state_slots()) : 0;
  const bool records_states = schedule_->root().schema_minor() >= 7;
  const uint64_t state_up =
      records_states ? (s ? s->state_upload_bytes : 0) * slots : moved.state_up;
  const uint64_t state_down =
      records_states ? (s ? s->state_download_bytes : 0) * slots : moved.state_down;
  if (moved.weights_up == weights && moved.kv_up_recorded == kv_up &&
      moved.kv_down_recorded == kv_down && moved.state_up == state_up &&
      moved.state_down == state_down)
    return Status::ok_status();
  return internal_error("the switch from tier " + std::to_string(schedule_->tiers()[from.tier]) +
                        " to tier " + std::to_string(schedule_->tiers()[to.tier]) + " (context " +
                        std::to_string(schedule_->contexts()[from.context]) + " to " +
                        std::to_string(schedule_->contexts()[to.context]) + ") moved " +
                        std::to_string(moved.weights_up) + " B of weights and " +
                        std::to_string(moved.kv_up_recorded + moved.kv_down_recorded) +
                        " B of KV cache and " + std::to_string(moved.state_up + moved.state_down) +
                        " B of recurrent state, the schedule records " + std::to_string(weights) +
                        " B, " + std::to_string(kv_up + kv_down) + " B and " +
                        std::to_string(state_up + state_down) +
                        " B; recompile the schedule with pshard-compile");
}

// Copies every device KV cache that `to` does not keep in place back to the host.
Status HybridSession::evict_kv(const std::optional<PlanLayout>& held,
                               const std::optional<PlanLayout>& to, Moved* moved) {
  if (!held)
    return Status::ok_status();
  const auto& subs = model_.sublayers();
  for (size_t i = 0; i < subs.size(); ++i) {
    const uint64_t at = held->kv_offset[i];
    if (at == kNoOffset || (to && kv_kept(held, *to, i, kv_, subs[i].layer)) || kv_rows() == 0)
      continue;
    const int64_t il = subs[i].layer;
    const uint64_t k_rows = kv_.k_bytes(kv_rows_moved(il));
    const uint64_t v_rows = kv_.v_bytes(kv_rows_moved(il));
    const uint8_t* k = device_->arena() + at;
    KvView host = kv_.layer(il);
    device_->copy_to_host(Queue::kTransfer, host.k, k, k_rows);
    device_->copy_to_host(Queue::kTransfer, host.v,
                          k + kv_.k_bytes(kv_.rows_held(il, held->kv_positions)), v_rows);
    moved->kv_down += k_rows + v_rows;
    moved->kv_down_recorded += kv_.k_bytes(kv_rows_recorded(il)) + kv_.v_bytes(kv_rows_recorded(il));
    if (kv_.state_rows(il) > 0)
      moved->state_down += k_rows + v_rows;
  }
  return device_->synchronize();
}

// Uploads what `to` holds and the arena (laid out as `kept_from`) does not.
Status HybridSession::upload(const PlanLayout& to, const std::optional<PlanLayout>& kept_from,
                             Moved* moved) {
  const auto& subs = model_.sublayers();
  uint8_t* arena = device_->arena();
  for (size_t i = 0; i < subs.size(); ++i) {
    for (size_t j = 0; j < to.tensor_offset[i].size(); ++j) {
      const uint64_t at = to.tensor_offset[i][j];
      if (at == kNoOffset || kept(kept_from, at, kept_from ? kept_from->tensor_offset[i][j] : 0))
        continue;
      const TensorBytes& t = tensors_[i].tensors[j];
      device_->copy_to_device(Queue::kCopy, arena + at, t.host, t.bytes);
      moved->weights_up += t.bytes;
    }
    const uint64_t at = to.kv_offset[i];
    if (at == kNoOffset || kv_kept(kept_from, to, i, kv_, subs[i].layer))
      continue;
    if (kv_rows() == 0)
      continue;
    uint8_t* k = arena + at;
    const int64_t il = subs[i].layer, rows = kv_rows_moved(il);
    KvView host = kv_.layer(il);
    device_->copy_to_device(Queue::kTransfer, k, host.k, kv_.k_bytes(rows));
    device_->copy_to_device(Queue::kTransfer, k + kv_.k_bytes(kv_.rows_held(il, to.kv_positions)),
                            host.v, kv_.v_bytes(rows));
    moved->kv_up += kv_.k_bytes(rows) + kv_.v_bytes(rows);
    moved->kv_up_recorded += kv_.k_bytes(kv_rows_recorded(il)) + kv_.v_bytes(kv_rows_recorded(il));
    if (kv_.state_rows(il) > 0)
      moved->state_up += kv_.k_bytes(rows) + kv_.v_bytes(rows);
  }
  moved->weights_up += upload_resident_experts(*device_, to, kept_from, tensors_);
  return Status::ok_status();
}

Status HybridSession::release_device() {
  if (!device_ || !device_->arena())
    return Status::ok_status();
  PSHARD_RETURN_IF_ERROR(device_->synchronize());
  Moved moved;
  PSHARD_RETURN_IF_ERROR(evict_kv(resident_layout_, std::nullopt, &moved));
  stats_.bytes_switched += moved.kv_down;
  device_->free_arena();
  resident_layout_.reset();
  held_.reset();
  plans_.clear();
  return Status::ok_status();
}

Status HybridSession::fall_back_to_cpu(const Status& why) {
  device_->free_arena();
  resident_layout_.reset();
  held_.reset();
  budget_index_ = -1;
  plans_.clear();
  return why.with_context("the device memory for the new budget could not be allocated; the "
                          "session continues on the CPU (set a smaller budget to use the device)");
}

} // namespace pshard
