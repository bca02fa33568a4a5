#include "runtime/vision/image_prompt.h"

#include "runtime/model/mrope_positions.h"

#include <algorithm>

namespace pshard {

Status check_image_prompt_model(const ModelHParams& hp) {
  if (!hp.family->rope_sections && !(hp.family->interleaved_mrope && hp.rope_sections[0] > 0))
    return invalid_argument("the language model is a " + std::string(hp.family->name) +
                            " model; images go with Qwen-VL language models (qwen2vl, qwen3vl, "
                            "qwen3vlmoe, qwen35, qwen35moe: multimodal RoPE) and their projector");
  return Status::ok_status();
}

ImagePromptDecoder::ImagePromptDecoder(MultimodalDecoder& session, ImageEmbeddings image,
                                       int64_t image_pos)
    : session_(session), image_(std::move(image)), image_pos_(image_pos) {
  table_ = MatrixView{TensorType::kF32, reinterpret_cast<const uint8_t*>(image_.data.data()),
                      image_.n_tokens(), image_.n_embd,
                      static_cast<size_t>(image_.n_embd) * sizeof(float)};
}

Result<std::span<const float>> ImagePromptDecoder::decode(std::span<const TokenId> tokens) {
  // Split the call at the image's edges; the last run's logits are the call's.
  const int64_t start = session_.n_past(), end = start + static_cast<int64_t>(tokens.size());
  Result<std::span<const float>> logits = invalid_argument("decode needs at least one token");
  for (int64_t at = start; at < end;) {
    const int64_t edge = at < image_begin() ? std::min(end, image_begin())
                         : at < image_end() ? std::min(end, image_end())
                                            : end;
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
  if (slot0 < image_begin())
    return session_.decode(tokens); // before the image: positions are the slots
  const ImageSpan span{image_pos_, image_.tokens_x, image_.tokens_y};
  positions_.resize(static_cast<size_t>(3 * n));
  for (int64_t t = 0; t < n; ++t) {
    const std::array<int32_t, 3> p = mrope_position(span, slot0 + t);
    std::copy(p.begin(), p.end(), positions_.begin() + 3 * t);
  }
  if (slot0 >= image_end())
    return session_.decode(tokens, DecodeExtras{nullptr, positions_});
  rows_.resize(static_cast<size_t>(n));
  for (int64_t t = 0; t < n; ++t)
    rows_[static_cast<size_t>(t)] = static_cast<TokenId>(slot0 - image_begin() + t);
  const DeepstackTable deepstack{image_.deepstack.data(), image_.n_deepstack,
                                 image_.n_tokens() * image_.n_embd};
  return session_.decode(rows_, DecodeExtras{&table_, positions_, deepstack});
}

} // namespace pshard
