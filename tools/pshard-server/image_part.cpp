#include "tools/pshard-server/image_part.h"

#include "tools/pshard-server/base64.h"

namespace pshard::server {
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
