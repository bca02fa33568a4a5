// The turn table: every format that is a prefix and a suffix per role plus a generation
// prompt. Formats follow the model makers' published templates as llama.cpp renders
// them; each line names the models it serves.
#include "runtime/chat/chat_format.h"

namespace pshard {
namespace {

// The same turn for every role, the role's name inside.
constexpr TurnFormat any_role_turns(Turn turn, std::string_view generation_prompt,
                                    bool trim = false) {
  return TurnFormat{turn, turn, turn, turn, generation_prompt, trim};
}

constexpr TurnFormat kChatmlTurns =
    any_role_turns({"<|im_start|>{role}\n", "<|im_end|>\n"}, "<|im_start|>assistant\n");
// Thinking models whose templates open the thought in the generation prompt (QwQ, Qwen3's
// Thinking-2507 models): the answer starts inside it and closes it with </think>.
constexpr TurnFormat kChatmlThinkingTurns =
    any_role_turns({"<|im_start|>{role}\n", "<|im_end|>\n"}, "<|im_start|>assistant\n<think>\n");
// Qwen3.5's template trims every message's text (and opens the thought likewise).
constexpr TurnFormat kQwen35Turns = any_role_turns(
    {"<|im_start|>{role}\n", "<|im_end|>\n"}, "<|im_start|>assistant\n<think>\n", /*trim=*/true);
constexpr TurnFormat kPhi4Turns = any_role_turns({"<|im_start|>{role}<|im_sep|>", "<|im_end|>"},
                                                 "<|im_start|>assistant<|im_sep|>");
constexpr TurnFormat kLlama3Turns =
    any_role_turns({"<|start_header_id|>{role}<|end_header_id|>\n\n", "<|eot_id|>"},
                   "<|start_header_id|>assistant<|end_header_id|>\n\n", /*trim=*/true);
constexpr TurnFormat kLlama4Turns =
    any_role_turns({"<|header_start|>{role}<|header_end|>\n\n", "<|eot|>"},
                   "<|header_start|>assistant<|header_end|>\n\n", /*trim=*/true);
constexpr TurnFormat kPhi3Turns = any_role_turns({"<|{role}|>\n", "<|end|>\n"}, "<|assistant|>\n");
constexpr TurnFormat kFalcon3Turns = any_role_turns({"<|{role}|>\n", "\n"}, "<|assistant|>\n");
// IBM Granite 3.x (dense and MoE).
constexpr TurnFormat kGraniteTurns =
    any_role_turns({"<|start_of_role|>{role}<|end_of_role|>", "<|end_of_text|>\n"},
                   "<|start_of_role|>assistant<|end_of_role|>");
constexpr TurnFormat kZephyrTurns =
    any_role_turns({"<|{role}|>\n", "<|endoftext|>\n"}, "<|assistant|>\n");

// Mistral's v7 templates: a system prompt of its own; the answer follows [/INST] with
// no generation prompt. v7 puts a space after each opening tag, Tekken none.
constexpr TurnFormat kMistralV7Turns{
    {"[SYSTEM_PROMPT] ", "[/SYSTEM_PROMPT]"}, {"[INST] ", "[/INST]"}, {" ", "</s>"}, {}, ""};
constexpr TurnFormat kMistralV7TekkenTurns{
    {"[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]"}, {"[INST]", "[/INST]"}, {"", "</s>"}, {}, ""};

constexpr TurnFormat kCommandRTurns{
    {"<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {"<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>"},
    {},
    "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>",
    /*trim=*/true};
constexpr TurnFormat kDeepseekTurns{{"", ""},
                                    {"### Instruction:\n", "\n"},
                                    {"### Response:\n", "\n<|EOT|>\n"},
                                    {},
                                    "### Response:\n"};
// "<｜end▁of▁sentence｜>" and friends are spelled with U+FF5C and U+2581, not ASCII.
constexpr TurnFormat kDeepseek2Turns{{"", "\n\n"},
                                     {"User: ", "\n\n"},
                                     {"Assistant: ", "<\uff5cend\u2581of\u2581sentence\uff5c>"},
                                     {},
                                     "Assistant:"};
constexpr TurnFormat kDeepseek3Turns{
    {"", "\n\n"},
    {"<\uff5cUser\uff5c>", ""},
    {"<\uff5cAssistant\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"},
    {},
    "<\uff5cAssistant\uff5c>"};
// DeepSeek R1's later templates (R1-0528 and the distills) open the thought likewise.
constexpr TurnFormat kDeepseek3ThinkingTurns{
    {"", "\n\n"},
    {"<\uff5cUser\uff5c>", ""},
    {"<\uff5cAssistant\uff5c>", "<\uff5cend\u2581of\u2581sentence\uff5c>"},
    {},
    "<\uff5cAssistant\uff5c><think>\n"};
constexpr TurnFormat kExaone3Turns{{"[|system|]", "[|endofturn|]\n"},
                                   {"[|user|]", "\n"},
                                   {"[|assistant|]", "[|endofturn|]\n"},
                                   {},
                                   "[|assistant|]",
                                   /*trim=*/true};
constexpr TurnFormat kOpenchatTurns{{"", "<|end_of_turn|>"},
                                    {"GPT4 Correct User: ", "<|end_of_turn|>"},
                                    {"GPT4 Correct Assistant: ", "<|end_of_turn|>"},
                                    {},
                                    "GPT4 Correct Assistant:"};
constexpr TurnFormat kVicunaTurns{
    {"", "\n\n"}, {"USER: ", "\n"}, {"ASSISTANT: ", "</s>\n"}, {}, "ASSISTANT:"};
constexpr TurnFormat kVicunaOrcaTurns{
    {"SYSTEM: ", "\n"}, {"USER: ", "\n"}, {"ASSISTANT: ", "</s>\n"}, {}, "ASSISTANT:"};
// SmolVLM opens with <|im_start|> as its BOS but is not ChatML.
constexpr TurnFormat kSmolvlmTurns{{"", "\n\n"},
                                   {"User: ", "<end_of_utterance>\n"},
                                   {"Assistant: ", "<end_of_utterance>\n"},
                                   {},
                                   "Assistant:",
                                   /*trim=*/false,
                                   "<|im_start|>"};

// GLM-4-0414 (9B, 32B), as llama.cpp renders "chatglm4": "[gMASK]<sop>" once, each message
// "<|role|>\n" and its text, the answer opened by "<|assistant|>\n".
constexpr TurnFormat kChatglm4Turns{
    {"<|{role}|>\n", ""}, {"<|{role}|>\n", ""}, {"<|{role}|>\n", ""}, {"<|{role}|>\n", ""},
    "<|assistant|>\n",    /*trim=*/false,       "[gMASK]<sop>"};
// GLM-4.5, GLM-4.5-Air and GLM-4.6 as their published template writes a conversation:
// earlier answers after an empty thought (the template drops their reasoning), tool results
// after <|observation|> (role "observation", kGlmTextRoles), and a bare "<|assistant|>" to
// answer, after which the model opens its own thought ("\n<think>").
constexpr TurnFormat kGlm45Turns{{"<|system|>\n", ""},
                                 {"<|user|>\n", ""},
                                 {"<|assistant|>\n<think></think>\n", ""},
                                 {"<|observation|>\n", ""},
                                 "<|assistant|>",
                                 /*trim=*/false,
                                 "[gMASK]<sop>"};

// ERNIE 4.5 as its tokenizer's default template writes a conversation (llama.cpp has no
// built-in rendering of it): <|begin_of_sentence|> once, the system prompt on a line of
// its own, "User: " lines, answers after "Assistant: " ended by <|end_of_sentence|>.
constexpr TurnFormat kErnie45Turns{
    {"", "\n"},     {"User: ", "\n"},       {"Assistant: ", "<|end_of_sentence|>"}, {},
    "Assistant: ",
    /*trim=*/false, "<|begin_of_sentence|>"};

// dots.llm1 as llama.cpp renders "dots1": each turn between its own markers, no newlines,
// the answer opened by <|response|>.
constexpr TurnFormat kDots1Turns{{"<|system|>", "<|endofsystem|>"},
                                 {"<|userprompt|>", "<|endofuserprompt|>"},
                                 {"<|response|>", "<|endofresponse|>"},
                                 {},
                                 "<|response|>"};

// Ling and Ring (Ant Group's bailing models) as llama.cpp renders them: each turn opened by
// its role upper-cased (user as HUMAN); "bailing2" ends turns with <|role_end|> and gives a
// conversation without a system message the models' default one; "bailing-think" opens
// the thought.
constexpr TurnFormat kBailingTurns{{"<role>SYSTEM</role>", ""},
                                   {"<role>HUMAN</role>", ""},
                                   {"<role>ASSISTANT</role>", ""},
                                   {},
                                   "<role>ASSISTANT</role>"};
constexpr TurnFormat kBailingThinkTurns{{"<role>SYSTEM</role>", ""},
                                        {"<role>HUMAN</role>", ""},
                                        {"<role>ASSISTANT</role>", ""},
                                        {},
                                        "<role>ASSISTANT</role><think>"};
constexpr TurnFormat kBailing2Turns{{"<role>SYSTEM</role>", "<|role_end|>"},
                                    {"<role>HUMAN</role>", "<|role_end|>"},
                                    {"<role>ASSISTANT</role>", "<|role_end|>"},
                                    {},
                                    "<role>ASSISTANT</role>"};

// Moonshot's Kimi K2 and Moonlight: each turn's role named between its own opening token
// and <|im_middle|>, no newlines; a tool's result (and the tools offered) are system-token
// turns named "tool" ("tool_declare").
// Moonlight's Jinja adds a default system prompt that llama.cpp's rendering leaves out;
// pshard renders as llama.cpp does.
constexpr TurnFormat kKimiK2Turns{{"<|im_system|>system<|im_middle|>", "<|im_end|>"},
                                  {"<|im_user|>user<|im_middle|>", "<|im_end|>"},
                                  {"<|im_assistant|>assistant<|im_middle|>", "<|im_end|>"},
                                  {"<|im_system|>{role}<|im_middle|>", "<|im_end|>"},
                                  "<|im_assistant|>assistant<|im_middle|>"};

// A bailing2 conversation without a system message starts with the default one.
void render_bailing2(const ChatTemplate& self, std::span<const ChatMessage> messages,
                     bool add_assistant, std::string& out) {
  if (messages.empty() || messages.front().role != "system")
    out += "<role>SYSTEM</role>detailed thinking off<|role_end|>";
  render_turns(self, messages, add_assistant, out);
}

// OpenAI's harmony format (gpt-oss), as its published template renders a conversation
// (pshard-server writes function calling's messages whole, kHarmonyTextRoles): a fixed
// system message (identity, knowledge cutoff, reasoning effort
// medium, the channels), the client's system prompt as the developer's instructions,
// earlier answers on the final channel (their analysis dropped, as the template does),
// and the assistant's turn opened for the model to name its channel. The template's
// "Current date" line is left out, so a prompt does not change with the day.
constexpr TurnFormat kGptOssTurns{
    {"<|start|>developer<|message|># Instructions\n\n", "<|end|>"},
    {"<|start|>user<|message|>", "<|end|>"},
    {"<|start|>assistant<|channel|>final<|message|>", "<|end|>"},
    {},
    "<|start|>assistant",
    /*trim=*/false,
    "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
    "Knowledge cutoff: 2024-06\n\nReasoning: medium\n\n# Valid channels: analysis, "
    "commentary, final. Channel must be included for every message.<|end|>"};

const Turn& turn_of(const TurnFormat& f, std::string_view role) {
  if (role == "system")
    return f.system;
  if (role == "user")
    return f.user;
  if (role == "assistant")
    return f.assistant;
  return f.other;
}

void append_turn_text(std::string& out, std::string_view text, std::string_view role) {
  constexpr std::string_view kRole = "{role}";
  const size_t at = text.find(kRole);
  if (at == std::string_view::npos) {
    out += text;
    return;
  }
  out += text.substr(0, at);
  out += role;
  out += text.substr(at + kRole.size());
}

} // namespace

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\n\v\f\r";
  const size_t begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos)
    return {};
  return s.substr(begin, s.find_last_not_of(kSpace) - begin + 1);
}

void render_turns(const ChatTemplate& self, std::span<const ChatMessage> messages,
                  bool add_assistant, std::string& out) {
  const TurnFormat& f = *self.turns();
  out += f.preamble;
  for (const ChatMessage& m : messages) {
    const Turn& turn = turn_of(f, m.role);
    append_turn_text(out, turn.prefix, m.role);
    out += f.trim ? trim(m.content) : std::string_view(m.content);
    append_turn_text(out, turn.suffix, m.role);
  }
  if (add_assistant)
    out += f.generation_prompt;
}

// clang-format off
constinit const ChatTemplate kBailing("bailing", "Ling (bailing)", render_turns, false, &kBailingTurns);
constinit const ChatTemplate kBailingThink("bailing-think", "Ring (bailing, thinking)", render_turns, false, &kBailingThinkTurns);
constinit const ChatTemplate kBailing2("bailing2", "Ling 2.0, Ring 2.0", render_bailing2, false, &kBailing2Turns);
constinit const ChatTemplate kChatglm4("chatglm4", "GLM-4-0414, GLM-Z1", render_turns, true, &kChatglm4Turns);
constinit const ChatTemplate kChatml("chatml", "ChatML: Qwen, Yi, Hermes, ...", render_turns, true, &kChatmlTurns);
constinit const ChatTemplate kChatmlThinking("chatml-thinking", "ChatML opening the thought: QwQ, Qwen3 Thinking-2507", render_turns, true, &kChatmlThinkingTurns);
constinit const ChatTemplate kCommandR("command-r", "Cohere Command-R", render_turns, false, &kCommandRTurns);
constinit const ChatTemplate kDeepseek("deepseek", "DeepSeek Coder", render_turns, false, &kDeepseekTurns);
constinit const ChatTemplate kDeepseek2("deepseek2", "DeepSeek V2", render_turns, false, &kDeepseek2Turns);
constinit const ChatTemplate kDeepseek3("deepseek3", "DeepSeek V3, R1", render_turns, false, &kDeepseek3Turns);
constinit const ChatTemplate kDeepseek3Thinking("deepseek3-thinking", "DeepSeek R1-0528, R1 distills", render_turns, false, &kDeepseek3ThinkingTurns);
constinit const ChatTemplate kDots1("dots1", "dots.llm1", render_turns, false, &kDots1Turns);
constinit const ChatTemplate kErnie45("ernie4.5", "ERNIE 4.5", render_turns, false, &kErnie45Turns);
constinit const ChatTemplate kExaone3("exaone3", "EXAONE 3", render_turns, false, &kExaone3Turns);
constinit const ChatTemplate kFalcon3("falcon3", "Falcon 3", render_turns, true, &kFalcon3Turns);
constinit const ChatTemplate kGlm45("glm-4.5", "GLM-4.5, GLM-4.5-Air, GLM-4.6", render_turns, false, &kGlm45Turns, kGlmTextRoles);
constinit const ChatTemplate kGranite("granite", "IBM Granite 3.x", render_turns, true, &kGraniteTurns);
constinit const ChatTemplate kGptOss("gpt-oss", "gpt-oss (OpenAI harmony)", render_turns, false, &kGptOssTurns, kHarmonyTextRoles);
constinit const ChatTemplate kKimiK2("kimi-k2", "Kimi K2, Moonlight", render_turns, false, &kKimiK2Turns, kKimiTextRoles);
constinit const ChatTemplate kLlama3("llama3", "Llama 3, 3.1, 3.2, 3.3", render_turns, true, &kLlama3Turns);
constinit const ChatTemplate kLlama4("llama4", "Llama 4", render_turns, true, &kLlama4Turns);
constinit const ChatTemplate kMistralV7("mistral-v7", "Mistral Large 2411", render_turns, false, &kMistralV7Turns, kMistralToolRoles);
constinit const ChatTemplate kMistralV7Tekken("mistral-v7-tekken", "Mistral Small 3.1", render_turns, false, &kMistralV7TekkenTurns, kMistralToolRoles);
constinit const ChatTemplate kOpenchat("openchat", "OpenChat 3.5", render_turns, false, &kOpenchatTurns);
constinit const ChatTemplate kPhi3("phi3", "Phi-3", render_turns, true, &kPhi3Turns);
constinit const ChatTemplate kPhi4("phi4", "Phi-4", render_turns, true, &kPhi4Turns);
constinit const ChatTemplate kQwen35("qwen3.5", "Qwen3.5 (ChatML opening the thought; XML tool calls)", render_turns, true, &kQwen35Turns);
constinit const ChatTemplate kQwen3Coder("qwen3-coder", "Qwen3-Coder, Qwen3-Coder-Next (ChatML; XML tool calls)", render_turns, true, &kChatmlTurns);
constinit const ChatTemplate kSmolvlm("smolvlm", "SmolVLM", render_turns, false, &kSmolvlmTurns);
constinit const ChatTemplate kVicuna("vicuna", "Vicuna 1.1", render_turns, false, &kVicunaTurns);
constinit const ChatTemplate kVicunaOrca("vicuna-orca", "Orca-Vicuna", render_turns, false, &kVicunaOrcaTurns);
constinit const ChatTemplate kZephyr("zephyr", "Zephyr", render_turns, true, &kZephyrTurns);
// clang-format on

} // namespace pshard
