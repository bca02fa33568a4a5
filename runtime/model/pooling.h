// Embeddings: how a sequence's final hidden states (after the output norm, the rows the
// head would multiply) become one vector. The kinds are GGUF's `{arch}.pooling_type`
// values (an embedding model such as Qwen3-Embedding names `last`); a model without the
// key names none, and a caller then chooses one. A reranker names `rank`: one row through
// its classifier — the last for a decoder (Qwen3-Reranker, converted with its "yes" and
// "no" rows of the head as `cls.output`, softmaxed over them), the first ([CLS], <s>) for
// an encoder (bge-reranker: a tanh pooler `cls`, then `cls.output`'s one raw score).
//
//   Pooler pool(Pooling::kMean, hp.n_embd);
//   for each pass: pool.add(position, row);   // rows it asked for (Pooler::wants)
//   std::vector<float> v = pool.finish({.normalize = true, .dimensions = 256});
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

enum class Pooling : int32_t {
  kUnspecified = -1, // GGUF's "unspecified": the caller's choice
  kNone = 0,         // every token's row
  kMean = 1,
  kCls = 2,  // the first token's row
  kLast = 3, // the last token's row (decoder-only embedding models)
  kRank = 4, // one token's row through the model's classifier (rerankers; Classifier)
};

const char* pooling_name(Pooling p); // "none", "mean", "cls", "last", "rank", "unspecified"
// "none", "mean", "cls", "last", "rank"; kInvalidArgument naming them otherwise.
Result<Pooling> parse_pooling(std::string_view name);
// GGUF's pooling_type values 0..4 (and -1); kInvalidFormat for others.
Result<Pooling> pooling_from_gguf(int64_t value);
// Whether only one row is read (kLast, kRank): the others need not be computed, so a
// prompt's start may come from the prefix cache. (An encoder's kRank reads its first row,
// but an encoder shares no prompt start: its keys depend on the tokens after them.)
inline bool pools_one_row(Pooling p) { return p == Pooling::kLast || p == Pooling::kRank; }

// A reranker's classification head (GGUF's cls.output.weight, optional cls.output.bias):
// one row of n_embd per label, in `{arch}.classifier.output_labels` order ("yes", "no"
// for Qwen3-Reranker). An encoder's (RoBERTa's and BERT's sequence classification) has
// a pooler before it: cls.weight (n_embd x n_embd) and cls.bias, then tanh.
struct Classifier {
  int64_t n_embd = 0;
  std::vector<float> weight; // labels x n_embd
  std::vector<float> bias;   // labels, or empty
  std::vector<float> pooler; // n_embd x n_embd, or empty
  std::vector<float> pooler_bias; // n_embd, or empty
  std::vector<std::string> labels;
  // It reads the first token's row ([CLS]: encoders), not the last (decoders).
  bool first_row = false;
  int64_t n_labels() const { return n_embd > 0 ? static_cast<int64_t>(weight.size()) / n_embd : 0; }
  // The row's score per label: W tanh(P row + p) + b (W row + b without a pooler),
  // softmaxed when there are several labels (so the first label's is the relevance,
  // 0..1), the raw value when one. Summed in float64.
  std::vector<float> scores(std::span<const float> row) const;
};

// sentence-transformers' Dense modules after the pooling (EmbeddingGemma: 768 -> 3072 ->
// 768, no activation), as llama.cpp converts them (--sentence-transformers-dense-modules):
// dense_2.weight (+ an optional dense_2.bias), then dense_3.weight. They act on the pooled
// vector (mean, cls, last) before it is cut and normalized, not on every row (pooling none
// returns the transformer's rows, as sentence-transformers' token embeddings).
struct EmbeddingProjection {
  int64_t n_embd = 0, n_mid = 0;
  std::vector<float> dense2;      // n_mid x n_embd
  std::vector<float> dense2_bias; // n_mid, or empty
  std::vector<float> dense3;      // n_embd x n_mid, or empty (dense_2 alone, n_mid = n_embd)
  // The pooled vector through both, in float64.
  std::vector<double> apply(std::span<const double> pooled) const;
};

// Whether a tensor is one of those read on the host after pooling (cls.*: a reranker's
// head; dense_2.*, dense_3.*: the Dense modules): bound by classifier_weights.cpp, never
// placed by the planner, which leaves them out of every sub-layer.
bool is_post_pooling_tensor(std::string_view name);

struct EmbeddingOptions {
  bool normalize = true;  // to unit Euclidean length (OpenAI's embeddings are)
  int64_t dimensions = 0; // keep the first this many values (Matryoshka models), before
                          // normalizing; 0: all
  // kRank: the model's head, which turns the pooled row into scores (neither normalized
  // nor cut); it outlives the request.
  const Classifier* classifier = nullptr;
  // The model's Dense modules after pooling (mean, cls, last), or null; it outlives the
  // request.
  const EmbeddingProjection* projection = nullptr;
};

// Checks the options against a model's width: dimensions within 0..n_embd.
Status check_embedding_options(const EmbeddingOptions& o, int64_t n_embd);

// Pools a sequence's rows as they come, in passes, in position order.
class Pooler {
public:
  // `pooling` must be one of kNone, kMean, kCls, kLast, kRank; `n_tokens` the sequence's
  // length; `o` the request's options (kRank: its classifier says which row it reads).
  Pooler(Pooling pooling, int64_t n_embd, int64_t n_tokens, const EmbeddingOptions& o);
  // Whether the row of `position` takes part (the engine computes only those).
  bool wants(int64_t position) const;
  void add(int64_t position, std::span<const float> row);
  // The pooled vector (kNone: every row, one after another), each row normalized and cut
  // as the options say; kRank: the classifier's scores (an empty vector without one). Rows are
  // summed in float64, so the mean does not depend on how the sequence was split into passes.
  std::vector<float> finish(const EmbeddingOptions& o) const;
  int64_t n_embd() const { return n_embd_; }

private:
  Pooling pooling_;
  int64_t n_embd_, n_tokens_;
  int64_t rank_row_;        // kRank: the position the classifier reads
  std::vector<double> sum_; // kMean, kCls, kLast: one row
  std::vector<float> rows_; // kNone: every row
};

// `v` (rows of n_embd) with each row cut to o.dimensions and normalized as o says.
std::vector<float> shape_embedding(std::span<const float> v, int64_t n_embd,
                                   const EmbeddingOptions& o);

} // namespace pshard
