// The templates by name, the checks every rendering shares, and the model's template.
#include "runtime/chat/chat_format.h"
#include "runtime/gguf/gguf_file.h"

#include <algorithm>

namespace pshard {
namespace {

// Sorted by name.
constexpr const ChatTemplate* kAll[] = {
    &kBailing,
    &kBailingThink,
    &kBailing2,
    &kChatglm4,
    &kChatml,
    &kChatmlThinking,
    &kCommandR,
    &kDeepseek,
    &kDeepseek2,
    &kDeepseek3,
    &kDeepseek3Thinking,
    &kDots1,
    &kErnie45,
    &kExaone3,
    &kFalcon3,
    &kGemma,
    &kGlm45,
    &kGptOss,
    &kGranite,
    &kKimiK2,
    &kLlama2,
    &kLlama2Sys,
    &kLlama2SysBos,
    &kLlama2SysStrip,
    &kLlama3,
    &kLlama4,
    &kMistralV1,
    &kMistralV3,
    &kMistralV3Tekken,
    &kMistralV7,
    &kMistralV7Tekken,
    &kOpenchat,
    &kPhi3,
    &kPhi4,
    &kQwen3Coder,
    &kQwen35,
    &kSmolvlm,
    &kVicuna,
    &kVicunaOrca,
    &kZephyr,
};

constexpr const char* kTemplateKey = "tokenizer.chat_template";

bool is_known_role(std::string_view role) {
  return role == "system" || role == "user" || role == "assistant";
}

} // namespace

Result<std::string> ChatTemplate::apply(std::span<const ChatMessage> messages,
                                        bool add_assistant) const {
  for (size_t i = 0; i < messages.size(); ++i) {
    const std::string& role = messages[i].role;
    if (role.empty())
      return invalid_argument("chat message " + std::to_string(i) +
                              " has no role; give system, user or assistant");
    if (!any_role_ && !is_known_role(role) &&
        std::find(text_roles_.begin(), text_roles_.end(), role) == text_roles_.end())
      return invalid_argument("chat message " + std::to_string(i) + " has role '" + role +
                              "', which the " + std::string(name_) +
                              " template does not have; use system, user or assistant");
  }
  std::string out;
  render_(*this, messages, add_assistant, out);
  return out;
}

std::span<const ChatTemplate* const> chat_templates() { return kAll; }

std::string chat_template_list() {
  std::string out;
  for (const ChatTemplate* t : chat_templates())
    out += (out.empty() ? "" : ", ") + std::string(t->name());
  return out;
}

Result<const ChatTemplate*> find_chat_template(std::string_view name) {
  for (const ChatTemplate* t : chat_templates())
    if (t->name() == name)
      return t;
  return not_found("unknown chat template '" + std::string(name) +
                   "' (--chat-template); known: " + chat_template_list());
}

Result<const ChatTemplate*> model_chat_template(const gguf::GgufFile& file, std::string_view name) {
  if (!name.empty())
    return find_chat_template(name);
  const gguf::Value* value = file.find(kTemplateKey);
  if (value == nullptr)
    return not_found("the model has no chat template (no " + std::string(kTemplateKey) + " in '" +
                     file.path() +
                     "'); choose one with --chat-template NAME: " + chat_template_list());
  PSHARD_ASSIGN_OR_RETURN(std::string jinja, file.get_string(kTemplateKey));
  auto detected = detect_chat_template(jinja);
  if (!detected.ok())
    return detected.status().with_context("the model's " + std::string(kTemplateKey));
  return detected;
}

} // namespace pshard
