#include "tools/pshard-server/image_part.h"

#include <array>

namespace pshard::server {
namespace {

// 0-63 for the alphabet, -1 for anything else.
constexpr std::array<int8_t, 256> base64_values() {
  std::array<int8_t, 256> v{};
  v.fill(-1);
  constexpr std::string_view alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < alphabet.size(); ++i)
    v[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return v;
}

} // namespace

std::optional<std::vector<uint8_t>> decode_base64(std::string_view text) {
  static constexpr std::array<int8_t, 256> kValues = base64_values();
  while (!text.empty() && text.back() == '=')
    text.remove_suffix(1);
  if (text.size() % 4 == 1)
    return std::nullopt; // one leftover character carries no whole byte
  std::vector<uint8_t> out;
  out.reserve(text.size() * 3 / 4);
  uint32_t bits = 0;
  int n_bits = 0;
  for (char c : text) {
    const int8_t v = kValues[static_cast<uint8_t>(c)];
    if (v < 0)
      return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(v);
    n_bits += 6;
    if (n_bits >= 8) {
      n_bits -= 8;
      out.push_back(static_cast<uint8_t>(bits >> n_bits));
    }
  }
  return out;
}

std::variant<ImageHandle, ApiError> read_image_part(const nlohmann::json& part,
                                                    const std::string& param) {
  const std::string url_param = param + ".image_url.url";
  auto it = part.find("image_url");
  const nlohmann::json* url = nullptr;
  if (it != part.end() && it->is_object() && it->contains("url") && (*it)["url"].is_string())
    url = &(*it)["url"];
  else if (it != part.end() && it->is_string()) // the older shorthand: the URL itself
    url = &*it;
  if (!url)
    return bad_request("'" + param + "' must be {\"type\": \"image_url\", \"image_url\": " +
                           "{\"url\": \"data:image/png;base64,...\"}}",
                       url_param, "invalid_type");
  const std::string& u = url->get_ref<const std::string&>();
  if (u.rfind("http://", 0) == 0 || u.rfind("https://", 0) == 0)
    return bad_request("'" + url_param + "' is an http(s) URL; only data URLs " +
                           "(data:image/png;base64,...) are accepted, because pshard-server " +
                           "does not fetch anything",
                       url_param, "invalid_image_url");
  const size_t comma = u.find(',');
  if (u.rfind("data:", 0) != 0 || comma == std::string::npos ||
      std::string_view(u).substr(0, comma).ends_with(";base64") == false)
    return bad_request("'" + url_param + "' must be a base64 data URL, " +
                           "data:image/png;base64,... (or image/jpeg)",
                       url_param, "invalid_image_url");
  auto bytes = decode_base64(std::string_view(u).substr(comma + 1));
  if (!bytes)
    return bad_request("'" + url_param + "' is not valid base64 after 'base64,'", url_param,
                       "invalid_base64");
  pshard_image* image = nullptr;
  if (pshard_image_from_bytes(bytes->data(), bytes->size(), &image) != PSHARD_OK)
    return bad_request("'" + url_param + "' is not an image pshard reads: " + pshard_last_error(),
                       url_param, "invalid_image");
  return ImageHandle(image);
}

} // namespace pshard::server
