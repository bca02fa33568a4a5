// Facts about added tokens that GGUF files do not record but llama.cpp applies
// when it loads a vocabulary, by token text and model name, so that prompts
// tokenize and generations stop as they do there:
//
//   - end-of-turn and fill-in-the-middle markers ("<|im_end|>", "<|fim_prefix|>",
//     "<｜end▁of▁sentence｜>", ...) are control tokens even where a converter typed
//     them user-defined or normal;
//   - Phi-3's added tokens (all but <unk>, <s> and <|endoftext|>) take the
//     whitespace after them (rstrip), as its tokenizer.json says;
//   - jina-v2's <mask> takes the whitespace before it (lstrip);
//   - Mistral's [TOOL_CALLS], [ARGS], [CALL_ID], [THINK] and [/THINK], typed control by
//     its converters, are user-defined: answers show their text, so a server can
//     recognise calls and thoughts.
//
//   apply_token_overrides(vocab, "Phi3");
//   std::vector<bool> stops = end_of_generation_flags(vocab);
#pragma once

#include "runtime/tokenizer/vocabulary.h"

#include <string_view>
#include <vector>

namespace pshard {

// `model_name` is general.name (compared without case); `vocab.pre` is read too.
void apply_token_overrides(Vocabulary& vocab, std::string_view model_name);

// Per token: whether sampling it ends generation. EOS, EOT and EOM by id, and
// tokens whose text ends a turn or separates FIM files ("<|eot_id|>",
// "<|im_end|>", "<|end|>", "<|endoftext|>", "<|file_sep|>", ...; in GLM's vocabularies
// "<|user|>" and "<|observation|>").
std::vector<bool> end_of_generation_flags(const Vocabulary& vocab);

} // namespace pshard
