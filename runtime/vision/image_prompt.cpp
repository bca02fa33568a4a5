#include "runtime/vision/image_prompt.h"

#include "runtime/model/mrope_positions.h"

#include <algorithm>

namespace pshard {
namespace {

std::vector<ImageEmbeddings> one(ImageEmbeddings image) {
  std::vector<ImageEmbeddings> v;
  v.push_back(std::move(image));
  return v;
}

} // namespace

Status check_image_prompt_model(const ModelHParams& hp) {
  if (!hp.family->rope_sections && !(hp.family->interleaved_mrope && hp.rope_sections[0] > 0))
    return invalid_argument("the language model is a " + std::string(hp.family->name) +
                            " model; images go with Qwen-VL language models (qwen2vl, qwen3vl, "
                            "qwen3vlmoe, qwen35, qwen35moe: multimodal RoPE) and their projector");
  return Status::ok_status();
}

ImagePromptDecoder::ImagePromptDecoder(MultimodalDecoder& session,
                                       std::vector<ImageEmbeddings> images,
                                       std::vector<int64_t> image_pos)
    : session_(session), images_(std::move(images)) {
  for (size_t i = 0; i < images_.size(); ++i) {
    const ImageEmbeddings& e = images_[i];
    spans_.push_back(ImageSpan{i < image_pos.size() ? image_pos[i] : 0, e.tokens_x, e.tokens_y});
    tables_.push_back(MatrixView{TensorType::kF32, reinterpret_cast<const uint8_t*>(e.data.data()),
                                 e.n_tokens(), e.n_embd,
                                 static_cast<size_t>(e.n_embd) * sizeof(float)});
  }
}

ImagePromptDecoder::ImagePromptDecoder(MultimodalDecoder& session, ImageEmbeddings image,
                                       int64_t image_pos)
    : ImagePromptDecoder(session, one(std::move(image)), {image_pos}) {}

Result<std::span<const float>> ImagePromptDecoder::decode(std::span<const TokenId> tokens) {
  // Split the call at the images' edges; the last run's logits are the call's.
  const int64_t start = session_.n_past(), end = start + static_cast<int64_t>(tokens.size());
  Result<std::span<const float>> logits = invalid_argument("decode needs at least one token");
  for (int64_t at = start; at < end;) {
    int64_t edge = end; // the next image edge after `at`, or the call's end
    for (const ImageSpan& s : spans_)
      for (int64_t e : {s.begin, s.end()})
        if (e > at && e < edge)
          edge = e;
    logits = decode_run(
        tokens.subspan(static_cast<size_t>(at - start), static_cast<size_t>(edge - at)), at);
    if (!logits.ok())
      return logits;
    at = edge;
  }
  return logits;
}

Result<std::span<const float>> ImagePromptDecoder::decode_run(std::span<const TokenId> tokens,
                                                              int64_t slot0) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (spans_.empty() || slot0 < spans_.front().begin)
    return session_.decode(tokens); // before the first image: positions are the slots
  positions_.resize(static_cast<size_t>(3 * n));
  for (int64_t t = 0; t < n; ++t) {
    const std::array<int32_t, 3> p = mrope_position(spans_, slot0 + t);
    std::copy(p.begin(), p.end(), positions_.begin() + 3 * t);
  }
  const int64_t i = image_at(spans_, slot0);
  if (i < 0)
    return session_.decode(tokens, DecodeExtras{nullptr, positions_});
  const ImageEmbeddings& image = images_[static_cast<size_t>(i)];
  rows_.resize(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t)
    rows_[static_cast<size_t>(t)] =
        static_cast<TokenId>(slot0 - spans_[static_cast<size_t>(i)].begin + t);
  const DeepstackTable deepstack{image.deepstack.data(), image.n_deepstack,
                                 image.n_tokens() * image.n_embd};
  return session_.decode(rows_,
                         DecodeExtras{&tables_[static_cast<size_t>(i)], positions_, deepstack});
}

} // namespace pshard
