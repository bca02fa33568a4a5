// What follows pooling, from the file. sentence-transformers' Dense modules (pooling.h's
// EmbeddingProjection): dense_2.weight [n_embd, mid] (+ dense_2.bias), dense_3.weight
// [mid, n_embd], converted to floats on the host (EmbeddingGemma's: 4.7M values, run once
// per text). A reranker's classification head (pooling.h's Classifier): cls.output.weight
// (one row per label; F32, F16 or any quantized type, converted to floats — a few rows),
// the optional cls.output.bias and the labels `{arch}.classifier.output_labels`; an
// encoder's pooler before it (cls.weight, n_embd x n_embd, and cls.bias). Bound
// through the model's TensorBinder, so a file with the head is not refused as carrying a
// stray tensor, and one that names pooling_type rank without it is refused at load.
#include "runtime/model/classifier_weights.h"

#include "runtime/kernels/quantize.h"

namespace pshard {
namespace {

// A few rows of any type as floats (the head is small; it runs on the host).
void dequantize_rows(const MatrixView& m, int64_t rows, int64_t n, std::vector<float>& out) {
  out.resize(static_cast<size_t>(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    dequantize_row(m.type, m.data + static_cast<size_t>(r) * m.row_bytes, out.data() + r * n, n);
}

} // namespace

Result<std::shared_ptr<const EmbeddingProjection>>
bind_embedding_projection(const gguf::GgufFile& file, const ModelHParams& hp, TensorBinder& b) {
  const gguf::TensorInfo* d2 = file.find_tensor("dense_2.weight");
  const gguf::TensorInfo* d3 = file.find_tensor("dense_3.weight");
  if (!d2) {
    if (d3)
      return invalid_format("the model has dense_3.weight but not dense_2.weight, the Dense "
                            "module before it; convert it again");
    return std::shared_ptr<const EmbeddingProjection>();
  }
  const int64_t mid = d2->dims.size() == 2 ? d2->dims[1] : 0;
  if (d2->dims.size() != 2 || d2->dims[0] != hp.n_embd || mid < 1 || mid > (int64_t{1} << 20))
    return invalid_format("dense_2.weight has shape " + dims_text(d2->dims) +
                          "; the Dense "
                          "module after pooling is [n_embd " +
                          std::to_string(hp.n_embd) + ", its width]");
  if (!d3 && mid != hp.n_embd)
    return invalid_format("dense_2.weight maps the pooled " + std::to_string(hp.n_embd) +
                          " values to " + std::to_string(mid) +
                          " and no dense_3.weight maps "
                          "them back; pshard's embeddings are n_embd wide");
  auto p = std::make_shared<EmbeddingProjection>();
  p->n_embd = hp.n_embd;
  p->n_mid = mid;
  PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, b.find("dense_2.weight", {hp.n_embd, mid}));
  dequantize_rows(b.matrix(*t), mid, hp.n_embd, p->dense2);
  PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* bias,
                          b.find("dense_2.bias", {mid}, /*required=*/false));
  if (bias) {
    const VectorWeight v = b.vector(*bias);
    p->dense2_bias.assign(v.data, v.data + mid);
  }
  if (d3) {
    PSHARD_ASSIGN_OR_RETURN(t, b.find("dense_3.weight", {mid, hp.n_embd}));
    dequantize_rows(b.matrix(*t), hp.n_embd, mid, p->dense3);
  }
  return std::shared_ptr<const EmbeddingProjection>(std::move(p));
}

Result<std::shared_ptr<const Classifier>> bind_classifier(const gguf::GgufFile& file,
                                                          const ModelHParams& hp, TensorBinder& b) {
  const gguf::TensorInfo* info = file.find_tensor("cls.output.weight");
  if (!info) {
    if (file.find_tensor("cls.weight"))
      return invalid_format("the model has a classification head's pooler (cls.weight) but not "
                            "its output (cls.output.weight); convert it again with a "
                            "reranker-aware converter");
    if (hp.pooling == Pooling::kRank)
      return invalid_format("the model's pooling_type is rank (a reranker) but it has no "
                            "classification head (cls.output.weight); convert it again with a "
                            "reranker-aware converter, or use it for embeddings with --pooling "
                            "last");
    return std::shared_ptr<const Classifier>();
  }
  const int64_t n_labels = info->dims.size() == 2 ? info->dims[1] : 0;
  if (n_labels < 1 || n_labels > 1024)
    return invalid_format("cls.output.weight has shape " + dims_text(info->dims) +
                          "; a classification head is [n_embd, labels] with 1 to 1024 labels");
  PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* t,
                          b.find("cls.output.weight", {hp.n_embd, n_labels}));
  auto c = std::make_shared<Classifier>();
  c->n_embd = hp.n_embd;
  c->weight.resize(static_cast<size_t>(n_labels * hp.n_embd));
  dequantize_rows(b.matrix(*t), n_labels, hp.n_embd, c->weight);
  PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* bias,
                          b.find("cls.output.bias", {n_labels}, /*required=*/false));
  if (bias) {
    const VectorWeight v = b.vector(*bias);
    c->bias.assign(v.data, v.data + n_labels);
  }
  // RoBERTa's and BERT's sequence classification: a dense layer and tanh on the first
  // token's row before the labels' rows.
  PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* pooler,
                          b.find("cls.weight", {hp.n_embd, hp.n_embd}, /*required=*/false));
  if (pooler) {
    dequantize_rows(b.matrix(*pooler), hp.n_embd, hp.n_embd, c->pooler);
    PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* pooler_bias,
                            b.find("cls.bias", {hp.n_embd}, /*required=*/false));
    if (pooler_bias) {
      const VectorWeight v = b.vector(*pooler_bias);
      c->pooler_bias.assign(v.data, v.data + hp.n_embd);
    }
  }
  c->first_row = !hp.causal; // an encoder's [CLS] sees the whole text; a decoder's last row does
  const std::string key = std::string(hp.family->name) + ".classifier.output_labels";
  if (file.find(key)) {
    PSHARD_ASSIGN_OR_RETURN(const gguf::Array* labels, file.get_array(key));
    for (const gguf::Value& v : labels->items)
      if (const auto* s = std::get_if<std::string>(&v.v))
        c->labels.push_back(*s);
    if (c->labels.size() != static_cast<size_t>(n_labels))
      return invalid_format(key + " names " + std::to_string(c->labels.size()) +
                            " labels, the classification head has " + std::to_string(n_labels));
  }
  return std::shared_ptr<const Classifier>(std::move(c));
}

} // namespace pshard
