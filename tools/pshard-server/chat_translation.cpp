#include "tools/pshard-server/chat_translation.h"

namespace pshard::server {

std::variant<nlohmann::ordered_json, ApiError> chat_tools(const nlohmann::ordered_json& tools,
                                                          const ToolEntryReader& entry) {
  if (!tools.is_array())
    return bad_request("'tools' must be an array", "tools", "invalid_type");
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (size_t i = 0; i < tools.size(); ++i) {
    auto f = entry(tools[i], "tools[" + std::to_string(i) + "]");
    if (auto* e = std::get_if<ApiError>(&f))
      return *e;
    out.push_back({{"type", "function"}, {"function", std::get<nlohmann::ordered_json>(f)}});
  }
  return out;
}

} // namespace pshard::server
