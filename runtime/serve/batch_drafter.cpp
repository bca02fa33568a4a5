#include "runtime/serve/batch_drafter.h"

#include "runtime/generate/draft_model.h"

#include <algorithm>

namespace pshard {

BatchDrafter::~BatchDrafter() {
  for (auto& [key, s] : seqs_)
    engine_->close_sequence(s.seq);
}

void BatchDrafter::forget(RequestId key) {
  if (auto it = seqs_.find(key); it != seqs_.end()) {
    engine_->close_sequence(it->second.seq);
    seqs_.erase(it);
  }
}

Result<BatchDrafter::Sequence*> BatchDrafter::sync(const DraftWant& want) {
  const std::span<const TokenId> history = want.history;
  auto it = seqs_.find(want.key);
  if (it != seqs_.end()) {
    Sequence& s = it->second;
    const size_t same = start_to_keep(s.held, history);
    if (same < s.held.size()) {
      // A rewind into a page another sequence shares is refused: start that one anew.
      if (engine_->rewind_sequence(s.seq, history.first(same)).ok()) {
        s.held.resize(same);
      } else {
        forget(want.key);
        it = seqs_.end();
      }
    }
  }
  if (it == seqs_.end()) {
    Result<OpenedSequence> opened = engine_->open_sequence_with_prefix(history);
    if (!opened.ok() && opened.status().code() == StatusCode::kOutOfMemory)
      return nullptr; // no pages for it now: no draft, the request goes on
    PSHARD_RETURN_IF_ERROR(opened.status());
    Sequence s{opened->seq,
               std::vector<TokenId>(history.begin(), history.begin() + opened->reused)};
    it = seqs_.emplace(want.key, std::move(s)).first;
  }
  Sequence& s = it->second;
  const auto unread = static_cast<int64_t>(history.size() - s.held.size());
  if (!engine_->can_append(s.seq, unread + want.limit))
    return nullptr;
  return &s;
}

Result<BatchLogits> BatchDrafter::pass(std::span<const BatchEntry> entries) {
  ++passes_;
  return engine_->decode(entries);
}

Result<std::vector<std::vector<TokenId>>> BatchDrafter::draft(std::span<const DraftWant> wants) {
  std::vector<std::vector<TokenId>> out(wants.size());
  std::vector<Sequence*> seq(wants.size(), nullptr);
  for (size_t i = 0; i < wants.size(); ++i)
    if (wants[i].limit > 0 && !wants[i].history.empty()) {
      PSHARD_ASSIGN_OR_RETURN(seq[i], sync(wants[i]));
    }
  // On a failed pass the engine changed nothing (BatchDecoder's contract) but `held` may
  // have run ahead of it: forget every sequence of this call.
  auto failed = [&](const Status& st) {
    for (const DraftWant& w : wants)
      forget(w.key);
    return st.with_context("the draft model's pass");
  };
  // The draft model's verdict on a sequence's logits: its next drafted token, if any, and
  // whether to feed it for another.
  std::vector<bool> going(wants.size(), false);
  auto take = [&](size_t i, std::span<const float> logits) {
    if (std::optional<TokenId> t = confident_token(logits, target_vocab_, p_min_)) {
      out[i].push_back(*t);
      going[i] = static_cast<int64_t>(out[i].size()) < wants[i].limit;
    }
  };

  // Each sequence's unread tokens, in passes of at most the engine's batch; the logits of
  // a sequence's last one give its first drafted token.
  std::vector<BatchEntry> entries;
  std::vector<size_t> rows_of; // want index of each logits row
  for (;;) {
    entries.clear();
    rows_of.clear();
    std::vector<int64_t> fed(wants.size(), 0);
    int64_t room = engine_->max_batch_tokens();
    for (size_t i = 0; i < wants.size() && room > 0; ++i) {
      if (!seq[i])
        continue;
      const std::span<const TokenId> h = wants[i].history;
      const auto from = static_cast<int64_t>(seq[i]->held.size());
      const int64_t n = std::min<int64_t>(room, static_cast<int64_t>(h.size()) - from);
      for (int64_t k = 0; k < n; ++k) {
        const bool last = from + k + 1 == static_cast<int64_t>(h.size());
        entries.push_back({seq[i]->seq, h[static_cast<size_t>(from + k)], last});
        if (last)
          rows_of.push_back(i);
      }
      fed[i] = n;
      room -= n;
    }
    if (entries.empty())
      break;
    Result<BatchLogits> logits = pass(entries);
    if (!logits.ok())
      return failed(logits.status());
    for (size_t i = 0; i < wants.size(); ++i)
      if (fed[i] > 0) {
        const auto from = static_cast<std::ptrdiff_t>(seq[i]->held.size());
        seq[i]->held.insert(seq[i]->held.end(), wants[i].history.begin() + from,
                            wants[i].history.begin() + from + fed[i]);
      }
    for (size_t r = 0; r < rows_of.size(); ++r)
      take(rows_of[r], logits->row(static_cast<int64_t>(r)));
  }

  // Then one drafted token of every sequence still going per pass.
  for (;;) {
    entries.clear();
    rows_of.clear();
    for (size_t i = 0; i < wants.size(); ++i)
      if (going[i]) {
        entries.push_back({seq[i]->seq, out[i].back(), true});
        rows_of.push_back(i);
      }
    if (entries.empty())
      break;
    Result<BatchLogits> logits = pass(entries);
    if (!logits.ok())
      return failed(logits.status());
    for (size_t r = 0; r < rows_of.size(); ++r) {
      const size_t i = rows_of[r];
      seq[i]->held.push_back(out[i].back());
      going[i] = false;
      take(i, logits->row(static_cast<int64_t>(r)));
    }
  }
  return out;
}

} // namespace pshard
