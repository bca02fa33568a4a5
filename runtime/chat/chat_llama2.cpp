// Llama 2's chat format and the variants llama.cpp tells apart:
//
//   [INST] <<SYS>>\n{system}\n<</SYS>>\n\n{user} [/INST]{assistant}</s>[INST] {user} [/INST]
//
// A turn is one [INST] block holding the system prompt (first turn only) and the user's
// message, followed by the answer. Variants: llama2 (no <<SYS>>: a system message is
// written as plain text plus a newline inside the first block, as llama.cpp does),
// llama2-sys, llama2-sys-bos (a literal <s> before every later [INST]), llama2-sys-strip
// (contents trimmed). The first block's BOS is the tokenizer's.
#include "runtime/chat/chat_format.h"

namespace pshard {
namespace {

struct Llama2Options {
  bool system_block; // <<SYS>> ... <</SYS>>
  bool bos_in_history;
  bool strip;
};

void render_llama2(std::span<const ChatMessage> messages, const Llama2Options& o,
                   std::string& out) {
  out += "[INST] ";
  bool inside_turn = true;
  for (const ChatMessage& m : messages) {
    const std::string_view content = o.strip ? trim(m.content) : std::string_view(m.content);
    if (!inside_turn) {
      out += o.bos_in_history ? "<s>[INST] " : "[INST] ";
      inside_turn = true;
    }
    if (m.role == "system") {
      if (o.system_block) {
        out += "<<SYS>>\n";
        out += content;
        out += "\n<</SYS>>\n\n";
      } else {
        out += content;
        out += "\n";
      }
    } else if (m.role == "user") {
      out += content;
      out += " [/INST]";
    } else {
      out += content;
      out += "</s>";
      inside_turn = false;
    }
  }
}

constexpr Llama2Options kPlain{false, false, false};
constexpr Llama2Options kSys{true, false, false};
constexpr Llama2Options kSysBos{true, true, false};
constexpr Llama2Options kSysStrip{true, false, true};

// The answer follows [/INST]: add_assistant adds nothing.
template <const Llama2Options& kOptions>
void render(const ChatTemplate&, std::span<const ChatMessage> messages, bool, std::string& out) {
  render_llama2(messages, kOptions, out);
}

} // namespace

constinit const ChatTemplate kLlama2("llama2", "Llama 2 (no system block)", render<kPlain>, false);
constinit const ChatTemplate kLlama2Sys("llama2-sys", "Llama 2 chat", render<kSys>, false);
constinit const ChatTemplate kLlama2SysBos("llama2-sys-bos", "Llama 2 chat, <s> in the history",
                                           render<kSysBos>, false);
constinit const ChatTemplate kLlama2SysStrip("llama2-sys-strip", "Llama 2 chat, contents trimmed",
                                             render<kSysStrip>, false);

} // namespace pshard
