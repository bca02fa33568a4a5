// An image part of a chat message, OpenAI's
//   {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0..."}}
// read into a decoded image. Only base64 data URLs: the server fetches nothing, so an
// http(s) URL is refused saying so.
//
//   auto image = read_image_part(part, "messages[0].content[1]");   // or the 400 to answer
#pragma once

#include "tools/common/capi_call.h"
#include "tools/pshard-server/api_error.h"

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>
#include <vector>

namespace pshard::server {

// The place Qwen2-VL's chat template writes for an image, where its part was.
inline constexpr std::string_view kImagePlace = "<|vision_start|><|image_pad|><|vision_end|>";


std::variant<ImageHandle, ApiError> read_image_part(const nlohmann::json& part,
                                                    const std::string& param);

} // namespace pshard::server
