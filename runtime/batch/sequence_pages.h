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
#pragma once

#include "runtime/batch/batch_decoder.h"
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
};

struct PassLimits {
  int64_t n_vocab = 0;
  int64_t max_batch_tokens = 0;
  int64_t max_logit_rows = 0;
};

// A checked pass: the tokens regrouped by sequence, in order of first appearance.
struct AssembledPass {
  std::vector<TokenId> tokens;
  std::vector<SeqSegment> segments;
  std::vector<SeqId> segment_seq;
  std::vector<int64_t> logit_rows; // regrouped index of each logits entry, batch order
  int64_t new_pages = 0;
  int64_t longest = 0; // the most positions a sequence reaches in the pass
  // Only when an entry is multimodal (BatchEntry): 3 M-RoPE positions per regrouped row,
  // and the rows whose embedding is given (regrouped index, n_embd floats).
  std::vector<int32_t> rope_positions;
  std::vector<std::pair<int64_t, const float*>> embedding_rows;
};

class SequencePages {
public:
  explicit SequencePages(const SequenceLimits& limits);

  // kOutOfMemory when all sequences are in use.
  Result<SeqId> open();
  void close(SeqId seq);           // unknown ids are ignored
  int64_t length(SeqId seq) const; // -1 if unknown
  bool can_append(SeqId seq, int64_t n_tokens) const;
  KvPageStats stats() const;
  const SequenceLimits& limits() const { return limits_; }

  Result<AssembledPass> assemble(std::span<const BatchEntry> batch, const PassLimits& l) const;
  // Gives each segment's sequence the pages its new positions need and points
  // segments[g].pages at its table.
  void take_pages(AssembledPass& pass);
  void advance(const AssembledPass& pass);
  // A pass that failed after take_pages: the pages it took go back, lengths unchanged.
  void release_unwritten(const AssembledPass& pass);

  // Rows [0, rows_spanned()) of the page storage hold every position in use: what a
  // residency move copies between host and device pages (the lowest free page is taken
  // first, so this stays near the positions held).
  int64_t rows_spanned() const;
  // The page tables: sequence s's at tables().data() + s * pages_per_sequence().
  std::span<int32_t> tables() { return tables_; }
  int64_t pages_per_sequence() const { return per_seq_; }

private:
  struct Sequence {
    bool open = false;
    int64_t length = 0;
    int64_t pages = 0;
  };
  const Sequence* find(SeqId seq) const;
  int64_t pages_for(int64_t positions) const;

  SequenceLimits limits_;
  int64_t per_seq_ = 0;
  std::vector<Sequence> seqs_; // index = SeqId
  std::vector<int32_t> tables_;
  std::vector<int32_t> free_;  // a stack, lowest page on top at first
  std::vector<int32_t> users_; // per page: 1 while a sequence owns it
};

} // namespace pshard
