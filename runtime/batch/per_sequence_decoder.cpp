#include "runtime/batch/per_sequence_decoder.h"

#include <algorithm>
#include <string>

namespace pshard {

Result<SeqId> PerSequenceDecoder::open_sequence() {
  auto free_slot = std::find(slots_.begin(), slots_.end(), nullptr);
  if (free_slot == slots_.end() && static_cast<int64_t>(slots_.size()) >= max_sequences_)
    return Status(StatusCode::kOutOfMemory,
                  "all " + std::to_string(max_sequences_) +
                      " sequence slots are in use; close a sequence or allow more (-np)");
  PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Decoder> session, factory_());
  if (free_slot == slots_.end()) {
    slots_.push_back(std::move(session));
    return static_cast<SeqId>(slots_.size() - 1);
  }
  *free_slot = std::move(session);
  return static_cast<SeqId>(free_slot - slots_.begin());
}

void PerSequenceDecoder::close_sequence(SeqId seq) {
  if (seq >= 0 && static_cast<size_t>(seq) < slots_.size())
    slots_[static_cast<size_t>(seq)].reset();
}

Status PerSequenceDecoder::rewind_sequence(SeqId seq, std::span<const TokenId> kept) {
  if (!find(seq))
    return invalid_argument("rewind of sequence " + std::to_string(seq) + ", which is not open");
  return slots_[static_cast<size_t>(seq)]->rewind(static_cast<int64_t>(kept.size()));
}

const Decoder* PerSequenceDecoder::find(SeqId seq) const {
  if (seq < 0 || static_cast<size_t>(seq) >= slots_.size())
    return nullptr;
  return slots_[static_cast<size_t>(seq)].get();
}

int64_t PerSequenceDecoder::sequence_length(SeqId seq) const {
  const Decoder* d = find(seq);
  return d ? d->n_past() : -1;
}

bool PerSequenceDecoder::can_append(SeqId seq, int64_t n_tokens) const {
  const Decoder* d = find(seq);
  return d && d->n_past() + n_tokens <= d->n_ctx();
}

int64_t PerSequenceDecoder::n_ctx() const {
  for (const auto& s : slots_)
    if (s)
      return s->n_ctx();
  return 0;
}

KvPageStats PerSequenceDecoder::kv_pages() const {
  KvPageStats st;
  st.page_tokens = n_ctx();
  st.total_pages = max_sequences_;
  st.used_pages = std::count_if(slots_.begin(), slots_.end(), [](const auto& s) { return s != nullptr; });
  return st;
}

Result<BatchLogits> PerSequenceDecoder::decode(std::span<const BatchEntry> batch) {
  PSHARD_RETURN_IF_ERROR(check_text_only(batch, "the per-sequence engine"));
  if (static_cast<int64_t>(batch.size()) > max_batch_tokens_)
    return invalid_argument("a pass of " + std::to_string(batch.size()) + " tokens exceeds the " +
                            std::to_string(max_batch_tokens_) + " a pass may carry");
  // Group each sequence's entries, in order, checking everything before decoding.
  std::vector<SeqId> order;
  std::vector<std::vector<TokenId>> tokens(slots_.size());
  int64_t rows = 0;
  for (const BatchEntry& e : batch) {
    if (!find(e.seq))
      return invalid_argument("sequence " + std::to_string(e.seq) + " is not open");
    if (e.token < 0 || e.token >= n_vocab_)
      return Status(StatusCode::kOutOfRange, "token id " + std::to_string(e.token) +
                                                 " is outside the vocabulary of " +
                                                 std::to_string(n_vocab_));
    auto& t = tokens[static_cast<size_t>(e.seq)];
    if (t.empty())
      order.push_back(e.seq);
    t.push_back(e.token);
    rows += e.logits;
  }
  for (SeqId s : order)
    if (!can_append(s, static_cast<int64_t>(tokens[static_cast<size_t>(s)].size())))
      return Status(StatusCode::kOutOfRange, "sequence " + std::to_string(s) +
                                                 " would exceed its context of " +
                                                 std::to_string(n_ctx()) + " tokens");
  // Each sequence runs its entries as runs ending at a logits entry (a Decoder returns
  // the logits of the last token it is given).
  logits_.assign(static_cast<size_t>(rows * n_vocab_), 0.0f);
  std::vector<int64_t> row_of(batch.size(), -1);
  int64_t next_row = 0;
  for (size_t i = 0; i < batch.size(); ++i)
    if (batch[i].logits)
      row_of[i] = next_row++;
  for (SeqId s : order) {
    Decoder& d = *slots_[static_cast<size_t>(s)];
    std::vector<TokenId> run;
    for (size_t i = 0; i < batch.size(); ++i) {
      if (batch[i].seq != s)
        continue;
      run.push_back(batch[i].token);
      if (!batch[i].logits)
        continue;
      PSHARD_ASSIGN_OR_RETURN(std::span<const float> l, d.decode(run));
      std::copy(l.begin(), l.end(), logits_.begin() + row_of[i] * n_vocab_);
      run.clear();
    }
    if (!run.empty()) {
      PSHARD_ASSIGN_OR_RETURN(std::span<const float> l, d.decode(run));
      (void)l;
    }
  }
  return BatchLogits{logits_.data(), n_vocab_, rows};
}

} // namespace pshard
