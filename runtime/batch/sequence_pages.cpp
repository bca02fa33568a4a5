#include "runtime/batch/sequence_pages.h"

#include "runtime/model/hparams.h" // kEmbedsOnlyMessage
#include "runtime/model/kv_cache.h" // check_state_rewind
#include "runtime/model/kv_ring.h"

#include <algorithm>
#include <string>

namespace pshard {

SequencePages::SequencePages(const SequenceLimits& limits)
    : limits_(limits), per_seq_((limits.n_ctx + limits.page_tokens - 1) / limits.page_tokens),
      seqs_(static_cast<size_t>(limits.max_sequences)),
      tables_(static_cast<size_t>(limits.max_sequences * per_seq_), -1),
      users_(static_cast<size_t>(limits.n_pages), 0),
      generation_(static_cast<size_t>(limits.n_pages), 0), cache_(limits.n_pages),
      window_(limits.window, limits.max_pass_tokens, limits.page_tokens, limits.window_pages,
              limits.n_pages, limits.max_sequences, per_seq_) {
  for (int64_t page = limits.n_pages - 1; page >= 0; --page)
    free_.push_back(static_cast<int32_t>(page));
}

Result<SeqId> SequencePages::open() {
  auto slot = std::find_if(seqs_.begin(), seqs_.end(), [](const Sequence& s) { return !s.open; });
  if (slot == seqs_.end())
    return Status(StatusCode::kOutOfMemory,
                  "all " + std::to_string(limits_.max_sequences) +
                      " sequences are in use; close one or allow more (-np)");
  *slot = Sequence{};
  slot->open = true;
  slot->cacheable = limits_.prefix_cache;
  return static_cast<SeqId>(slot - seqs_.begin());
}

Result<OpenedSequence> SequencePages::open_with_prefix(std::span<const TokenId> prompt) {
  PSHARD_ASSIGN_OR_RETURN(SeqId seq, open());
  if (!limits_.prefix_cache || prompt.empty())
    return OpenedSequence{seq, 0};
  Sequence& s = seqs_[static_cast<size_t>(seq)];
  int32_t* table = tables_.data() + seq * per_seq_;
  const int64_t pt = limits_.page_tokens;
  // Whole pages only, and never the prompt's last token: it is decoded for its logits.
  const int64_t most = std::min<int64_t>((static_cast<int64_t>(prompt.size()) - 1) / pt, per_seq_);
  int32_t parent = -1;
  while (s.pages < most) {
    const int32_t page =
        cache_.find(parent, parent < 0 ? 0 : generation_[static_cast<size_t>(parent)],
                    prompt.subspan(static_cast<size_t>(s.pages * pt), static_cast<size_t>(pt)));
    if (page < 0)
      break;
    if (users_[static_cast<size_t>(page)]++ == 0)
      cache_.acquire(page);
    table[s.pages++] = page;
    parent = page;
  }
  if (window_.enabled()) { // as many pages as the window pages of their end are cached
    std::vector<uint32_t> generations;
    for (int64_t i = 0; i < s.pages; ++i)
      generations.push_back(generation_[static_cast<size_t>(table[i])]);
    const int64_t shared = window_.share(seq, {table, static_cast<size_t>(s.pages)}, generations);
    while (s.pages > shared) {
      drop_page(table[--s.pages]);
      table[s.pages] = -1;
    }
  }
  s.length = s.pages * pt; // whole pages: nothing is filling yet
  return OpenedSequence{seq, s.length};
}

void SequencePages::close(SeqId seq) {
  if (!find(seq))
    return;
  Sequence& s = seqs_[static_cast<size_t>(seq)];
  int32_t* table = tables_.data() + seq * per_seq_;
  // Last page first: a prompt's earlier pages become the more recently used, so eviction
  // takes a chain's later pages before the pages they follow.
  for (int64_t i = s.pages - 1; i >= 0; --i) {
    drop_page(table[i]);
    table[i] = -1;
  }
  window_.close(seq);
  s = Sequence{};
}

Status SequencePages::rewind(SeqId seq, std::span<const TokenId> kept) {
  if (!find(seq))
    return invalid_argument("rewind of sequence " + std::to_string(seq) + ", which is not open");
  Sequence& s = seqs_[static_cast<size_t>(seq)];
  const auto length = static_cast<int64_t>(kept.size());
  if (length > s.length)
    return out_of_range("cannot rewind sequence " + std::to_string(seq) + " to " +
                        std::to_string(length) + " positions: it holds " +
                        std::to_string(s.length));
  if (limits_.states)
    PSHARD_RETURN_IF_ERROR(check_state_rewind(length, s.length));
  int32_t* table = tables_.data() + seq * per_seq_;
  const int64_t pages = pages_for(length);
  const int64_t partial = length % limits_.page_tokens;
  if (partial > 0 && users_[static_cast<size_t>(table[pages - 1])] > 1)
    return internal_error("rewinding sequence " + std::to_string(seq) +
                          " would write a page another sequence shares");
  PSHARD_RETURN_IF_ERROR(window_.rewind(seq, length, pages));
  // A kept page whose later rows will be written again holds other positions from now
  // on, as a page taken anew does: a new generation, so that no block registered after
  // it is found again (registered or not: its refilled block may register later), and
  // out of the cache, with the pages dropped after it (nothing could find them).
  const bool rewrites = partial > 0;
  if (rewrites) {
    cache_.forget(table[pages - 1]);
    ++generation_[static_cast<size_t>(table[pages - 1])];
    window_.unlink(seq, pages - 1);
  }
  for (int64_t i = s.pages - 1; i >= pages; --i) {
    if (rewrites && users_[static_cast<size_t>(table[i])] == 1)
      cache_.forget(table[i]);
    drop_page(table[i]);
    table[i] = -1;
  }
  s.pages = pages;
  s.length = length;
  if (s.cacheable)
    s.filling.assign(kept.end() - partial, kept.end());
  return Status::ok_status();
}

int64_t SequencePages::available_pages() const {
  return static_cast<int64_t>(free_.size()) + cache_.idle();
}

int32_t SequencePages::take_page() {
  int32_t page = -1;
  if (!free_.empty()) {
    page = free_.back();
    free_.pop_back();
  } else {
    page = cache_.evict(); // available_pages() counted it
  }
  ++generation_[static_cast<size_t>(page)]; // other positions from now on
  users_[static_cast<size_t>(page)] = 1;
  return page;
}

void SequencePages::drop_page(int32_t page) {
  if (--users_[static_cast<size_t>(page)] > 0)
    return;
  if (cache_.cached(page))
    cache_.release(page);
  else
    free_.push_back(page);
}

// Page `index` of `seq`, just filled with `tokens`, registered in the cache under them
// and the page before it.
void SequencePages::register_page(SeqId seq, int64_t index, std::span<const TokenId> tokens) {
  const int32_t* table = tables_.data() + seq * per_seq_;
  const int32_t parent = index > 0 ? table[index - 1] : -1;
  if (cache_.insert(table[index], parent,
                    parent < 0 ? 0 : generation_[static_cast<size_t>(parent)], tokens))
    window_.link(seq, index, table[index], generation_[static_cast<size_t>(table[index])]);
}

const SequencePages::Sequence* SequencePages::find(SeqId seq) const {
  if (seq < 0 || static_cast<size_t>(seq) >= seqs_.size() || !seqs_[static_cast<size_t>(seq)].open)
    return nullptr;
  return &seqs_[static_cast<size_t>(seq)];
}

int64_t SequencePages::length(SeqId seq) const {
  const Sequence* s = find(seq);
  return s ? s->length : -1;
}

int64_t SequencePages::pages_for(int64_t positions) const {
  return (positions + limits_.page_tokens - 1) / limits_.page_tokens;
}

bool SequencePages::can_append(SeqId seq, int64_t n) const {
  const Sequence* s = find(seq);
  if (!s || s->length + n > limits_.n_ctx)
    return false;
  return pages_for(s->length + n) - s->pages <= available_pages() &&
         window_.append_need(seq, s->length, n) <= window_.available();
}

KvPageStats SequencePages::stats() const {
  return {limits_.page_tokens, limits_.n_pages, limits_.n_pages - available_pages(), cache_.size(),
          window_.total_pages(), window_.used_pages()};
}

int64_t SequencePages::rows_spanned() const {
  for (int64_t page = limits_.n_pages - 1; page >= 0; --page)
    if (users_[static_cast<size_t>(page)] || cache_.cached(static_cast<int32_t>(page)))
      return (page + 1) * limits_.page_tokens;
  return 0;
}

Result<AssembledPass> SequencePages::assemble(std::span<const BatchEntry> batch,
                                              const PassLimits& l) const {
  if (batch.empty())
    return invalid_argument("a pass needs at least one token");
  if (static_cast<int64_t>(batch.size()) > l.max_batch_tokens)
    return invalid_argument("a pass of " + std::to_string(batch.size()) + " tokens exceeds the " +
                            std::to_string(l.max_batch_tokens) + " a pass may carry");
  std::vector<int64_t> count(seqs_.size(), 0);
  AssembledPass p;
  int64_t rows = 0;
  for (const BatchEntry& e : batch) {
    if (!find(e.seq))
      return invalid_argument("sequence " + std::to_string(e.seq) + " is not open");
    if (e.token < 0 || e.token >= l.n_vocab)
      return Status(StatusCode::kOutOfRange, "token id " + std::to_string(e.token) +
                                                 " is outside the vocabulary of " +
                                                 std::to_string(l.n_vocab));
    if (count[static_cast<size_t>(e.seq)]++ == 0)
      p.segment_seq.push_back(e.seq);
    rows += e.logits;
  }
  if (rows > l.max_logit_rows)
    return invalid_argument("a pass asks for " + std::to_string(rows) + " logits rows, more than " +
                            std::to_string(l.max_logit_rows));
  if (!l.causal && rows > 0)
    return unsupported(kEmbedsOnlyMessage);
  // Segments in order of first appearance; each sequence's tokens keep their batch order.
  std::vector<int64_t> next(seqs_.size(), 0);
  int64_t at = 0;
  for (SeqId s : p.segment_seq) {
    const Sequence& q = *find(s);
    const int64_t n = count[static_cast<size_t>(s)];
    if (!l.causal && q.length > 0)
      return invalid_argument("sequence " + std::to_string(s) +
                              " already ran a pass: this model attends both ways, so a text is "
                              "embedded in one pass; give the whole text at once (a batch of "
                              "up to " +
                              std::to_string(l.max_batch_tokens) + " tokens)");
    if (q.length + n > limits_.n_ctx)
      return Status(StatusCode::kOutOfRange, "sequence " + std::to_string(s) +
                                                 " would exceed its context of " +
                                                 std::to_string(limits_.n_ctx) + " tokens");
    p.new_pages += std::max<int64_t>(0, pages_for(q.length + n) - q.pages);
    p.new_window_pages += window_.net_new(s, q.length, pages_for(q.length + n));
    p.segments.push_back({at, n, q.length, nullptr, s});
    p.longest = std::max(p.longest, q.length + n);
    next[static_cast<size_t>(s)] = at;
    at += n;
  }
  if (p.new_pages > available_pages())
    return Status(StatusCode::kOutOfMemory,
                  "the pass needs " + std::to_string(p.new_pages) + " more KV pages, " +
                      std::to_string(available_pages()) + " are free; finish or close sequences");
  if (p.new_window_pages > window_.available())
    return Status(StatusCode::kOutOfMemory,
                  "the pass needs " + std::to_string(p.new_window_pages) +
                      " more sliding-window KV pages, " + std::to_string(window_.available()) +
                      " are free; finish or close sequences");
  const bool multimodal =
      std::any_of(batch.begin(), batch.end(), [](const BatchEntry& e) { return e.multimodal(); });
  // A row's cache position: its sequence's length plus its index inside the segment.
  std::vector<int64_t> slot_shift(seqs_.size(), 0);
  for (SeqId s : p.segment_seq)
    slot_shift[static_cast<size_t>(s)] = find(s)->length - next[static_cast<size_t>(s)];
  p.tokens.resize(batch.size());
  if (multimodal) {
    p.rope_positions.resize(3 * batch.size());
    p.cache_keys.resize(batch.size());
  }
  for (const BatchEntry& e : batch) {
    const int64_t i = next[static_cast<size_t>(e.seq)]++;
    p.tokens[static_cast<size_t>(i)] = e.token;
    if (e.logits)
      p.logit_rows.push_back(i);
    if (e.hidden)
      p.hidden_rows.push_back(i);
    if (!multimodal)
      continue;
    p.cache_keys[static_cast<size_t>(i)] = e.multimodal() ? e.cache_key : e.token;
    const auto slot = static_cast<int32_t>(i + slot_shift[static_cast<size_t>(e.seq)]);
    const std::array<int32_t, 3> pos = e.rope[0] >= 0 ? e.rope : std::array{slot, slot, slot};
    std::copy(pos.begin(), pos.end(), p.rope_positions.begin() + 3 * i);
    if (e.embedding)
      p.embedding_rows.emplace_back(i, e.embedding);
    if (e.deepstack)
      p.deepstack.push_back({i, e.deepstack, e.deepstack_stride, e.deepstack_layers});
  }
  return p;
}

void SequencePages::take_pages(AssembledPass& p) {
  for (size_t g = 0; g < p.segments.size(); ++g) {
    const SeqId seq = p.segment_seq[g];
    Sequence& q = seqs_[static_cast<size_t>(seq)];
    int32_t* table = tables_.data() + seq * per_seq_;
    while (q.pages < pages_for(q.length + p.segments[g].count))
      table[q.pages++] = take_page();
    p.segments[g].pages = table;
    if (!window_.enabled())
      continue;
    window_.take(seq, q.length, q.pages);
    p.window_segments.push_back(p.segments[g]);
    p.window_segments.back().pages = window_.table(seq);
  }
}

void SequencePages::release_unwritten(const AssembledPass& p) {
  for (SeqId seq : p.segment_seq) {
    Sequence& q = seqs_[static_cast<size_t>(seq)];
    int32_t* table = tables_.data() + seq * per_seq_;
    while (q.pages > pages_for(q.length)) {
      drop_page(table[--q.pages]);
      table[q.pages] = -1;
    }
    window_.drop_after(seq, q.pages);
  }
}

void SequencePages::advance(const AssembledPass& p) {
  for (size_t g = 0; g < p.segments.size(); ++g) {
    const SeqId seq = p.segment_seq[g];
    Sequence& q = seqs_[static_cast<size_t>(seq)];
    const int64_t pt = limits_.page_tokens;
    int64_t page = q.length / pt; // the page its next position fills
    q.length += p.segments[g].count;
    // A multimodal pass names its rows by their cache keys: an image's placeholder tokens
    // do not say what its rows hold. A row without a name ends the sequence's caching.
    const std::vector<TokenId>& names = p.cache_keys.empty() ? p.tokens : p.cache_keys;
    const auto first = names.begin() + p.segments[g].begin, last = first + p.segments[g].count;
    if (q.cacheable && !p.cache_keys.empty() && std::find(first, last, kNoCacheKey) != last) {
      q.cacheable = false;
      q.filling = {};
    }
    for (auto t = first; q.cacheable && t != last; ++t) {
      q.filling.push_back(*t);
      if (static_cast<int64_t>(q.filling.size()) == pt) {
        register_page(seq, page++, q.filling); // its window page goes with it (link)
        q.filling.clear();
      }
    }
    // Between passes: the window, and a rewind's margin into the pass just run.
    window_.trim(seq, q.length - std::min(p.segments[g].count, kWindowRewindPositions));
  }
}

} // namespace pshard
