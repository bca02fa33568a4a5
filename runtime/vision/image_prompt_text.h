// Where an image goes in a prompt's text, and the prompt's token ids around it: the
// places a prompt names for an image are llama.cpp's media marker "<__media__>" (the
// image is wrapped in <|vision_start|> ... <|vision_end|> there) and a
// "<|vision_start|>...<|vision_end|>" span, as Qwen2-VL's chat template writes
// "<|vision_start|><|image_pad|><|vision_end|>" (what is between the two is replaced).
// A prompt holds any number of images, the i-th image at its i-th place.
//
//   PSHARD_ASSIGN_OR_RETURN(ImagePromptText text, split_image_prompt(prompt, images.size()));
//   ImagePromptIds p = tokenize_image_prompt(tokenizer, text, {n_tokens0, n_tokens1}, true, true);
//   ImagePromptDecoder decoder(session, std::move(images), p.image_pos);
//   generate(decoder, tokenizer, sampler, p.ids, params);
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/tokenizer.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

inline constexpr std::string_view kImageMarker = "<__media__>";
inline constexpr std::string_view kVisionStart = "<|vision_start|>", kVisionEnd = "<|vision_end|>";

// The image places in `prompt`: each marker and each start...end span.
int64_t count_image_places(std::string_view prompt);

// The text around the images, their wrapping included: n_images + 1 pieces, image i
// between pieces[i] (which ends with <|vision_start|>) and pieces[i + 1] (which begins
// with <|vision_end|>).
struct ImagePromptText {
  std::vector<std::string> pieces;
  int64_t n_images() const { return static_cast<int64_t>(pieces.size()) - 1; }
};

// kInvalidArgument unless the prompt names exactly one place for each image: places
// without an image, images without a place.
Result<ImagePromptText> split_image_prompt(std::string_view prompt, int64_t n_images);
// The prompt with the images before it, in order (llama-mtmd-cli given images and no place).
ImagePromptText images_before(std::string_view prompt, int64_t n_images);

// The prompt's ids with one placeholder id (0) per image token: image i's
// n_image_tokens[i] at [image_pos[i], image_pos[i] + n_image_tokens[i]).
struct ImagePromptIds {
  std::vector<TokenId> ids;
  std::vector<int64_t> image_pos;
};
// n_image_tokens holds text.n_images() counts.
ImagePromptIds tokenize_image_prompt(const Tokenizer& tokenizer, const ImagePromptText& text,
                                     std::span<const int64_t> n_image_tokens, bool add_bos,
                                     bool parse_special);

} // namespace pshard
