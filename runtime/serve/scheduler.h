// Continuous batching over a BatchDecoder: requests join and leave between forward
// passes, and each pass carries the next token of every decoding sequence plus chunks of
// the prompts still being read, within a token budget (pass_plan.h).
//
//   Scheduler scheduler(engine, tokenizer, {.max_active = 4, .max_queued = 64});
//   PSHARD_ASSIGN_OR_RETURN(RequestId id, scheduler.submit(params, [](const SequenceEvent& e) {
//     std::cout << e.text;                       // streamed, per request
//     return true;                               // false: cancel this request
//   }));
//   while (scheduler.wait_for_work(std::chrono::milliseconds(100)))
//     scheduler.step();                          // one pass (admission, cancels, budget first)
//
// Policy:
// - admission is first come, first served: a request waits in a bounded queue until a
//   slot (max_active, at most the engine's sequences) and KV space for its prompt are
//   free; no later request overtakes it. submit() refuses a request with kUnavailable when
//   the queue is full, and with the validation error when it could never run (a prompt
//   longer than the context, max_tokens past it, bad sampling parameters);
// - a request that cannot get KV space waits; when nothing can move because the pages
//   are exhausted, the newest sequence ends with kOutOfMemory and frees its pages, so the
//   older ones finish. A pass the engine refuses for lack of space changes no sequence
//   (BatchDecoder's contract), so nothing is ever corrupted;
// - sampling, seeds, stop conditions and logprobs are per request (request.h).
//
// Threads: submit(), cancel(), cancel_all(), set_vram_budget(), stats() and
// wait_for_work() may be called from any thread at any time, also from inside an event
// sink. step() runs one pass; concurrent calls are serialized. Sinks run on the thread
// that steps.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/serve/active_sequence.h"
#include "runtime/serve/batch_drafter.h"
#include "runtime/serve/request.h"
#include "runtime/tokenizer/tokenizer.h"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

namespace pshard {

struct SchedulerOptions {
  int64_t max_active = 4;  // sequences decoded together (slots); capped at the engine's
  int64_t max_queued = 64; // requests waiting for a slot; past it submit() is refused
  int64_t pass_tokens = 0; // token budget of one pass; 0 (or more than the engine takes):
                           // the engine's max_batch_tokens()
  // Speculative decoding: each decoding sequence may add up to draft_max tokens drafted
  // from its own text (prompt lookup, runtime/generate/prompt_lookup.h) to a pass, from
  // the budget the others leave; the tokens are those of plain decoding. The engine must
  // hold that many more logits rows per sequence (SequenceEngineOptions::draft_max) and
  // drop positions (BatchDecoder::rewind_sequence). 0: off.
  int32_t draft_max = 0;
  // With draft_max: drafts come from a draft model instead (llama-server's -md), every
  // decoding sequence's in the same passes of its engine (batch_drafter.h); must outlive
  // the scheduler.
  BatchDrafter* drafter = nullptr;
};

struct SchedulerStats {
  int64_t queued = 0;
  int64_t active = 0;
  int64_t submitted = 0;     // requests accepted by submit()
  int64_t refused = 0;       // submit() refusals: full queue or invalid
  int64_t finished[5] = {};  // by FinishReason (kNone unused)
  int64_t prompt_tokens = 0; // decoded, all requests
  int64_t cached_prompt_tokens = 0; // read from the engine's prefix cache instead
  int64_t draft_tokens = 0;         // drafted tokens checked (SchedulerOptions::draft_max)
  int64_t accepted_draft_tokens = 0; // of those, sampled as drafted
  int64_t draft_passes = 0;          // the draft model's passes (SchedulerOptions::drafter)
  std::vector<SequenceProgress> running; // as of the last step, in admission order
  int64_t generated_tokens = 0;
  int64_t passes = 0;
  double busy_ms = 0; // time inside the engine's passes
  // Over the last 10 s (or since the first pass when more recent).
  double prompt_tokens_per_s = 0;
  double generated_tokens_per_s = 0;
  KvPageStats kv;
  BatchEngineStats engine;
};

struct StepReport {
  int64_t entries = 0; // tokens the pass carried (0: nothing to do)
  int64_t sequences = 0;
  int64_t prompt_tokens = 0;
  int64_t decode_tokens = 0;
  int64_t generated = 0; // tokens sampled (stop tokens not counted)
  int64_t finished = 0;  // requests that ended in this step
};

class Scheduler {
public:
  Scheduler(BatchDecoder& engine, const Tokenizer& tokenizer, SchedulerOptions options);
  // Closes every sequence; requests still running get no more events.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  Result<RequestId> submit(RequestParams params, EventSink sink);
  // Ends the request before the next pass (its final event says kCancelled); unknown or
  // finished ids are ignored.
  void cancel(RequestId id);
  void cancel_all();
  // Applied between passes, for every sequence: blocks until it is (at most one pass).
  Status set_vram_budget(uint64_t bytes);
  SchedulerStats stats() const;
  // Waits up to `timeout` until step() has something to do; false when it has not.
  bool wait_for_work(std::chrono::milliseconds timeout);

  StepReport step();

  int64_t n_ctx() const { return n_ctx_; }
  int64_t n_vocab() const { return n_vocab_; }

private:
  struct BudgetChange {
    uint64_t bytes;
    std::promise<Status> done;
  };
  struct Delivery {
    EventSink sink;
    SequenceEvent event;
  };

  // All under engine_mutex_ (the stepping side).
  void apply_budget_changes();
  void apply_cancels(std::vector<Delivery>& out);
  void admit(std::vector<Delivery>& out);
  // Each active sequence's drafted tokens for the next pass; a sequence whose draft
  // model fails ends here.
  std::vector<int64_t> propose_drafts(std::vector<Delivery>& out);
  void run_pass(StepReport& report, std::vector<Delivery>& out);
  void finish(size_t active_index, SequenceEvent event, std::vector<Delivery>& out);
  void preempt_newest(std::vector<Delivery>& out);
  void publish(const StepReport& report, double pass_ms);
  void deliver(std::vector<Delivery>& out);
  bool has_work_locked() const;

  BatchDecoder& engine_;
  const Tokenizer& tokenizer_;
  // An engine that embeds only (BatchDecoder::embeds_only): embedding requests whose
  // text fits one pass.
  Status check_one_pass_request(const RequestParams& params) const;
  const int64_t max_active_, max_queued_, pass_tokens_;
  const PromptLookup lookup_;
  BatchDrafter* const drafter_;
  int64_t n_ctx_ = 0, n_vocab_ = 0, n_embd_ = 0; // read once: the engine is not thread-safe

  // The stepping side: held for a whole step, and to apply a budget change outside one.
  std::mutex engine_mutex_;
  std::mutex delivery_mutex_; // keeps one step's events before the next step's
  std::vector<std::unique_ptr<ActiveSequence>> active_; // in admission order
  size_t rotation_ = 0;
  uint64_t next_order_ = 0;

  // What other threads share with the stepping side.
  mutable std::mutex state_mutex_;
  std::condition_variable work_cv_;
  std::deque<QueuedRequest> queue_;
  std::set<RequestId> live_; // queued or active
  std::set<RequestId> cancels_;
  std::deque<std::unique_ptr<BudgetChange>> budget_changes_;
  RequestId next_id_ = 1;
  int64_t n_active_ = 0;
  SchedulerStats stats_;
  struct PassSample {
    SteadyTime at;
    int64_t prompt, generated;
  };
  std::deque<PassSample> recent_;
  SteadyTime started_;
};

} // namespace pshard
