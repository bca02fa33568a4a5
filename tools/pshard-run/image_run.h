// pshard-run --mmproj FILE --image FILE (llama-mtmd-cli's flags): a prompt with one image
// for a Qwen-VL language model: on the CPU, or with -s under the schedule's vision and
// language plans (image_session.h). The image goes where the prompt says:
//   - at llama.cpp's media marker "<__media__>", wrapped in <|vision_start|> ... <|vision_end|>;
//   - else inside the prompt's own "<|vision_start|>...<|vision_end|>" span (what is between
//     the two, e.g. <|image_pad|>, is replaced by the image);
//   - else before the prompt, wrapped, as llama-mtmd-cli places an image it was given
//     without a marker.
#pragma once

#include "runtime/core/status.h"
#include "runtime/vision/image_prompt_text.h"
#include "tools/pshard-run/run_options.h"

#include <ostream>
#include <string>

namespace pshard {

// The prompt's text around the image (runtime/vision/image_prompt_text.h), before the
// prompt when it names no place; more than one place is refused.
Result<ImagePromptText> place_image(const std::string& prompt);

// Streams the generated text to `out`, timings (and the image's grid) to `err`; with
// o.json one object on `out` instead.
Status run_image_prompt(const RunOptions& o, const std::string& prompt, std::ostream& out,
                        std::ostream& err);

} // namespace pshard
