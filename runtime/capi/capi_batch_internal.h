// The batch and sequence handles of pshard.h (pshard_batch_*, pshard_seq_*): a Scheduler
// over the serving engine (runtime/serve), and per sequence the channel its events go
// through — to the caller's callback, or queued for pshard_seq_poll.
#pragma once

#include "runtime/capi/capi_internal.h"
#include "runtime/serve/scheduler.h"

#include <deque>
#include <memory>
#include <mutex>
#include <set>

namespace pshard::capi {

// What a batch owns; sequences hold it weakly, so they may outlive the batch handle.
struct BatchCore {
  std::unique_ptr<BatchDecoder> engine;
  std::unique_ptr<BatchDrafter> drafter; // pshard_batch_params.draft_model's engine, or null
  std::unique_ptr<Scheduler> scheduler;  // declared after the engines: destroyed first
  std::mutex stats_mutex;
  SchedulerStats snapshot;          // of the last pshard_batch_get_stats
  std::set<std::string> strategies; // interned: pshard_plan_stats.strategy stays valid
};

// Shared by a sequence's handle and the scheduler's sink for it. Recursive: a callback
// may poll, cancel or free its own sequence.
struct SeqChannel {
  std::recursive_mutex mutex;
  pshard_seq_callback callback = nullptr;
  void* user_data = nullptr;
  bool detached = false; // the handle was freed: no more callbacks
  std::deque<SequenceEvent> queue;
  FinishReason finish = FinishReason::kNone;
  // Storage behind the last polled event's pointers.
  SequenceEvent polled;
  std::vector<pshard_token> polled_ids;
  std::vector<float> polled_logprobs;
};

// The C view of an event; `ids` and `logprobs` hold its alternatives.
pshard_seq_event c_event(const SequenceEvent& e, std::vector<pshard_token>& ids,
                         std::vector<float>& logprobs);

} // namespace pshard::capi

struct pshard_batch {
  pshard_model* model = nullptr;
  int32_t n_threads = 0;     // as created: image encoding uses as many
  std::shared_ptr<pshard::capi::BatchCore> core;
  pshard::capi::EncodedImageCache images{pshard::capi::kEncodedImageCacheBytes};
};

struct pshard_seq {
  int64_t id = -1;
  std::weak_ptr<pshard::capi::BatchCore> batch;
  std::shared_ptr<pshard::capi::SeqChannel> channel;
};
