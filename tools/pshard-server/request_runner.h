// One request running in the batch, seen from the HTTP thread that answers it: the
// sequence's events, copied on the stepping thread and handed over through a queue.
//
//   auto run = RunningRequest::start(engine, request);   // or the ApiError to answer
//   while (auto e = run->next(std::chrono::milliseconds(100)))
//     ...;                                                 // until e->finish is set
// Destroying it frees the sequence, cancelling it if it still runs (a client gone).
#pragma once

#include "tools/pshard-server/openai_request.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <variant>

namespace pshard::server {

struct TokenLogprob {
  pshard_token id;
  float logprob;
};

struct TokenEvent {
  pshard_token token = -1; // -1: none (a last event)
  std::string text;
  float logprob = 0;
  std::vector<TokenLogprob> top;
  pshard_finish_reason finish = PSHARD_FINISH_NONE;
  pshard_status error = PSHARD_OK;
  std::string error_message;
  int64_t n_prompt = 0;
  int64_t n_cached = 0; // of n_prompt, read from the prefix cache
  int64_t n_generated = 0;
};

class RunningRequest {
public:
  static std::variant<std::unique_ptr<RunningRequest>, ApiError> start(ServingEngine& engine,
                                                                       const GenerationRequest& r);
  ~RunningRequest() = default; // seq_ first: no callback reaches the channel after

  // The next event, or nothing after `timeout`.
  std::optional<TokenEvent> next(std::chrono::milliseconds timeout);
  void cancel() { pshard_seq_cancel(seq_.get()); }

private:
  struct Channel {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<TokenEvent> events;
  };
  static bool on_event(const pshard_seq_event* e, void* channel);

  std::unique_ptr<Channel> channel_ = std::make_unique<Channel>();
  SeqHandle seq_;
};

// The whole answer of a request that does not stream.
struct Completion {
  std::string text;
  std::vector<TokenEvent> tokens; // the events that carried a token
  pshard_finish_reason finish = PSHARD_FINISH_NONE;
  int64_t n_prompt = 0;
  int64_t n_cached = 0;
  int64_t n_generated = 0;
};

// Waits for the request to end; a failure (its last event an error) as the ApiError.
std::variant<Completion, ApiError> complete(RunningRequest& run);

} // namespace pshard::server
