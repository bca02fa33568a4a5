// A chat request's reasoning choices (reasoning.h): reasoning_format, enable_thinking, and
// a grammar moved after the thought.
#include "tools/pshard-server/reasoning.h"

#include "tools/pshard-server/tool_calls.h"

#include <algorithm>
#include <iterator>

namespace pshard::server {

FieldError read_reasoning_options(const nlohmann::json& body, ReasoningFormat server_default,
                                  ReasoningOptions& out) {
  out = ReasoningOptions{};
  out.format = server_default;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "reasoning_effort", out.effort));
  if (!out.effort.empty() && std::find(std::begin(kReasoningEfforts), std::end(kReasoningEfforts),
                                       out.effort) == std::end(kReasoningEfforts))
    return bad_request("'reasoning_effort' must be \"minimal\", \"low\", \"medium\" or "
                       "\"high\", got \"" +
                           out.effort + "\"",
                       "reasoning_effort", "invalid_value");
  std::string name;
  PSHARD_RETURN_IF_FIELD_ERROR(read_field(body, "reasoning_format", name));
  if (!name.empty()) {
    const std::optional<ReasoningFormat> f = parse_reasoning_format(name);
    if (!f)
      return bad_request("'reasoning_format' must be \"none\", \"deepseek\" or \"auto\", got \"" +
                             name + "\"",
                         "reasoning_format", "invalid_value");
    out.format = *f;
  }
  auto it = body.find("chat_template_kwargs");
  if (it == body.end() || it->is_null())
    return std::nullopt;
  if (!it->is_object())
    return bad_request("'chat_template_kwargs' must be an object", "chat_template_kwargs",
                       "invalid_type");
  for (const auto& [key, value] : it->items())
    if (key != "enable_thinking")
      return ApiError{400, "invalid_request_error",
                      "'chat_template_kwargs." + key +
                          "' is not supported: pshard renders chat templates natively and "
                          "reads only enable_thinking",
                      "chat_template_kwargs." + key, "unsupported_parameter"};
  FieldError e = read_field(*it, "enable_thinking", out.enable_thinking);
  if (e)
    e->param = "chat_template_kwargs.enable_thinking";
  return e;
}

void set_reasoning_effort(std::string& prompt, std::string_view effort) {
  constexpr std::string_view kDefault = "\nReasoning: medium\n";
  const size_t at = prompt.find(kDefault);
  if (effort.empty() || at == std::string::npos)
    return;
  const std::string level = effort == "minimal" ? "low" : std::string(effort);
  prompt.replace(at, kDefault.size(), "\nReasoning: " + level + "\n");
}

std::string grammar_after_thought(const std::string& gbnf, const ThoughtTags& tags) {
  return rename_rule(gbnf, "root", "answer-root") + "\nroot ::= \"" + std::string(tags.close) +
         "\" [ \\t\\n]{0,8} answer-root\n";
}

} // namespace pshard::server
