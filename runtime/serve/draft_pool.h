// Draft models for a server's sequences (llama-server's -md): each decoding sequence
// drafts from a session of its own, kept in step with its text as the sequence moves
// through the batch. Sessions are made when first needed, at most one per slot, and go
// back to the pool when their request ends; the next request gets the free session that
// already holds the longest start of its prompt (a shared system prompt is not decoded
// again), so a server pays the draft model's prompt once per conversation, not per turn.
//
//   DraftPool pool(make_cpu_session, target_vocab, kDefaultDraftPMin, /*max_sessions=*/4);
//   PSHARD_ASSIGN_OR_RETURN(DraftLease lease, pool.acquire(prompt));
//   PSHARD_ASSIGN_OR_RETURN(std::vector<TokenId> draft, lease->draft(history, 16));
//   lease.reset();   // the session is free for the next request
//
// Not thread-safe: the scheduler's stepping thread acquires and releases.
#pragma once

#include "runtime/generate/draft_model.h"

#include <functional>
#include <memory>
#include <span>
#include <vector>

namespace pshard {

class DraftPool;

// Returns a leased drafter to its pool.
struct DraftReturn {
  DraftPool* pool = nullptr;
  void operator()(Drafter* drafter) const;
};
using DraftLease = std::unique_ptr<Drafter, DraftReturn>;

class DraftPool {
public:
  // A new session of the draft model (its n_ctx at least the target's per sequence).
  using SessionFactory = std::function<Result<std::unique_ptr<Decoder>>()>;

  DraftPool(SessionFactory make_session, int64_t target_vocab, float p_min, int64_t max_sessions)
      : make_session_(std::move(make_session)), target_vocab_(target_vocab), p_min_(p_min),
        max_sessions_(max_sessions) {}
  // Every lease must have come back (the scheduler that holds them goes first).
  ~DraftPool() = default;
  DraftPool(const DraftPool&) = delete;
  DraftPool& operator=(const DraftPool&) = delete;

  // A drafter for a sequence whose prompt is `prompt`: the free one holding the longest
  // start of it, else a new one. kUnavailable when max_sessions are leased;
  // a session that cannot be made fails with its reason.
  Result<DraftLease> acquire(std::span<const TokenId> prompt);

  int64_t sessions() const { return static_cast<int64_t>(slots_.size()); }
  int64_t leased() const;

private:
  friend struct DraftReturn;
  void release(Drafter* drafter);

  struct Slot {
    std::unique_ptr<Decoder> session;
    std::unique_ptr<ModelDrafter> drafter;
    bool leased = false;
  };
  SessionFactory make_session_;
  int64_t target_vocab_;
  float p_min_;
  int64_t max_sessions_;
  std::vector<Slot> slots_;
};

} // namespace pshard
