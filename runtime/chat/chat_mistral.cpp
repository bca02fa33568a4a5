// Mistral's [INST] formats before v7 (Mistral's tokenization guide names them v1, v3 and
// v3-tekken), as llama.cpp renders them:
//
//   v1         " [INST] {system}\n\n{user} [/INST] {assistant}</s> [INST] {user} [/INST]"
//   v3         "[INST] {system}\n\n{user}[/INST] {assistant}</s>[INST] {user}[/INST]"
//   v3-tekken  "[INST]{system}\n\n{user}[/INST]{assistant}</s>[INST]{user}[/INST]"
//
// There is no system role: a system message opens the [INST] block of the turn it is
// in. v3 trims the assistant's answers. The answer follows [/INST]: no generation
// prompt. (v7 has [SYSTEM_PROMPT] and is a line of the turn table.)
//
// Any other role's text is written as it is between the blocks: the function-calling
// turns ([AVAILABLE_TOOLS]..., [TOOL_RESULTS]...) that pshard-server makes
// (tools/pshard-server/tool_format.h), as Mistral's tool templates place them. An answer
// that is calls ([TOOL_CALLS]...) follows [/INST] without the space v1 and v3 put before
// text.
#include "runtime/chat/chat_format.h"

namespace pshard {
namespace {

struct MistralOptions {
  std::string_view before_inst; // v1: " "
  std::string_view after_inst;  // v1, v3: " "; tekken: none
  bool trim_answers;            // v3
};

void render_mistral(std::span<const ChatMessage> messages, const MistralOptions& o,
                    std::string& out) {
  bool inside_turn = false;
  for (const ChatMessage& m : messages) {
    // An [INST] block opens for a system or user message (an answer after tool results
    // follows them directly).
    const bool opens = m.role == "system" || m.role == "user";
    if (!inside_turn && opens) {
      out += o.before_inst;
      out += "[INST]";
      out += o.after_inst;
      inside_turn = true;
    }
    if (m.role == "system") {
      out += m.content;
      out += "\n\n";
    } else if (m.role == "user") {
      out += m.content;
      out += o.before_inst;
      out += "[/INST]";
    } else if (m.role == "assistant") {
      const std::string_view answer =
          o.trim_answers ? trim(m.content) : std::string_view(m.content);
      if (!answer.starts_with("[TOOL_CALLS]"))
        out += o.after_inst;
      out += answer;
      out += "</s>";
      inside_turn = false;
    } else {
      out += m.content;
    }
  }
}

constexpr MistralOptions kV1{" ", " ", false};
constexpr MistralOptions kV3{"", " ", true};
constexpr MistralOptions kV3Tekken{"", "", false};

// The answer follows [/INST]: add_assistant adds nothing.
template <const MistralOptions& kOptions>
void render(const ChatTemplate&, std::span<const ChatMessage> messages, bool, std::string& out) {
  render_mistral(messages, kOptions, out);
}

} // namespace

constinit const ChatTemplate kMistralV1("mistral-v1", "Mistral 7B Instruct v0.1, Mixtral 8x7B",
                                        render<kV1>, false);
constinit const ChatTemplate kMistralV3("mistral-v3", "Mistral 7B v0.3, Mixtral 8x22B", render<kV3>,
                                        false, nullptr, kMistralToolRoles);
constinit const ChatTemplate kMistralV3Tekken("mistral-v3-tekken", "Mistral Nemo",
                                              render<kV3Tekken>, false, nullptr, kMistralToolRoles);

} // namespace pshard
