// pshard-run --mmproj FILE --image FILE [--image FILE ...] (llama-mtmd-cli's flags): a
// prompt with images for a Qwen-VL language model: on the CPU, or with -s under the
// schedule's vision and language plans (image_session.h). The i-th image goes where the
// prompt's i-th place says:
//   - at llama.cpp's media marker "<__media__>", wrapped in <|vision_start|> ... <|vision_end|>;
//   - or inside the prompt's own "<|vision_start|>...<|vision_end|>" span (what is between
//     the two, e.g. <|image_pad|>, is replaced by the image);
//   - with no place in the prompt, every image goes before it, each wrapped.
#pragma once

#include "runtime/core/status.h"
#include "runtime/vision/image_prompt_text.h"
#include "tools/pshard-run/run_options.h"

#include <ostream>
#include <string>

namespace pshard {

// The prompt's text around the images (runtime/vision/image_prompt_text.h), all before the
// prompt when it names no place; places that differ from the images in number are refused.
Result<ImagePromptText> place_images(const std::string& prompt, int64_t n_images);

// Streams the generated text to `out`, timings (and the images' grids) to `err`; with
// o.json one object on `out` instead.
Status run_image_prompt(const RunOptions& o, const std::string& prompt, std::ostream& out,
                        std::ostream& err);

} // namespace pshard
