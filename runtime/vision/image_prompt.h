// An image inside a prompt of an M-RoPE language model (qwen2vl), as a Decoder the
// generation loop drives like any session. The prompt handed to decode() holds one
// placeholder id per image token at [image_pos, image_pos + n); those positions are fed
// the image's embeddings instead of token embeddings, and every position gets its
// multimodal rotary positions:
//
//   text before the image   t = h = w = position                  (plain NeoX RoPE)
//   image token (y, x)      t = image_pos, h = image_pos + y, w = image_pos + x
//   text after the image    t = h = w = position - n + max(tokens_x, tokens_y)
//
// so the text after an image continues one past the image's largest coordinate, as
// Qwen2-VL was trained (and llama.cpp's mtmd does). KV-cache slots and causal order stay
// sequential: the image's tokens see each other in raster order.
//
//   ImagePromptDecoder d(*session, std::move(embeddings), image_pos);
//   PSHARD_RETURN_IF_ERROR(check_image_prompt_model(model.hparams()));
//   generate(d, tokenizer, sampler, prompt_with_placeholders, params);
#pragma once

#include "runtime/model/model.h"
#include "runtime/vision/vision_encoder.h"

#include <cstdint>
#include <vector>

namespace pshard {

// A language model an image can be placed in: M-RoPE (the qwen2vl family).
Status check_image_prompt_model(const ModelHParams& hp);

class ImagePromptDecoder final : public Decoder {
public:
  ImagePromptDecoder(MultimodalDecoder& session, ImageEmbeddings image, int64_t image_pos);

  Result<std::span<const float>> decode(std::span<const TokenId> tokens) override;
  int64_t n_past() const override { return session_.n_past(); }
  int64_t n_ctx() const override { return session_.n_ctx(); }

  int64_t image_begin() const { return image_pos_; }
  int64_t image_end() const { return image_pos_ + image_.n_tokens(); }

private:
  // Decodes tokens [begin, end) of the call, all on one side of the image or all of it.
  Result<std::span<const float>> decode_run(std::span<const TokenId> tokens, int64_t slot0);

  MultimodalDecoder& session_;
  ImageEmbeddings image_;
  MatrixView table_; // image_.data as embedding rows
  int64_t image_pos_;
  std::vector<TokenId> rows_;
  std::vector<int32_t> positions_;
};

} // namespace pshard
