#include "runtime/model/pooling.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace pshard {

const char* pooling_name(Pooling p) {
  switch (p) {
  case Pooling::kNone:
    return "none";
  case Pooling::kMean:
    return "mean";
  case Pooling::kCls:
    return "cls";
  case Pooling::kLast:
    return "last";
  case Pooling::kRank:
    return "rank";
  case Pooling::kUnspecified:
    break;
  }
  return "unspecified";
}

Result<Pooling> parse_pooling(std::string_view name) {
  for (Pooling p : {Pooling::kNone, Pooling::kMean, Pooling::kCls, Pooling::kLast, Pooling::kRank})
    if (name == pooling_name(p))
      return p;
  return invalid_argument("unknown pooling '" + std::string(name) +
                          "'; use mean, cls, last, rank or none");
}

Result<Pooling> pooling_from_gguf(int64_t value) {
  if (value >= -1 && value <= 4)
    return static_cast<Pooling>(value);
  return invalid_format("pooling_type " + std::to_string(value) +
                        " is not one of GGUF's values (-1 to 4)");
}

bool is_post_pooling_tensor(std::string_view name) {
  for (std::string_view t : {"cls.weight", "cls.bias", "cls.output.weight", "cls.output.bias",
                             "dense_2.weight", "dense_2.bias", "dense_3.weight"})
    if (name == t)
      return true;
  return false;
}

Status check_embedding_options(const EmbeddingOptions& o, int64_t n_embd) {
  if (o.dimensions < 0 || o.dimensions > n_embd)
    return invalid_argument("dimensions " + std::to_string(o.dimensions) + " is outside 1.." +
                            std::to_string(n_embd) + " (the model's embedding width)");
  return Status::ok_status();
}

Pooler::Pooler(Pooling pooling, int64_t n_embd, int64_t n_tokens, const EmbeddingOptions& o)
    : pooling_(pooling), n_embd_(n_embd), n_tokens_(n_tokens),
      rank_row_(o.classifier && o.classifier->first_row ? 0 : n_tokens - 1) {
  if (pooling_ == Pooling::kNone)
    rows_.assign(static_cast<size_t>(n_embd * n_tokens), 0.0f);
  else
    sum_.assign(static_cast<size_t>(n_embd), 0.0);
}

bool Pooler::wants(int64_t position) const {
  if (pooling_ == Pooling::kRank)
    return position == rank_row_;
  if (pooling_ == Pooling::kLast)
    return position == n_tokens_ - 1;
  return pooling_ != Pooling::kCls || position == 0;
}

void Pooler::add(int64_t position, std::span<const float> row) {
  if (!wants(position) || position < 0 || position >= n_tokens_)
    return;
  if (pooling_ == Pooling::kNone) {
    std::copy(row.begin(), row.end(), rows_.begin() + position * n_embd_);
    return;
  }
  for (size_t i = 0; i < sum_.size(); ++i)
    sum_[i] += row[i];
}

std::vector<float> Pooler::finish(const EmbeddingOptions& o) const {
  if (pooling_ == Pooling::kNone)
    return shape_embedding(rows_, n_embd_, o);
  const double scale = pooling_ == Pooling::kMean ? 1.0 / static_cast<double>(n_tokens_) : 1.0;
  std::vector<double> pooled(sum_.size());
  for (size_t i = 0; i < sum_.size(); ++i)
    pooled[i] = sum_[i] * scale;
  if (o.projection && pooling_ != Pooling::kRank)
    pooled = o.projection->apply(pooled);
  std::vector<float> row(pooled.begin(), pooled.end());
  if (pooling_ == Pooling::kRank)
    return o.classifier ? o.classifier->scores(row) : std::vector<float>();
  return shape_embedding(row, n_embd_, o);
}

namespace {

// out[r] = W[r] . x + b[r] for the rows of W (rows x n), in float64.
std::vector<double> affine(std::span<const float> w, std::span<const float> b,
                           std::span<const double> x, int64_t n) {
  const int64_t rows = n > 0 ? static_cast<int64_t>(w.size()) / n : 0;
  std::vector<double> out(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    double sum = b.empty() ? 0.0 : b[static_cast<size_t>(r)];
    const float* wr = w.data() + r * n;
    for (int64_t i = 0; i < n && i < static_cast<int64_t>(x.size()); ++i)
      sum += static_cast<double>(wr[i]) * x[static_cast<size_t>(i)];
    out[static_cast<size_t>(r)] = sum;
  }
  return out;
}

} // namespace

std::vector<double> EmbeddingProjection::apply(std::span<const double> pooled) const {
  std::vector<double> mid = affine(dense2, dense2_bias, pooled, n_embd);
  return dense3.empty() ? mid : affine(dense3, {}, mid, n_mid);
}

std::vector<float> Classifier::scores(std::span<const float> row) const {
  const int64_t n = n_labels();
  std::vector<double> x(row.begin(), row.end());
  if (!pooler.empty()) {
    x = affine(pooler, pooler_bias, x, n_embd);
    for (double& v : x)
      v = std::tanh(v);
  }
  std::vector<double> logits = affine(weight, bias, x, n_embd);
  std::vector<float> out(logits.size());
  if (n == 1) {
    out[0] = static_cast<float>(logits[0]);
    return out;
  }
  const double top = n > 0 ? *std::max_element(logits.begin(), logits.end()) : 0.0;
  double total = 0;
  for (double& x : logits)
    total += x = std::exp(x - top);
  for (size_t l = 0; l < out.size(); ++l)
    out[l] = static_cast<float>(logits[l] / total);
  return out;
}

std::vector<float> shape_embedding(std::span<const float> v, int64_t n_embd,
                                   const EmbeddingOptions& o) {
  const auto width = static_cast<size_t>(n_embd);
  const size_t keep = o.dimensions > 0 ? static_cast<size_t>(o.dimensions) : width;
  std::vector<float> out;
  out.reserve(v.size() / width * keep);
  for (size_t r = 0; r + width <= v.size(); r += width) {
    const auto row = v.subspan(r, keep);
    double norm2 = 0;
    for (float x : row)
      norm2 += static_cast<double>(x) * x;
    // A zero row stays zero rather than becoming NaN.
    const double scale = o.normalize && norm2 > 0 ? 1.0 / std::sqrt(norm2) : 1.0;
    for (float x : row)
      out.push_back(static_cast<float>(x * scale));
  }
  return out;
}

} // namespace pshard
