#include "runtime/tokenizer/token_overrides.h"

#include <algorithm>
#include <cctype>
#include <string>

namespace pshard {
namespace {

// Texts that end a turn in common chat templates (Llama 3, ChatML, Phi-3,
// Gemma, GPT-2 style, CodeLlama, DeepSeek) and FIM tokens that separate files
// or pad: sampling one ends generation.
// clang-format off
constexpr std::string_view kEndOfGenerationTexts[] = {
    "<|eot_id|>",          "<|eom_id|>",    "<|im_end|>", "<|end|>",
    "<end_of_turn>",       "<|endoftext|>", "<EOT>",      "<｜end▁of▁sentence｜>",
    "<|fim_pad|>",         "<fim-pad>",     "<PAD>",      "<|fim_repo|>",
    "<|repo_name|>",       "<fim-repo>",    "<REPO>",     "<|file_sep|>",
    "<|return|>",          "<|call|>", // harmony (gpt-oss): the answer is done, or a call is
    "<|end_of_sentence|>",             // ERNIE 4.5's answers end with its separator
    "<|endofresponse|>",               // and dots.llm1's with its turn's closing,
    "<|role_end|>",                    // Ling's and Ring's (bailing),
    "[EOT]",               "[EOS]",    // Kimi K2's and Moonlight's, beside <|im_end|>,
    "<|eot|>",             "<|eom|>"}; // and Llama 4's turn and tool-call message ends
// clang-format on

// GLM's vocabularies (pre-tokenizer glm4 or chatglm-bpe): the next user turn and a tool
// result's opening end an answer, as the EOT and EOM ids GLM-4.5's converter writes —
// which earlier conversions lack (llama.cpp's fix for their endless answers).
constexpr std::string_view kGlmTurnTexts[] = {"<|user|>", "<|observation|>"};
constexpr std::string_view kGlmPreTokenizers[] = {"glm4", "chatglm-bpe"};

// Harmony's <|end|> closes one message of an answer (the analysis before the final one),
// not the answer: a vocabulary with <|return|> generates past it, as llama.cpp does.
constexpr std::string_view kHarmonyReturn = "<|return|>", kHarmonyEnd = "<|end|>";

// Fill-in-the-middle prefix, suffix and middle markers (Qwen, StarCoder-style,
// DeepSeek, CodeLlama).
constexpr std::string_view kFimTexts[] = {"<|fim_prefix|>", "<fim-prefix>",   "<｜fim▁begin｜>",
                                          "<PRE>",          "<|fim_suffix|>", "<fim-suffix>",
                                          "<｜fim▁hole｜>", "<SUF>",          "<|fim_middle|>",
                                          "<fim-middle>",   "<｜fim▁end｜>",  "<MID>"};

// Control tokens whose text an answer must show: Mistral's converters type its call and
// thought markers control (their text would vanish from answers, as llama.cpp's chat
// parsers keep them apart to see), so a server can recognise calls and thoughts.
// Likewise harmony's channel markers (gpt-oss), which say where the analysis ends.
constexpr std::string_view kShownTexts[] = {"[TOOL_CALLS]", "[ARGS]",      "[CALL_ID]",
                                            "[THINK]",      "[/THINK]",    "<|channel|>",
                                            "<|start|>",    "<|message|>", "<|constrain|>"};

template <size_t N> bool is_one_of(const std::string_view (&texts)[N], std::string_view text) {
  return std::find(std::begin(texts), std::end(texts), text) != std::end(texts);
}

std::string lower_case(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

void set_rstrip(Vocabulary& vocab, std::string_view text, bool value) {
  for (TokenData& token : vocab.tokens)
    if (token.text == text)
      token.rstrip = value;
}

} // namespace

void apply_token_overrides(Vocabulary& vocab, std::string_view model_name) {
  for (TokenData& token : vocab.tokens)
    if (is_one_of(kEndOfGenerationTexts, token.text) || is_one_of(kFimTexts, token.text))
      token.type = TokenType::kControl;
    else if (is_one_of(kShownTexts, token.text) && token.type == TokenType::kControl)
      token.type = TokenType::kUserDefined;

  const std::string name = lower_case(model_name);
  const bool jina_v2 = vocab.pre.find("jina-v2-") != std::string::npos;
  if (jina_v2) {
    for (TokenData& token : vocab.tokens)
      if (token.text == "<mask>")
        token.lstrip = true;
  } else if (name.find("phi-3") != std::string::npos || name.find("phi3") != std::string::npos) {
    for (TokenData& token : vocab.tokens)
      if (token.type == TokenType::kControl || token.type == TokenType::kUserDefined ||
          token.type == TokenType::kUnknown)
        token.rstrip = true;
    set_rstrip(vocab, "</s>", true);
    for (std::string_view text : {"<unk>", "<s>", "<|endoftext|>"})
      set_rstrip(vocab, text, false);
  }
}

std::vector<bool> end_of_generation_flags(const Vocabulary& vocab) {
  std::vector<bool> flags(vocab.tokens.size(), false);
  bool harmony = false; // the vocabulary has <|return|>
  size_t harmony_end = vocab.tokens.size();
  const bool glm = is_one_of(kGlmPreTokenizers, vocab.pre);
  for (size_t id = 0; id < vocab.tokens.size(); ++id) {
    const std::string& text = vocab.tokens[id].text;
    flags[id] = is_one_of(kEndOfGenerationTexts, text) || (glm && is_one_of(kGlmTurnTexts, text));
    harmony = harmony || text == kHarmonyReturn;
    if (text == kHarmonyEnd)
      harmony_end = id;
  }
  for (TokenId id : {vocab.eos_id, vocab.eot_id, vocab.eom_id})
    if (id != kNoToken)
      flags[id] = true;
  if (harmony && harmony_end < flags.size())
    flags[harmony_end] = false;
  return flags;
}

} // namespace pshard
