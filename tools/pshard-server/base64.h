// Base64 (RFC 4648, standard alphabet, '=' padding) for image data URLs in requests and
// OpenAI's encoding_format "base64" embeddings in answers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard::server {

// Padding optional; nullopt for a character outside the alphabet or a length no bytes give.
std::optional<std::vector<uint8_t>> decode_base64(std::string_view text);
std::string encode_base64(std::span<const uint8_t> bytes);

} // namespace pshard::server
