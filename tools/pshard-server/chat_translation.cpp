#include "tools/pshard-server/chat_translation.h"

namespace pshard::server {

FieldError copy_tools(const nlohmann::ordered_json& body, const ToolEntryReader& entry,
                      nlohmann::ordered_json& chat) {
  auto it = body.find("tools");
  if (it == body.end() || it->is_null())
    return std::nullopt;
  if (!it->is_array())
    return bad_request("'tools' must be an array", "tools", "invalid_type");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < it->size(); ++i) {
    auto f = entry((*it)[i], "tools[" + std::to_string(i) + "]");
    if (auto* e = std::get_if<ApiError>(&f))
      return *e;
    out.push_back({{"type", "function"}, {"function", std::get<nlohmann::ordered_json>(f)}});
  }
  chat["tools"] = std::move(out);
  return std::nullopt;
}

void copy_field(const nlohmann::ordered_json& from, const char* key, nlohmann::ordered_json& to,
                const char* as) {
  if (auto it = from.find(key); it != from.end() && !it->is_null())
    to[as] = *it;
}

void copy_fields(const nlohmann::ordered_json& from, nlohmann::ordered_json& to,
                 std::span<const char* const> keys) {
  for (const char* key : keys)
    copy_field(from, key, to, key);
}

} // namespace pshard::server
