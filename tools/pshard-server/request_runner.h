// One request running in the batch, seen from the HTTP thread that answers it: its
// choices' sequences (`n` of them, each sampled with its own seed), their events copied
// on the stepping thread and handed over through one queue, each tagged with its choice.
//
//   auto run = RunningRequest::start(engine, request);   // or the ApiError to answer
//   while (auto e = run->next(std::chrono::milliseconds(100)))
//     ...;                                 // until every choice's last event (e->finish)
// Destroying it frees the sequences, cancelling those still running (a client gone).
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
  int32_t index = 0;       // the choice
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
  int32_t stop_string = -1; // a last event a stop string ended: its index in the request's
  double first_token_ms = 0, total_ms = 0; // from the request's admission (pshard_seq_event)
};

// The stop string (of a request's `stops`) a last event names, or null.
nlohmann::json stop_string_json(const std::vector<std::string>& stops, int32_t index);

class RunningRequest {
public:
  static std::variant<std::unique_ptr<RunningRequest>, ApiError> start(ServingEngine& engine,
                                                                       const GenerationRequest& r);
  ~RunningRequest() = default; // seqs_ first: no callback reaches a route after

  // The next event of any choice, or nothing after `timeout`.
  std::optional<TokenEvent> next(std::chrono::milliseconds timeout);
  void cancel();
  int32_t n_choices() const { return static_cast<int32_t>(seqs_.size()); }

private:
  struct Channel {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<TokenEvent> events;
  };
  struct Route { // a sequence's user_data: where its events go, tagged how
    Channel* channel;
    int32_t index;
  };
  static bool on_event(const pshard_seq_event* e, void* route);

  std::unique_ptr<Channel> channel_ = std::make_unique<Channel>();
  std::vector<std::unique_ptr<Route>> routes_;
  std::vector<SeqHandle> seqs_; // last: freed first, so no callback reaches a route after
};

// The whole answer of one choice of a request that does not stream.
struct Completion {
  std::string text;
  std::vector<TokenEvent> tokens; // the events that carried a token
  pshard_finish_reason finish = PSHARD_FINISH_NONE;
  int64_t n_prompt = 0;
  int64_t n_cached = 0;
  int64_t n_generated = 0;
  int32_t stop_string = -1; // as TokenEvent's
  double first_token_ms = 0, total_ms = 0;
};

// Waits for every choice to end; a failure (a last event an error) as the ApiError.
std::variant<std::vector<Completion>, ApiError> complete(RunningRequest& run);

} // namespace pshard::server
