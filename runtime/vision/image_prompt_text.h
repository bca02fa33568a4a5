// Where an image goes in a prompt's text, and the prompt's token ids around it: the
// places a prompt names for an image are llama.cpp's media marker "<__media__>" (the
// image is wrapped in <|vision_start|> ... <|vision_end|> there) and a
// "<|vision_start|>...<|vision_end|>" span, as Qwen2-VL's chat template writes
// "<|vision_start|><|image_pad|><|vision_end|>" (what is between the two is replaced).
// One image a prompt for now (ImagePromptDecoder holds one).
//
//   PSHARD_ASSIGN_OR_RETURN(ImagePromptText text, split_image_prompt(prompt, n_images));
//   ImagePromptIds p = tokenize_image_prompt(tokenizer, text, image.n_tokens(), true, true);
//   ImagePromptDecoder decoder(session, std::move(image), p.image_pos);
//   generate(decoder, tokenizer, sampler, p.ids, params);
#pragma once

#include "runtime/core/status.h"
#include "runtime/tokenizer/tokenizer.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

inline constexpr std::string_view kImageMarker = "<__media__>";
inline constexpr std::string_view kVisionStart = "<|vision_start|>", kVisionEnd = "<|vision_end|>";

// The image places in `prompt`: each marker and each start...end span.
int64_t count_image_places(std::string_view prompt);

// The text on either side of the image, its wrapping included: `before` ends with
// <|vision_start|>, `after` begins with <|vision_end|>.
struct ImagePromptText {
  std::string before, after;
};

// kInvalidArgument unless the prompt names exactly one place for its one image: more
// than one image, places without an image, an image without a place.
Result<ImagePromptText> split_image_prompt(std::string_view prompt, int64_t n_images);
// The prompt with the image before it (llama-mtmd-cli given an image and no place).
ImagePromptText image_before(std::string_view prompt);

// The prompt's ids with one placeholder id (0) per image token at [image_pos, +n).
struct ImagePromptIds {
  std::vector<TokenId> ids;
  int64_t image_pos = 0;
};
ImagePromptIds tokenize_image_prompt(const Tokenizer& tokenizer, const ImagePromptText& text,
                                     int64_t n_image_tokens, bool add_bos, bool parse_special);

} // namespace pshard
