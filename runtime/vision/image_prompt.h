// Images inside a prompt of an M-RoPE language model (qwen2vl), as a Decoder the
// generation loop drives like any session. The prompt handed to decode() holds one
// placeholder id per image token, image i's at [image_pos[i], image_pos[i] + n_i); those
// positions are fed the image's embeddings instead of token embeddings, and every position
// from the first image on gets its multimodal rotary positions (runtime/model/
// mrope_positions.h): an image token (y, x) at (p, p + y, p + x), and what follows an image
// continuing one past its largest coordinate, as Qwen2-VL was trained (and llama.cpp's
// mtmd does). KV-cache slots and causal order stay sequential: the image's tokens see each
// other in raster order. A call may hold any part of the prompt; it is decoded in runs cut
// at each image's edges.
//
//   ImagePromptDecoder d(*session, std::move(embeddings), image_pos);   // vectors, or one
//   PSHARD_RETURN_IF_ERROR(check_image_prompt_model(model.hparams()));
//   generate(d, tokenizer, sampler, prompt_with_placeholders, params);
#pragma once

#include "runtime/model/model.h"
#include "runtime/model/mrope_positions.h"
#include "runtime/vision/vision_encoder.h"

#include <cstdint>
#include <vector>

namespace pshard {

// A language model an image can be placed in: M-RoPE (the qwen2vl family).
Status check_image_prompt_model(const ModelHParams& hp);

class ImagePromptDecoder final : public Decoder {
public:
  // images[i] at slots from image_pos[i] on (one position per image), in slot order
  // without overlapping.
  ImagePromptDecoder(MultimodalDecoder& session, std::vector<ImageEmbeddings> images,
                     std::vector<int64_t> image_pos);
  ImagePromptDecoder(MultimodalDecoder& session, ImageEmbeddings image, int64_t image_pos);

  Result<std::span<const float>> decode(std::span<const TokenId> tokens) override;
  int64_t n_past() const override { return session_.n_past(); }
  int64_t n_ctx() const override { return session_.n_ctx(); }

  const std::vector<ImageSpan>& spans() const { return spans_; }

private:
  // Decodes the call's tokens from slot0 on: text only, or one image's tokens only.
  Result<std::span<const float>> decode_run(std::span<const TokenId> tokens, int64_t slot0);

  MultimodalDecoder& session_;
  std::vector<ImageEmbeddings> images_;
  std::vector<ImageSpan> spans_;
  std::vector<MatrixView> tables_; // images_[i].data as embedding rows
  std::vector<TokenId> rows_;
  std::vector<int32_t> positions_;
};

} // namespace pshard
