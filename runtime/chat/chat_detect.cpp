// Which family a Jinja chat template belongs to, from substrings only — the checks and
// their order are llama.cpp's (llm_chat_detect_template), so a model gets the format
// llama.cpp gives it; ChatML and DeepSeek 3 templates whose generation prompt opens the
// thought ("<think>\n") get the variants that do too. Families pshard does not render are still
// recognised, so that they are named in the error instead of being mistaken for a later family.
#include "runtime/chat/chat_format.h"

#include <string>

namespace pshard {
namespace {

struct Detected {
  const ChatTemplate* found = nullptr;
  std::string_view unsupported; // a family recognised but not rendered
};

Detected found(const ChatTemplate& t) { return {&t, {}}; }
Detected not_rendered(std::string_view family) { return {nullptr, family}; }

// Mistral's and Llama 2's [INST] families.
Detected detect_inst(std::string_view t) {
  auto has = [t](std::string_view s) { return t.find(s) != std::string_view::npos; };
  if (has("[SYSTEM_PROMPT]")) // v7; Tekken writes no space after its tags
    return found(has("[INST] ") || has("[SYSTEM_PROMPT] ") ? kMistralV7 : kMistralV7Tekken);
  if (has("' [INST] ' + system_message") || has("[AVAILABLE_TOOLS]")) {
    if (has(" [INST]"))
      return found(kMistralV1);
    if (has("\"[INST]\""))
      return found(kMistralV3Tekken);
    return found(kMistralV3);
  }
  if (has("content.strip()"))
    return found(kLlama2SysStrip);
  if (has("bos_token + '[INST]"))
    return found(kLlama2SysBos);
  if (has("<<SYS>>"))
    return found(kLlama2Sys);
  return found(kLlama2);
}

// Whether the template's generation prompt ends with `prompt` and "<think>\n" (a string
// literal in the Jinja source, its newline escaped): the prompt opens the thought.
bool opens_thought(std::string_view t, std::string_view prompt) {
  for (const char quote : {'\'', '"'}) {
    const std::string literal = std::string(prompt) + "<think>\\n" + quote;
    if (t.find(literal) != std::string_view::npos)
      return true;
  }
  return false;
}

Detected detect(std::string_view t) {
  auto has = [t](std::string_view s) { return t.find(s) != std::string_view::npos; };
  if (has("<|im_start|>")) {
    if (has("<|im_sep|>"))
      return found(kPhi4);
    if (has("<end_of_utterance>"))
      return found(kSmolvlm);
    // Qwen3-Coder's and Qwen3.5's: function calls in XML (<function=NAME><parameter=KEY>);
    // Qwen3.5's alone thinks.
    if (has("<function=") && has("<parameter="))
      return found(has("<think>") ? kQwen35 : kQwen3Coder);
    return found(opens_thought(t, "<|im_start|>assistant\\n") ? kChatmlThinking : kChatml);
  }
  if (t.rfind("mistral", 0) == 0 || has("[INST]"))
    return detect_inst(t);
  if (has("<|channel|>")) // OpenAI's harmony
    return found(kGptOss);
  if (has("<|assistant|>") && has("<|end|>"))
    return found(kPhi3);
  if (has("[gMASK]<sop>")) // GLM-4.5's template alone thinks and calls tools with <arg_key>
    return found(has("<arg_key>") || has("enable_thinking") ? kGlm45 : kChatglm4);
  if (has("<|assistant|>") && has("<|user|>"))
    return has("</s>") ? found(kFalcon3) : not_rendered("glmedge");
  if (has("<|{{ item['role'] }}|>") && has("<|begin_of_image|>"))
    return not_rendered("glmedge");
  if (has("<|user|>") && has("<|endoftext|>"))
    return found(kZephyr);
  if (has("bos_token + message['role']"))
    return not_rendered("monarch");
  if (has("<start_of_turn>"))
    return found(kGemma);
  if (has("'\\n\\nAssistant: ' + eos_token"))
    return not_rendered("orion");
  if (has("GPT4 Correct "))
    return found(kOpenchat);
  if (has("USER: ") && has("ASSISTANT: "))
    return found(has("SYSTEM: ") ? kVicunaOrca : kVicuna);
  if (has("### Instruction:") && has("<|EOT|>"))
    return found(kDeepseek);
  if (has("<|START_OF_TURN_TOKEN|>") && has("<|USER_TOKEN|>"))
    return found(kCommandR);
  if (has("<|start_header_id|>") && has("<|end_header_id|>"))
    return found(kLlama3);
  if (has("[gMASK]sop"))
    return not_rendered("chatglm3");
  if (has("<\xe7\x94\xa8\xe6\x88\xb7>")) // <用户>
    return not_rendered("minicpm");
  if (has("<role>ASSISTANT</role>")) { // Ant Group's Ling and Ring, llama.cpp's order
    if (has("<role>HUMAN</role>") && has("<|role_end|>"))
      return found(kBailing2);
    if (has("\"HUMAN\"") && has("<think>"))
      return found(kBailingThink);
    if (has("'HUMAN'") || has("\"HUMAN\""))
      return found(kBailing);
  }
  if (has("<|endofuserprompt|>"))
    return found(kDots1);
  // ERNIE 4.5's (pshard's own: llama.cpp renders it only through Jinja): "User: " and
  // "Assistant: " turns ended by its separator, <|end_of_sentence|>.
  if (has("<|begin_of_sentence|>") ||
      (has("User: ") && has("Assistant: ") && (has("sep_token") || has("<|end_of_sentence|>"))))
    return found(kErnie45);
  if (has("'Assistant: ' + message['content'] + eos_token"))
    return found(kDeepseek2);
  if (has("<\uff5cAssistant\uff5c>") && has("<\uff5cUser\uff5c>") &&
      has("<\uff5cend\u2581of\u2581sentence\uff5c>"))
    return found(opens_thought(t, "<\uff5cAssistant\uff5c>") ? kDeepseek3Thinking : kDeepseek3);
  if (has("[|system|]") && has("[|assistant|]") && has("[|endofturn|]"))
    return has("[|tool|]") ? not_rendered("exaone4") : found(kExaone3);
  if (has("<|start_of_role|>"))
    return found(kGranite);
  if (has("<|header_start|>") && has("<|header_end|>"))
    return found(kLlama4);
  if (has("<|im_assistant|>assistant<|im_middle|>") ||
      (has("<|tool_calls_section_begin|>") && has("<|tool_call_begin|>")))
    return found(kKimiK2);
  return {};
}

std::string choose_one() {
  return "choose one by name (pshard-run --chat-template NAME; the template name of "
         "pshard_chat_apply_template): " +
         chat_template_list();
}

} // namespace

Result<const ChatTemplate*> detect_chat_template(std::string_view jinja) {
  if (trim(jinja).empty())
    return not_found("the chat template is empty; " + choose_one());
  for (const ChatTemplate* t : chat_templates())
    if (jinja == t->name())
      return t;
  const Detected d = detect(jinja);
  if (d.found)
    return d.found;
  if (!d.unsupported.empty())
    return unsupported("the chat template is " + std::string(d.unsupported) +
                       "'s, which pshard does not render; " + choose_one());
  const std::string_view head = jinja.substr(0, 60);
  return unsupported("pshard does not recognise the chat template (" +
                     std::to_string(jinja.size()) + " bytes, starting '" + std::string(head) +
                     (head.size() < jinja.size() ? "...'" : "'") + "); " + choose_one());
}

} // namespace pshard
