#include "runtime/serve/draft_pool.h"

#include <algorithm>

namespace pshard {

void DraftReturn::operator()(Drafter* drafter) const {
  if (pool && drafter)
    pool->release(drafter);
}

Result<DraftLease> DraftPool::acquire(std::span<const TokenId> prompt) {
  Slot* best = nullptr;
  size_t best_shared = 0;
  for (Slot& s : slots_) {
    if (s.leased)
      continue;
    const std::span<const TokenId> held = s.drafter->held();
    const size_t shared =
        std::mismatch(held.begin(), held.end(), prompt.begin(), prompt.end()).first - held.begin();
    if (!best || shared > best_shared) {
      best = &s;
      best_shared = shared;
    }
  }
  if (!best) {
    if (static_cast<int64_t>(slots_.size()) >= max_sessions_)
      return Status(StatusCode::kUnavailable,
                    "every draft-model session (" + std::to_string(max_sessions_) +
                        ") is in use: a pool serves at most one per sequence slot");
    PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> session, make_session_());
    Slot s;
    s.drafter = std::make_unique<ModelDrafter>(*session, target_vocab_, p_min_);
    s.session = std::move(session);
    slots_.push_back(std::move(s));
    best = &slots_.back();
  }
  best->leased = true;
  return DraftLease(best->drafter.get(), DraftReturn{this});
}

int64_t DraftPool::leased() const {
  return std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.leased; });
}

void DraftPool::release(Drafter* drafter) {
  for (Slot& s : slots_)
    if (s.drafter.get() == drafter)
      s.leased = false;
}

} // namespace pshard
