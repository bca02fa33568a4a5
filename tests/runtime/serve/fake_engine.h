// Scripted stand-ins for the scheduler tests: a BatchDecoder whose logits are a fixed
// function of each sequence's own tokens (so a sequence's output cannot depend on what
// shares its pass unless the scheduler mixes sequences up), with a paged KV pool, every
// pass recorded and failures on demand; and a tokenizer whose token i is one letter.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/vocabulary.h"

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace pshard::testing {

inline constexpr int64_t kFakeVocab = 32;
inline constexpr TokenId kFakeEos = 31;

// The token the script favours after `history`: never EOS unless the test says so.
inline TokenId scripted_next(const std::vector<TokenId>& history) {
  int64_t h = static_cast<int64_t>(history.size());
  for (TokenId t : history)
    h = (h * 7 + t) % 1000003;
  return static_cast<TokenId>(1 + h % (kFakeVocab - 2));
}

class FakeEngine final : public BatchDecoder {
public:
  FakeEngine(int64_t max_sequences, int64_t max_batch_tokens, int64_t n_ctx, int64_t page_tokens,
             int64_t total_pages)
      : max_sequences_(max_sequences), max_batch_tokens_(max_batch_tokens), n_ctx_(n_ctx),
        page_tokens_(page_tokens), total_pages_(total_pages) {}

  // The logits after a sequence's tokens: a peak at next(history), the rest falling off
  // with distance, so temperature sampling has a real distribution.
  std::function<TokenId(const std::vector<TokenId>&)> next = scripted_next;

  Result<SeqId> open_sequence() override {
    if (static_cast<int64_t>(seqs_.size()) >= max_sequences_)
      return Status(StatusCode::kOutOfMemory, "fake: all sequences in use");
    const SeqId id = next_id_++;
    seqs_[id] = {};
    ++opened;
    return id;
  }
  void close_sequence(SeqId seq) override {
    if (seqs_.erase(seq))
      ++closed;
  }
  int64_t sequence_length(SeqId seq) const override {
    auto it = seqs_.find(seq);
    return it == seqs_.end() ? -1 : static_cast<int64_t>(it->second.size());
  }
  bool can_append(SeqId seq, int64_t n) const override {
    auto it = seqs_.find(seq);
    if (it == seqs_.end())
      return false;
    const int64_t len = static_cast<int64_t>(it->second.size());
    return len + n <= n_ctx_ && used_pages() + pages(len + n) - pages(len) <= total_pages_;
  }

  Result<BatchLogits> decode(std::span<const BatchEntry> batch) override {
    decoding = true;
    struct Clear {
      std::atomic<bool>& f;
      ~Clear() { f = false; }
    } clear{decoding};
    if (fail_next.code() != StatusCode::kOk) {
      Status s = fail_next;
      fail_next = Status();
      return s;
    }
    if (static_cast<int64_t>(batch.size()) > max_batch_tokens_)
      return invalid_argument("fake: pass too large");
    std::map<SeqId, int64_t> adds;
    for (const BatchEntry& e : batch) {
      if (!seqs_.count(e.seq))
        return invalid_argument("fake: unknown sequence");
      if (e.token < 0 || e.token >= kFakeVocab)
        return out_of_range("fake: token out of range");
      ++adds[e.seq];
    }
    int64_t new_pages = 0;
    for (auto [seq, n] : adds) {
      const int64_t len = static_cast<int64_t>(seqs_[seq].size());
      if (len + n > n_ctx_)
        return out_of_range("fake: context overflow");
      new_pages += pages(len + n) - pages(len);
    }
    if (used_pages() + new_pages > total_pages_)
      return Status(StatusCode::kOutOfMemory, "fake: KV pages exhausted");
    passes.emplace_back(batch.begin(), batch.end());
    logits_.clear();
    int64_t rows = 0;
    for (const BatchEntry& e : batch) {
      seqs_[e.seq].push_back(e.token);
      if (!e.logits)
        continue;
      ++rows;
      const TokenId want = next(seqs_[e.seq]);
      for (int64_t t = 0; t < kFakeVocab; ++t)
        logits_.push_back(5.0f - 0.5f * static_cast<float>(std::abs(t - want)));
    }
    return BatchLogits{logits_.data(), kFakeVocab, rows};
  }

  int64_t n_vocab() const override { return kFakeVocab; }
  int64_t n_ctx() const override { return n_ctx_; }
  int64_t max_batch_tokens() const override { return max_batch_tokens_; }
  int64_t max_sequences() const override { return max_sequences_; }
  KvPageStats kv_pages() const override { return {page_tokens_, total_pages_, used_pages()}; }

  Status set_vram_budget(uint64_t bytes) override {
    if (decoding)
      return internal_error("fake: budget changed during a pass");
    budget = bytes;
    return Status::ok_status();
  }
  BatchEngineStats stats() const override {
    BatchEngineStats s;
    s.vram_budget = budget;
    return s;
  }

  std::vector<std::vector<BatchEntry>> passes;
  Status fail_next;
  std::atomic<bool> decoding{false};
  std::atomic<uint64_t> budget{0};
  int64_t opened = 0, closed = 0;
  int64_t open_count() const { return static_cast<int64_t>(seqs_.size()); }

private:
  int64_t pages(int64_t tokens) const { return (tokens + page_tokens_ - 1) / page_tokens_; }
  int64_t used_pages() const {
    int64_t n = 0;
    for (const auto& [id, toks] : seqs_)
      n += pages(static_cast<int64_t>(toks.size()));
    return n;
  }

  int64_t max_sequences_, max_batch_tokens_, n_ctx_, page_tokens_, total_pages_;
  SeqId next_id_ = 0;
  std::map<SeqId, std::vector<TokenId>> seqs_;
  std::vector<float> logits_;
};

// Token i is the letter 'a' + i (token 31, EOS, is "").
class FakeTokenizer final : public Tokenizer {
public:
  std::vector<TokenId> encode(std::string_view text, bool, bool) const override {
    std::vector<TokenId> ids;
    for (char c : text)
      ids.push_back(static_cast<TokenId>(c - 'a'));
    return ids;
  }
  std::string token_to_piece(TokenId id) const override {
    return id == kFakeEos || id < 0 || id >= kFakeVocab
               ? ""
               : std::string(1, static_cast<char>('a' + id));
  }
  std::string decode(std::span<const TokenId> ids) const override {
    std::string s;
    for (TokenId id : ids)
      s += token_to_piece(id);
    return s;
  }
  int32_t n_vocab() const override { return kFakeVocab; }
  TokenId bos() const override { return kNoToken; }
  TokenId eos() const override { return kFakeEos; }
  bool add_bos_by_default() const override { return false; }
  bool is_end_of_generation(TokenId id) const override { return id == kFakeEos; }
  const Vocabulary& vocabulary() const override { return vocab_; }

private:
  Vocabulary vocab_;
};

// What the scripted engine generates greedily after `prompt`, alone.
inline std::vector<TokenId> scripted_greedy(std::vector<TokenId> history, int n) {
  std::vector<TokenId> out;
  for (int i = 0; i < n; ++i) {
    out.push_back(scripted_next(history));
    history.push_back(out.back());
  }
  return out;
}

} // namespace pshard::testing
