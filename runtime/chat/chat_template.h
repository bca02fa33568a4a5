// Chat templates: a conversation (role, content messages) rendered into the prompt text
// a chat model was trained on. A GGUF carries its template as Jinja source in
// `tokenizer.chat_template`; pshard does not run Jinja. It recognises the template's
// family by substrings, as llama.cpp's built-in detection does (`<|im_start|>` is ChatML,
// `<|start_header_id|>` Llama 3, `[INST]` Mistral or Llama 2, ...) and renders that
// family's format natively (one small file per family, or one line of the turn table).
// The text is tokenized afterwards with the model's tokenizer, special tokens parsed.
//
//   PSHARD_ASSIGN_OR_RETURN(const ChatTemplate* t, model_chat_template(file, /*name=*/""));
//   const ChatMessage chat[] = {{"system", "Be brief."}, {"user", "Hi"}};
//   PSHARD_ASSIGN_OR_RETURN(std::string prompt, t->apply(chat, /*add_assistant=*/true));
//   // chatml: "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
//   //         "<|im_start|>assistant\n"
//
// Roles are "system", "user" and "assistant"; templates that render any role under its
// own name (ChatML, Llama 3, Phi-3, ...) take others too ("tool"). A template without a
// system role does what llama.cpp does with one (Gemma prepends it to the next user
// turn, Llama 2 without <<SYS>> to the first instruction). The BOS token is never part
// of the text: the tokenizer adds it.
#pragma once

#include "runtime/core/status.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

namespace gguf {
class GgufFile;
}

struct ChatMessage {
  std::string role;
  std::string content;
};

struct TurnFormat; // chat_format.h: a template rendered from the turn table

class ChatTemplate {
public:
  using RenderFn = void (*)(const ChatTemplate& self, std::span<const ChatMessage> messages,
                            bool add_assistant, std::string& out);

  // `any_role`: every role is a turn of its name; else system, user and assistant, and
  // `text_roles`: roles whose text is written as it is between the turns (Mistral's
  // function-calling blocks, which its templates place outside [INST]).
  constexpr ChatTemplate(std::string_view name, std::string_view models, RenderFn render,
                         bool any_role, const TurnFormat* turns = nullptr,
                         std::span<const std::string_view> text_roles = {})
      : name_(name), models_(models), render_(render), any_role_(any_role), turns_(turns),
        text_roles_(text_roles) {}

  std::string_view name() const { return name_; }     // llama.cpp's name: "chatml", "llama3"
  std::string_view models() const { return models_; } // who uses it, for listings
  const TurnFormat* turns() const { return turns_; }

  // The conversation as prompt text; add_assistant appends the opening of the
  // assistant's turn (the generation prompt) so that the model answers next.
  Result<std::string> apply(std::span<const ChatMessage> messages, bool add_assistant) const;

private:
  std::string_view name_;
  std::string_view models_;
  RenderFn render_;
  bool any_role_;
  const TurnFormat* turns_;
  std::span<const std::string_view> text_roles_;
};

// Every template pshard renders, sorted by name.
std::span<const ChatTemplate* const> chat_templates();
// "chatml, command-r, deepseek, ..." for messages.
std::string chat_template_list();

// By llama.cpp's name; unknown names are an error listing the known ones.
Result<const ChatTemplate*> find_chat_template(std::string_view name);
// From a Jinja template's source (or a bare template name, as llama.cpp accepts).
Result<const ChatTemplate*> detect_chat_template(std::string_view jinja);
// `name` when not empty, else the one detected from the model's tokenizer.chat_template.
Result<const ChatTemplate*> model_chat_template(const gguf::GgufFile& file, std::string_view name);

} // namespace pshard
