#include "runtime/serve/scheduler.h"

#include "runtime/generate/prompt_lookup.h"
#include "runtime/model/hparams.h" // kEmbedsOnlyMessage
#include "runtime/model/kv_ring.h"
#include "runtime/serve/pass_plan.h"

#include <algorithm>

namespace pshard {
namespace {

constexpr auto kRateWindow = std::chrono::seconds(10);

double ms_since(SteadyTime t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The final event of a request that never got a sequence.
SequenceEvent queued_end(const QueuedRequest& r, FinishReason reason, Status error) {
  SequenceEvent e;
  e.id = r.id;
  e.finish = reason;
  e.error = std::move(error);
  e.n_prompt = static_cast<int64_t>(r.params.prompt.size());
  e.timings.queued_ms = e.timings.total_ms = ms_since(r.submitted);
  return e;
}

} // namespace

Scheduler::Scheduler(BatchDecoder& engine, const Tokenizer& tokenizer, SchedulerOptions options)
    : engine_(engine), tokenizer_(tokenizer),
      max_active_(std::max<int64_t>(1, std::min(options.max_active, engine.max_sequences()))),
      max_queued_(std::max<int64_t>(0, options.max_queued)),
      // An engine that embeds only passes whole texts: its pass is as large as it holds.
      pass_tokens_(options.pass_tokens > 0 && !engine.embeds_only()
                       ? std::min(options.pass_tokens, engine.max_batch_tokens())
                       : engine.max_batch_tokens()),
      lookup_{std::max(options.draft_max, 0)}, drafter_(options.drafter),
      started_(std::chrono::steady_clock::now()) {
  n_vocab_ = engine_.n_vocab();
  n_embd_ = engine_.n_embd();
  n_ctx_ = engine_.n_ctx();
  if (n_ctx_ <= 0) { // an engine that learns its context from its first sequence
    if (auto seq = engine_.open_sequence(); seq.ok()) {
      n_ctx_ = engine_.n_ctx();
      engine_.close_sequence(*seq);
    }
  }
  stats_.kv = engine_.kv_pages();
  stats_.engine = engine_.stats();
}

Status Scheduler::check_one_pass_request(const RequestParams& params) const {
  if (!params.embedding)
    return unsupported(kEmbedsOnlyMessage);
  const auto n = static_cast<int64_t>(params.prompt.size());
  if (n > pass_tokens_)
    return Status(StatusCode::kOutOfRange,
                  "the text has " + std::to_string(n) +
                      " tokens; this model attends both ways, "
                      "so a text is one pass, and a pass holds " +
                      std::to_string(pass_tokens_) +
                      " tokens: shorten the text, or serve with a larger batch (-b)");
  return Status::ok_status();
}

Scheduler::~Scheduler() {
  std::lock_guard lock(engine_mutex_);
  for (const auto& a : active_)
    engine_.close_sequence(a->seq());
}

Result<RequestId> Scheduler::submit(RequestParams params, EventSink sink) {
  Status st = validate_request(params, n_vocab_, n_ctx_, n_embd_);
  if (st.ok() && engine_.embeds_only())
    st = check_one_pass_request(params);
  if (!st.ok()) {
    std::lock_guard lock(state_mutex_);
    ++stats_.refused;
    return st;
  }
  RequestId id;
  {
    std::lock_guard lock(state_mutex_);
    // Free slots take requests at the next step; past them, max_queued may wait.
    const int64_t room = max_queued_ + (max_active_ - n_active_);
    if (static_cast<int64_t>(queue_.size()) >= room) {
      ++stats_.refused;
      return Status(StatusCode::kUnavailable,
                    "the server is busy: " + std::to_string(n_active_) + " requests run and " +
                        std::to_string(queue_.size()) +
                        " wait, the most it queues; retry later, or serve with more slots "
                        "(--parallel) or a longer queue (--queue)");
    }
    id = next_id_++;
    queue_.push_back({id, std::move(params), std::move(sink), std::chrono::steady_clock::now()});
    live_.insert(id);
    ++stats_.submitted;
  }
  work_cv_.notify_all();
  return id;
}

void Scheduler::cancel(RequestId id) {
  {
    std::lock_guard lock(state_mutex_);
    if (!live_.count(id))
      return;
    cancels_.insert(id);
  }
  work_cv_.notify_all();
}

void Scheduler::cancel_all() {
  {
    std::lock_guard lock(state_mutex_);
    cancels_ = live_;
  }
  work_cv_.notify_all();
}

Status Scheduler::set_vram_budget(uint64_t bytes) {
  auto change = std::make_unique<BudgetChange>();
  change->bytes = bytes;
  std::future<Status> done = change->done.get_future();
  {
    std::lock_guard lock(state_mutex_);
    budget_changes_.push_back(std::move(change));
  }
  work_cv_.notify_all();
  // Applied by the next step, or here when no step is running.
  while (done.wait_for(std::chrono::milliseconds(2)) != std::future_status::ready) {
    if (engine_mutex_.try_lock()) {
      apply_budget_changes();
      engine_mutex_.unlock();
    }
  }
  return done.get();
}

bool Scheduler::has_work_locked() const {
  return !queue_.empty() || n_active_ > 0 || !cancels_.empty() || !budget_changes_.empty();
}

bool Scheduler::wait_for_work(std::chrono::milliseconds timeout) {
  std::unique_lock lock(state_mutex_);
  work_cv_.wait_for(lock, timeout, [&] { return has_work_locked(); });
  return has_work_locked();
}

SchedulerStats Scheduler::stats() const {
  std::lock_guard lock(state_mutex_);
  SchedulerStats s = stats_;
  s.queued = static_cast<int64_t>(queue_.size());
  s.active = n_active_;
  const auto now = std::chrono::steady_clock::now();
  const double window_s =
      std::chrono::duration<double>(
          std::min<std::chrono::steady_clock::duration>(now - started_, kRateWindow))
          .count();
  int64_t prompt = 0, generated = 0;
  for (const PassSample& p : recent_)
    if (now - p.at <= kRateWindow) {
      prompt += p.prompt;
      generated += p.generated;
    }
  if (window_s > 0) {
    s.prompt_tokens_per_s = static_cast<double>(prompt) / window_s;
    s.generated_tokens_per_s = static_cast<double>(generated) / window_s;
  }
  return s;
}

StepReport Scheduler::step() {
  std::unique_lock engine_lock(engine_mutex_);
  std::vector<Delivery> out;
  StepReport report;
  apply_budget_changes();
  apply_cancels(out);
  admit(out);
  const auto t0 = std::chrono::steady_clock::now();
  run_pass(report, out);
  publish(report, ms_since(t0));
  report.finished =
      static_cast<int64_t>(std::count_if(out.begin(), out.end(), [](const Delivery& d) {
        return d.event.finish != FinishReason::kNone;
      }));
  std::lock_guard delivery_lock(delivery_mutex_);
  engine_lock.unlock(); // sinks may change the budget or submit
  deliver(out);
  return report;
}

void Scheduler::apply_budget_changes() {
  std::deque<std::unique_ptr<BudgetChange>> changes;
  {
    std::lock_guard lock(state_mutex_);
    changes.swap(budget_changes_);
  }
  if (changes.empty())
    return;
  std::vector<Status> results;
  for (auto& c : changes)
    results.push_back(engine_.set_vram_budget(c->bytes));
  BatchEngineStats engine = engine_.stats();
  {
    std::lock_guard lock(state_mutex_); // stats() shows the new budget at once
    stats_.engine = std::move(engine);
  }
  for (size_t i = 0; i < changes.size(); ++i)
    changes[i]->done.set_value(std::move(results[i]));
}

void Scheduler::apply_cancels(std::vector<Delivery>& out) {
  std::set<RequestId> cancels;
  std::vector<QueuedRequest> dropped;
  {
    std::lock_guard lock(state_mutex_);
    cancels.swap(cancels_);
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (cancels.count(it->id)) {
        live_.erase(it->id);
        ++stats_.finished[static_cast<int>(FinishReason::kCancelled)];
        dropped.push_back(std::move(*it));
        it = queue_.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (QueuedRequest& r : dropped)
    out.push_back({r.sink, queued_end(r, FinishReason::kCancelled, Status())});
  for (size_t i = active_.size(); i-- > 0;)
    if (cancels.count(active_[i]->id()))
      finish(i, active_[i]->end(FinishReason::kCancelled), out);
}

void Scheduler::admit(std::vector<Delivery>& out) {
  for (;;) {
    QueuedRequest r;
    {
      std::lock_guard lock(state_mutex_);
      if (queue_.empty() || static_cast<int64_t>(active_.size()) >= max_active_)
        return;
      r = std::move(queue_.front());
      queue_.pop_front();
    }
    const auto n_prompt = static_cast<int64_t>(r.params.prompt.size());
    // Images' placeholder tokens do not name their rows: a prompt with images is looked
    // up by its cache keys, each image's rows by the image's key. An embedding pooled over
    // more than the last row needs every row computed: it reads no cache (an empty prompt
    // shares nothing).
    const bool every_row = r.params.embedding && !pools_one_row(r.params.embedding->pooling);
    std::vector<TokenId> keys =
        r.params.images ? prompt_cache_keys(r.params) : std::vector<TokenId>();
    Result<OpenedSequence> seq = engine_.open_sequence_with_prefix(
        every_row         ? std::span<const TokenId>()
        : r.params.images ? std::span<const TokenId>(keys)
                          : std::span<const TokenId>(r.params.prompt));
    if (seq.ok() && !engine_.can_append(seq->seq, n_prompt - seq->reused)) {
      engine_.close_sequence(seq->seq);
      seq = Status(StatusCode::kOutOfMemory, "the KV cache has no room for a prompt of " +
                                                 std::to_string(n_prompt) + " tokens");
    }
    if (!seq.ok()) {
      if (seq.status().code() == StatusCode::kOutOfMemory && !active_.empty()) {
        std::lock_guard lock(state_mutex_); // waits, first in line, for a sequence to end
        queue_.push_front(std::move(r));
        return;
      }
      {
        std::lock_guard lock(state_mutex_);
        live_.erase(r.id);
        ++stats_.finished[static_cast<int>(FinishReason::kError)];
      }
      Status why = seq.status().with_context("no sequence could be opened for this request "
                                             "even with no other running");
      out.push_back({r.sink, queued_end(r, FinishReason::kError, std::move(why))});
      continue;
    }
    active_.push_back(std::make_unique<ActiveSequence>(std::move(r), seq->seq, tokenizer_,
                                                       next_order_++, seq->reused, lookup_, n_embd_,
                                                       std::move(keys)));
    std::lock_guard lock(state_mutex_);
    ++n_active_;
    stats_.cached_prompt_tokens += seq->reused;
  }
}

std::vector<int64_t> Scheduler::propose_drafts(std::vector<Delivery>& out) {
  std::vector<int64_t> drafts(active_.size(), 0);
  if (!drafter_) {
    for (size_t i = 0; i < active_.size(); ++i)
      drafts[i] = active_[i]->propose();
    return drafts;
  }
  std::vector<DraftWant> wants;
  std::vector<size_t> who;
  for (size_t i = 0; i < active_.size(); ++i) {
    active_[i]->set_draft({});
    if (const int64_t limit = active_[i]->draft_limit(); limit > 0) {
      wants.push_back({active_[i]->id(), active_[i]->history(), limit});
      who.push_back(i);
    }
  }
  if (wants.empty())
    return drafts;
  Result<std::vector<std::vector<TokenId>>> got = drafter_->draft(wants);
  if (!got.ok()) {
    const Status why = got.status().with_context("drafting");
    for (size_t k = who.size(); k-- > 0;) {
      finish(who[k], active_[who[k]]->end(FinishReason::kError, why), out);
      drafts.erase(drafts.begin() + static_cast<std::ptrdiff_t>(who[k]));
    }
    return drafts;
  }
  for (size_t k = 0; k < who.size(); ++k) {
    drafts[who[k]] = static_cast<int64_t>((*got)[k].size());
    active_[who[k]]->set_draft(std::move((*got)[k]));
  }
  return drafts;
}

void Scheduler::run_pass(StepReport& report, std::vector<Delivery>& out) {
  const std::vector<int64_t> drafts = propose_drafts(out);
  if (active_.empty())
    return;
  std::vector<PassWant> wants;
  for (size_t i = 0; i < active_.size(); ++i) {
    const ActiveSequence& a = *active_[i];
    if (!a.decoding()) {
      wants.push_back({a.prompt_left(), false, 0, engine_.embeds_only()});
      continue;
    }
    // Drafted tokens only as far as the sequence's KV space goes.
    int64_t drafted = drafts[i];
    while (drafted > 0 && !engine_.can_append(a.seq(), 1 + drafted))
      --drafted;
    wants.push_back({engine_.can_append(a.seq(), 1) ? 1 : 0, true, drafted});
  }
  std::vector<PassShare> shares = plan_pass(wants, pass_tokens_, rotation_);
  rotation_ += static_cast<size_t>(std::count_if(
      shares.begin(), shares.end(), [&](const PassShare& s) { return wants[s.index].decoding; }));
  for (PassShare& s : shares) // a prompt chunk as long as the KV cache takes now
    while (s.tokens > 0 && !engine_.can_append(active_[s.index]->seq(), s.tokens))
      s.tokens = wants[s.index].whole ? 0 : s.tokens / 2;
  std::erase_if(shares, [](const PassShare& s) { return s.tokens == 0; });

  std::vector<BatchEntry> entries;
  Result<BatchLogits> logits = Status(StatusCode::kOutOfMemory, "");
  for (;;) {
    if (shares.empty()) { // nothing can move: the pages are exhausted
      preempt_newest(out);
      return;
    }
    entries.clear();
    for (const PassShare& s : shares)
      active_[s.index]->append_entries(s.tokens, entries);
    logits = engine_.decode(entries);
    if (logits.ok())
      break;
    if (logits.status().code() != StatusCode::kOutOfMemory) {
      const Status why = logits.status().with_context("the forward pass failed");
      for (size_t k = shares.size(); k-- > 0;)
        finish(shares[k].index, active_[shares[k].index]->end(FinishReason::kError, why), out);
      return;
    }
    // Refused for space, nothing changed: try without the newest sequence.
    shares.erase(std::max_element(shares.begin(), shares.end(), [&](const auto& x, const auto& y) {
      return active_[x.index]->order() < active_[y.index]->order();
    }));
  }

  report.entries = static_cast<int64_t>(entries.size());
  report.sequences = static_cast<int64_t>(shares.size());
  std::vector<std::pair<size_t, SequenceEvent>> ended;
  int64_t row = 0, hidden_row = 0;
  size_t entry = 0;
  for (const PassShare& s : shares) {
    ActiveSequence& a = *active_[s.index];
    (a.decoding() ? report.decode_tokens : report.prompt_tokens) += s.tokens;
    // This sequence's logits and embedding rows: one per such entry among its entries.
    int64_t rows = 0, hidden = 0;
    for (size_t k = entry; k < entry + static_cast<size_t>(s.tokens); ++k) {
      rows += entries[k].logits;
      hidden += entries[k].hidden;
    }
    entry += static_cast<size_t>(s.tokens);
    rows = std::min(rows, logits->rows - row);
    hidden = std::min(hidden, logits->hidden_rows - hidden_row);
    const std::span<const float> l(logits->data + row * logits->n_vocab,
                                   static_cast<size_t>(rows * logits->n_vocab));
    const std::span<const float> h(logits->hidden + hidden_row * logits->n_embd,
                                   static_cast<size_t>(hidden * logits->n_embd));
    row += rows;
    hidden_row += hidden;
    const int64_t context_left = n_ctx_ - engine_.sequence_length(a.seq());
    ActiveSequence::Advanced adv = a.advance(s.tokens, l, context_left, h);
    if (adv.checked > 0) {
      std::lock_guard lock(state_mutex_);
      stats_.draft_tokens += adv.checked;
      stats_.accepted_draft_tokens += adv.accepted;
    }
    // A batch's sliding-window pages keep this much of a pass for the rewind below.
    static_assert(1 + kMaxDraftTokens <= kWindowRewindPositions);
    if (adv.drop > 0) { // the drafted tokens after the last kept one never happened
      const int64_t keep = engine_.sequence_length(a.seq()) - adv.drop;
      if (Status st = engine_.rewind_sequence(a.seq(), a.tokens(keep)); !st.ok()) {
        ended.emplace_back(s.index,
                           a.end(FinishReason::kError, st.with_context("dropping drafted tokens")));
        continue;
      }
    }
    for (SequenceEvent& e : adv.events) {
      report.generated += e.token != kNoToken;
      if (e.finish != FinishReason::kNone)
        ended.emplace_back(s.index, std::move(e));
      else
        out.push_back({a.sink(), std::move(e)});
    }
  }
  for (size_t k = ended.size(); k-- > 0;) // shares are in index order: erase from the back
    finish(ended[k].first, std::move(ended[k].second), out);
}

void Scheduler::finish(size_t index, SequenceEvent event, std::vector<Delivery>& out) {
  engine_.close_sequence(active_[index]->seq());
  if (drafter_)
    drafter_->forget(active_[index]->id());
  {
    std::lock_guard lock(state_mutex_);
    live_.erase(event.id);
    --n_active_;
    ++stats_.finished[static_cast<int>(event.finish)];
  }
  out.push_back({active_[index]->sink(), std::move(event)});
  active_.erase(active_.begin() + static_cast<std::ptrdiff_t>(index));
}

void Scheduler::preempt_newest(std::vector<Delivery>& out) {
  const auto newest =
      std::max_element(active_.begin(), active_.end(),
                       [](const auto& x, const auto& y) { return x->order() < y->order(); });
  const std::string others = std::to_string(active_.size() - 1);
  Status why(StatusCode::kOutOfMemory,
             "the KV cache ran out of room while " + others +
                 " other sequences hold it; this one, the newest, ended so that they can "
                 "finish (serve fewer sequences together, --parallel, or ask for fewer tokens)");
  const auto index = static_cast<size_t>(newest - active_.begin());
  finish(index, active_[index]->end(FinishReason::kError, std::move(why)), out);
}

void Scheduler::publish(const StepReport& report, double pass_ms) {
  const KvPageStats kv = engine_.kv_pages();
  BatchEngineStats engine = engine_.stats();
  const int64_t draft_passes = drafter_ ? drafter_->passes() : 0;
  std::vector<SequenceProgress> running;
  for (const auto& a : active_)
    running.push_back(a->progress());
  std::lock_guard lock(state_mutex_);
  stats_.kv = kv;
  stats_.draft_passes = draft_passes;
  stats_.running = std::move(running);
  stats_.engine = std::move(engine);
  if (report.entries == 0)
    return;
  ++stats_.passes;
  stats_.busy_ms += pass_ms;
  stats_.prompt_tokens += report.prompt_tokens;
  stats_.generated_tokens += report.generated;
  const auto now = std::chrono::steady_clock::now();
  recent_.push_back({now, report.prompt_tokens, report.generated});
  while (now - recent_.front().at > kRateWindow)
    recent_.pop_front();
}

void Scheduler::deliver(std::vector<Delivery>& out) {
  for (Delivery& d : out) {
    const bool keep = !d.sink || d.sink(d.event);
    if (!keep && d.event.finish == FinishReason::kNone)
      cancel(d.event.id);
  }
}

} // namespace pshard
