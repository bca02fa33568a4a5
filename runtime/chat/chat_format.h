// Private to runtime/chat: how the templates are rendered.
//
// Most formats are one turn pattern per role — a prefix, the content, a suffix — and a
// generation prompt; they are lines of the turn table (chat_turns.cpp), rendered by one
// function. Formats with more structure (turns that group several messages, system
// prompts folded into a user turn) have a file of their own.
#pragma once

#include "runtime/chat/chat_template.h"

#include <string>
#include <string_view>

namespace pshard {

// One role's turn: prefix + content + suffix. "{role}" in the prefix becomes the
// message's role.
struct Turn {
  std::string_view prefix;
  std::string_view suffix;
};

struct TurnFormat {
  Turn system, user, assistant;
  Turn other;                         // any other role; used only by any-role templates
  std::string_view generation_prompt; // after the last message when add_assistant
  bool trim = false;                  // contents trimmed of surrounding whitespace
  std::string_view preamble = {};     // once, before the first message
};

// The function-calling blocks Mistral's templates (v3 and later) write between their
// [INST] blocks as they are: pshard-server's tools block and tool results
// (tools/pshard-server/tool_format.h).
inline constexpr std::string_view kMistralToolRoles[] = {"available_tools", "tool_results"};
// Harmony's (gpt-oss): whole messages pshard-server writes itself — a developer message
// holding only the tools, calls to functions, their results (harmony_tools.cpp).
inline constexpr std::string_view kHarmonyTextRoles[] = {"harmony"};
// GLM-4.5's tool results: one <|observation|> turn per run of them (pshard-server joins
// a run into one message of this role).
inline constexpr std::string_view kGlmTextRoles[] = {"observation"};
// Kimi K2's tool results and the tools offered: turns of their own, named by the role.
inline constexpr std::string_view kKimiTextRoles[] = {"tool", "tool_declare"};

// Leading and trailing ASCII whitespace removed (Jinja's |trim on the text models use).
std::string_view trim(std::string_view s);

// Renders a template of the turn table (self.turns()).
void render_turns(const ChatTemplate& self, std::span<const ChatMessage> messages,
                  bool add_assistant, std::string& out);

// The families with files of their own, and the turn table.
extern const ChatTemplate kLlama2, kLlama2Sys, kLlama2SysBos, kLlama2SysStrip;
extern const ChatTemplate kMistralV1, kMistralV3, kMistralV3Tekken;
extern const ChatTemplate kGemma;
extern const ChatTemplate kBailing, kBailingThink, kBailing2, kChatglm4, kChatml, kChatmlThinking,
    kCommandR, kDeepseek, kDeepseek2, kDeepseek3, kDeepseek3Thinking, kDots1, kErnie45, kExaone3,
    kFalcon3, kGlm45, kGptOss, kGranite, kKimiK2, kLlama3, kLlama4, kMistralV7, kMistralV7Tekken,
    kOpenchat, kPhi3, kPhi4, kQwen35, kQwen3Coder, kSmolvlm, kVicuna, kVicunaOrca, kZephyr;

} // namespace pshard
