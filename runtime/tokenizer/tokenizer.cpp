#include "runtime/tokenizer/tokenizer.h"

#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/bpe_tokenizer.h"
#include "runtime/tokenizer/spm_tokenizer.h"
#include "runtime/tokenizer/ugm_tokenizer.h"
#include "runtime/tokenizer/vocabulary.h"
#include "runtime/tokenizer/wpm_tokenizer.h"

namespace pshard {
namespace {

// The kinds GGUF files name in tokenizer.ggml.model that pshard knows of but
// does not tokenize, with what they are, for the error message.
const char* describe_unsupported_kind(std::string_view model) {
  if (model == "rwkv")
    return "RWKV greedy";
  if (model == "no_vocab" || model == "none")
    return "no vocabulary";
  return nullptr;
}

template <typename Kind> Result<std::unique_ptr<Tokenizer>> build(const gguf::GgufFile &file) {
  PSHARD_ASSIGN_OR_RETURN(Vocabulary vocab, load_vocabulary(file));
  PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Kind> tokenizer, Kind::create(std::move(vocab)));
  return std::unique_ptr<Tokenizer>(std::move(tokenizer));
}

} // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const gguf::GgufFile &file) {
  PSHARD_ASSIGN_OR_RETURN(std::string model, file.get_string("tokenizer.ggml.model"));
  if (model == "llama")
    return build<SpmTokenizer>(file);
  if (model == "gpt2")
    return build<BpeTokenizer>(file);
  if (model == "bert")
    return build<WpmTokenizer>(file);
  if (model == "t5")
    return build<UgmTokenizer>(file);
  const char *kind = describe_unsupported_kind(model);
  return unsupported("tokenizer.ggml.model \"" + model + "\"" +
                     (kind ? std::string(" (") + kind + ")" : std::string()) +
                     " is not supported; pshard tokenizes \"llama\" (SentencePiece BPE), "
                     "\"gpt2\" (byte-level BPE), \"bert\" (WordPiece) and \"t5\" (SentencePiece "
                     "Unigram) vocabularies");
}

} // namespace pshard
