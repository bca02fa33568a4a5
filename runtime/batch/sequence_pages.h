// The sequences of a batched engine and the KV pages they own: which sequences are open,
// how many positions each holds, its page table, and the checking of a pass — every
// entry's sequence open, token in the vocabulary, context and pages available — before
// anything changes. The engines (batched_cpu_session.h, batched_hybrid_session.h) keep
// the KV storage; this class only numbers its pages.
//
//   SequencePages seqs({max_sequences, n_ctx, page_tokens, n_pages});
//   PSHARD_ASSIGN_OR_RETURN(SeqId s, seqs.open());
//   PSHARD_ASSIGN_OR_RETURN(AssembledPass p, seqs.assemble(batch, limits));
//   seqs.take_pages(p);   // cannot fail: assemble() counted the pages
//   ... run the pass over p.tokens / p.segments ...
//   seqs.advance(p);
//
// Page tables live in one fixed table (max_sequences rows of n_ctx / page_tokens
// entries), so a device can map it once and read every sequence's table in place.
//
// With the prefix cache (SequenceLimits::prefix_cache), a text sequence's pages are
// registered as they fill, and open_with_prefix() shares the registered pages of a
// prompt's cached start: a page may then be in several tables (users_ counts them). A
// registered page no sequence holds stays cached until a pass needs the space.
//
// With a window (SequenceLimits::window), the sliding-window layers have their own pages
// and tables (window_pages.h): a sequence holds only its last window's there.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/batch/prefix_cache.h"
#include "runtime/batch/window_pages.h"
#include "runtime/model/deepstack.h"
#include "runtime/model/sublayer.h"

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace pshard {

struct SequenceLimits {
  int64_t max_sequences = 0;
  int64_t n_ctx = 0; // most positions per sequence
  int64_t page_tokens = 0;
  int64_t n_pages = 0;
  bool prefix_cache = true; // share full pages of text prompts between sequences
  // The sliding-window layers' widest window and their pool's pages (window_pool_pages);
  // window 0: those layers keep every position in the full pool.
  int64_t window = 0;
  int64_t window_pages = 0;
  int64_t max_pass_tokens = 0; // with a window: the most tokens of one sequence in a pass
  // The model's layers keep recurrent states (one per sequence slot): a sequence rewinds
  // only to 0 or where it is.
  bool states = false;
};

struct PassLimits {
  int64_t n_vocab = 0;
  int64_t max_batch_tokens = 0;
  int64_t max_logit_rows = 0;
  // false: the model attends both ways (an encoder), so a sequence is one pass from
  // position 0 and asks for no logits (ModelHParams::causal).
  bool causal = true;
};

// A checked pass: the tokens regrouped by sequence, in order of first appearance.
struct AssembledPass {
  std::vector<TokenId> tokens;
  std::vector<SeqSegment> segments;
  std::vector<SeqSegment> window_segments; // the same over the window tables (with a window)
  std::vector<SeqId> segment_seq;
  std::vector<int64_t> logit_rows; // regrouped index of each logits entry, batch order
  std::vector<int64_t> hidden_rows; // regrouped index of each `hidden` entry, batch order
  int64_t new_pages = 0;
  int64_t new_window_pages = 0; // net of the pages the pass's sequences let go
  int64_t longest = 0; // the most positions a sequence reaches in the pass
  // Only when an entry is multimodal (BatchEntry): 3 M-RoPE positions per regrouped row,
  // and the rows whose embedding is given (regrouped index, n_embd floats).
  std::vector<int32_t> rope_positions;
  std::vector<std::pair<int64_t, const float*>> embedding_rows;
  std::vector<DeepstackRow> deepstack;
  // Per regrouped row (multimodal passes only): the entry's name in the prefix cache —
  // its token unless it is multimodal, then its cache_key (BatchEntry).
  std::vector<TokenId> cache_keys;
};

class SequencePages {
public:
  explicit SequencePages(const SequenceLimits& limits);

  // kOutOfMemory when all sequences are in use.
  Result<SeqId> open();
  // open(), then the prefix cache's pages of the longest cached start of `prompt`
  // (prefix_cache.h; BatchDecoder::open_sequence_with_prefix says how much).
  Result<OpenedSequence> open_with_prefix(std::span<const TokenId> prompt);
  void close(SeqId seq);           // unknown ids are ignored
  // Keeps the sequence's first kept.size() positions (`kept`: its tokens, for the prefix
  // cache) and forgets the rest — speculative decoding's rejected drafted tokens. Pages
  // past the new length go back (still cached when full: their rows are right for their
  // tokens); a page the sequence will write again from its middle takes a new generation
  // and leaves the cache, with the pages dropped after it. Refused for an unknown
  // sequence, a length past its own, or a page another sequence shares (only a prompt's
  // whole pages are shared, and rewinding never reaches into a prompt).
  Status rewind(SeqId seq, std::span<const TokenId> kept);
  int64_t length(SeqId seq) const; // -1 if unknown
  bool can_append(SeqId seq, int64_t n_tokens) const;
  KvPageStats stats() const;
  const SequenceLimits& limits() const { return limits_; }

  Result<AssembledPass> assemble(std::span<const BatchEntry> batch, const PassLimits& l) const;
  // Gives each segment's sequence the pages its new positions need and points
  // segments[g].pages at its table (window_segments[g].pages at its window table, after
  // dropping the window pages it no longer reads).
  void take_pages(AssembledPass& pass);
  void advance(const AssembledPass& pass);
  // A pass that failed after take_pages: the pages it took go back, lengths unchanged.
  void release_unwritten(const AssembledPass& pass);

  // Rows [0, rows_spanned()) of the page storage hold every position in use: what a
  // residency move copies between host and device pages (the lowest free page is taken
  // first, so this stays near the positions held).
  int64_t rows_spanned() const;
  int64_t window_rows_spanned() const { return window_.rows_spanned(); }
  // The page tables: sequence s's at tables().data() + s * pages_per_sequence().
  std::span<int32_t> tables() { return tables_; }
  int64_t pages_per_sequence() const { return per_seq_; }
  // The window tables, as tables() (empty without a window).
  std::span<int32_t> window_tables() { return window_.tables(); }
  bool windowed() const { return window_.enabled(); }

private:
  struct Sequence {
    bool open = false;
    int64_t length = 0;
    int64_t pages = 0;
    bool cacheable = true;        // every position named so far: its full pages are registered
    std::vector<TokenId> filling; // while cacheable: the names of its last, partial page
  };
  const Sequence* find(SeqId seq) const;
  int64_t pages_for(int64_t positions) const;
  // Pages a pass may take: free ones and idle cached ones (evicted when taken).
  int64_t available_pages() const;
  int32_t take_page();
  void drop_page(int32_t page); // a holder lets go of it
  void register_page(SeqId seq, int64_t index, std::span<const TokenId> tokens);

  SequenceLimits limits_;
  int64_t per_seq_ = 0;
  std::vector<Sequence> seqs_; // index = SeqId
  std::vector<int32_t> tables_;
  std::vector<int32_t> free_;  // a stack, lowest page on top at first
  std::vector<int32_t> users_; // per page: the sequences holding it
  std::vector<uint32_t> generation_; // per page: times it was taken (or rewound) for new positions
  PrefixCache cache_;
  WindowPages window_;
};

} // namespace pshard
