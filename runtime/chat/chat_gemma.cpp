// Gemma's turns, which have no system role:
//
//   <start_of_turn>user\n{system}\n\n{user}<end_of_turn>\n<start_of_turn>model\n{answer}<end_of_turn>\n
//
// The assistant is called "model". A system message is held back and written at the
// start of the next non-model turn, as llama.cpp does; contents are trimmed.
#include "runtime/chat/chat_format.h"

namespace pshard {
namespace {

void render_gemma(const ChatTemplate&, std::span<const ChatMessage> messages, bool add_assistant,
                  std::string& out) {
  std::string system;
  for (const ChatMessage& m : messages) {
    if (m.role == "system") {
      system += trim(m.content);
      continue;
    }
    const std::string_view role = m.role == "assistant" ? "model" : std::string_view(m.role);
    out += "<start_of_turn>";
    out += role;
    out += "\n";
    if (!system.empty() && role != "model") {
      out += system;
      out += "\n\n";
      system.clear();
    }
    out += trim(m.content);
    out += "<end_of_turn>\n";
  }
  if (add_assistant)
    out += "<start_of_turn>model\n";
}

} // namespace

constinit const ChatTemplate kGemma("gemma", "Gemma, Gemma 2, Gemma 3", render_gemma, true);

} // namespace pshard
