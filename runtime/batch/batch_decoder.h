// What a batching scheduler (continuous batching, a server) needs from the engine: many
// sequences, each with its own KV cache positions, advanced together by forward passes
// that carry the new tokens of several sequences at once.
//
//   PSHARD_ASSIGN_OR_RETURN(SeqId a, engine.open_sequence());
//   PSHARD_ASSIGN_OR_RETURN(SeqId b, engine.open_sequence());
//   std::vector<BatchEntry> pass = {{a, 1, false}, {a, 403, true}, {b, 1, true}};
//   PSHARD_ASSIGN_OR_RETURN(BatchLogits out, engine.decode(pass));
//   out.row(0);   // logits after a's token 403; out.row(1): after b's first token
//   engine.close_sequence(a);   // its KV cache space returns to the pool
//
// Semantics every implementation keeps:
//  - a sequence's tokens take its next positions in the order they appear in the batch;
//    attention sees only the sequence's own earlier positions;
//  - logits rows come back for the entries with `logits` set, in batch order, and are
//    valid until the next decode();
//  - results do not depend on what else shares the pass: on cpu/emu a sequence's logits
//    are bit-identical to the same sequence decoded alone (batch invariance);
//  - a decode that cannot run (unknown sequence, no KV space, a token out of range, more
//    than max_batch_tokens()) fails before touching any sequence.
// Not thread-safe: one caller (the scheduler's loop) drives an engine.
//
// Optional (engines that run a schedule): set_vram_budget() moves every sequence to other
// plans between passes, stats() reports the passes per plan and tier and the device
// memory held. The defaults are an engine without a device.
#pragma once

#include "runtime/batch/cache_key.h"
#include "runtime/core/status.h"
#include "runtime/executor/session_stats.h"
#include "runtime/tokenizer/token_id.h"

#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace pshard {

using SeqId = int32_t;

// Vision-language models add two optional fields (engines that cannot take them refuse
// the pass, check_text_only): an image token's embedding row fed in place of the token's
// (the token id is then a placeholder), and M-RoPE positions (runtime/model/mrope_positions.h)
// — an entry without them takes its cache position in all three components.
struct BatchEntry {
  SeqId seq = -1;
  TokenId token = 0;
  bool logits = false;                        // return the logits after this token
  const float* embedding = nullptr;           // n_embd floats, valid during decode(); or null
  // An image token's DeepStack rows (runtime/model/deepstack.h), valid during decode().
  const float* deepstack = nullptr;
  int64_t deepstack_stride = 0, deepstack_layers = 0;
  std::array<int32_t, 3> rope = {-1, -1, -1}; // (t, h, w); rope[0] < 0: the cache position
  // Return this token's embedding row: its final hidden state after the output norm
  // (runtime/model/pooling.h). Engines without embeddings refuse the pass.
  bool hidden = false;
  // What names a multimodal entry's position in the prefix cache (runtime/batch/
  // prefix_cache.h): its token for text, image_row_key() for an image's row. Where a
  // multimodal entry has none, its sequence's pages from there on are not cached.
  TokenId cache_key = kNoCacheKey;
  bool multimodal() const { return embedding || rope[0] >= 0; }
};

// kUnsupported naming `engine` when a pass carries an embedding row or M-RoPE positions,
// or asks for an embedding row (`hidden`).
Status check_text_only(std::span<const BatchEntry> batch, const char* engine);

struct BatchLogits {
  const float* data = nullptr;
  int64_t n_vocab = 0;
  int64_t rows = 0;
  std::span<const float> row(int64_t i) const {
    return {data + i * n_vocab, static_cast<size_t>(n_vocab)};
  }
  // The embedding rows of the entries with `hidden` set, in batch order, n_embd each.
  const float* hidden = nullptr;
  int64_t n_embd = 0;
  int64_t hidden_rows = 0;
  std::span<const float> hidden_row(int64_t i) const {
    return {hidden + i * n_embd, static_cast<size_t>(n_embd)};
  }
};

// KV cache space, in pages of page_tokens positions (a contiguous-cache engine reports
// one page per sequence slot of n_ctx tokens).
struct KvPageStats {
  int64_t page_tokens = 0;
  int64_t total_pages = 0;
  int64_t used_pages = 0;   // held by sequences (a shared page once)
  int64_t cached_pages = 0; // in the prefix cache, held or idle (idle ones are free to reuse)
  // The sliding-window layers' own pool, when they have one (window_pages.h).
  int64_t window_total_pages = 0;
  int64_t window_used_pages = 0; // held by sequences
};

// A sequence opened with a prompt (BatchDecoder::open_sequence_with_prefix): its first
// `reused` positions already hold the prompt's KV.
struct OpenedSequence {
  SeqId seq = -1;
  int64_t reused = 0;
};

// What an engine measured, over every sequence: passes per plan (budget, tier), bytes
// streamed, the budget in force and the device memory held now.
struct BatchEngineStats {
  SessionStats sessions;
  uint64_t vram_budget = 0;
  uint64_t device_bytes = 0;
};

class BatchDecoder {
public:
  virtual ~BatchDecoder() = default;

  // A new, empty sequence. kOutOfMemory when no KV space is left for one more.
  virtual Result<SeqId> open_sequence() = 0;
  // A new sequence for `prompt`: an engine with a prefix cache shares the KV pages an
  // earlier sequence wrote for the longest cached start of the prompt, in whole pages and
  // at most prompt.size() - 1 positions (its last token is still decoded, for its
  // logits); the caller feeds the prompt from position `reused` on. The results are
  // those of decoding the whole prompt (bit for bit on cpu/emu). Default: open_sequence().
  virtual Result<OpenedSequence> open_sequence_with_prefix(std::span<const TokenId> prompt) {
    PSHARD_ASSIGN_OR_RETURN(SeqId seq, open_sequence());
    return OpenedSequence{seq, 0};
  }
  // Frees the sequence's KV space; unknown ids are ignored.
  virtual void close_sequence(SeqId seq) = 0;
  // Keeps the sequence's first kept.size() positions — `kept` are their tokens, which an
  // engine with a prefix cache needs — and forgets the rest: a scheduler's speculative
  // decoding drops its rejected drafted tokens so (the next decode writes over their KV
  // rows). Default: kUnsupported.
  virtual Status rewind_sequence(SeqId seq, std::span<const TokenId> kept);
  // Positions the sequence holds (its next token goes at this position); -1 if unknown.
  virtual int64_t sequence_length(SeqId seq) const = 0;
  // Whether `n_tokens` more positions fit the sequence (its context and the page pool).
  virtual bool can_append(SeqId seq, int64_t n_tokens) const = 0;

  virtual Result<BatchLogits> decode(std::span<const BatchEntry> batch) = 0;

  virtual int64_t n_vocab() const = 0;
  // Width of the embedding rows BatchEntry::hidden returns; 0: the engine has none.
  virtual int64_t n_embd() const { return 0; }
  // The model attends both ways (an encoder): a sequence is one pass of its whole prompt
  // from position 0, for its embedding only (no logits, no prefix sharing).
  virtual bool embeds_only() const { return false; }
  virtual int64_t n_ctx() const = 0;            // most positions of one sequence
  virtual int64_t max_batch_tokens() const = 0; // most entries in one decode()
  virtual int64_t max_sequences() const = 0;
  virtual KvPageStats kv_pages() const = 0;

  // Between passes: every sequence (and every later one) moves to the plans of the
  // largest compiled budget <= bytes. kOutOfMemory, changing nothing, below the smallest.
  virtual Status set_vram_budget(uint64_t bytes) {
    return unsupported("this engine runs no schedule, so it has no VRAM budget to change "
                       "(load the model with a schedule, -s)");
  }
  virtual BatchEngineStats stats() const { return {}; }
};

} // namespace pshard
