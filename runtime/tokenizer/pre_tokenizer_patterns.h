// The pre-tokenizers of byte-level BPE vocabularies, by tokenizer.ggml.pre: the
// regular expressions that cut text into pieces before BPE merges, and the
// flags that go with them.
//
//   std::string warning;
//   const PreTokenizerSpec& spec = find_pre_tokenizer("qwen2", &warning);
//   PSHARD_ASSIGN_OR_RETURN(PreTokenizer pre, PreTokenizer::create(spec.patterns));
//
// The expressions are those of each model's Hugging Face tokenizer.json
// (pre_tokenizer.pretokenizers[*].pattern), the same lists llama.cpp uses.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pshard {

struct PreTokenizerSpec {
  std::string_view name; // the canonical tokenizer.ggml.pre value
  std::vector<std::string_view> patterns;
  // A piece that is a whole vocabulary entry becomes that token without merging
  // (Llama 3 and Tekken: their ranks come from tiktoken, whose merges do not
  // always rebuild every token).
  bool ignore_merges = false;
  // What tokenizer.ggml.add_bos_token defaults to when a file omits it.
  bool add_bos = false;
};

// The pre-tokenizer `pre` names. An empty or unknown name gives the "default"
// one and sets *warning to a sentence saying so (llama.cpp does the same for a
// missing name); *warning is left untouched otherwise.
const PreTokenizerSpec& find_pre_tokenizer(std::string_view pre, std::string* warning);

// Every tokenizer.ggml.pre value pshard recognises, for messages and tests.
std::vector<std::string_view> known_pre_tokenizer_names();

} // namespace pshard
