#include "runtime/tokenizer/vocabulary.h"

#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/fim_tokens.h"
#include "runtime/tokenizer/pre_tokenizer_patterns.h"
#include "runtime/tokenizer/token_overrides.h"

#include <limits>
#include <optional>
#include <type_traits>

namespace pshard {
namespace {

constexpr const char *kTokensKey = "tokenizer.ggml.tokens";
constexpr const char *kScoresKey = "tokenizer.ggml.scores";
constexpr const char *kTypesKey = "tokenizer.ggml.token_type";
constexpr const char *kMergesKey = "tokenizer.ggml.merges";
constexpr const char* kCharsmapKey = "tokenizer.ggml.precompiled_charsmap";

// Any integer alternative of a GGUF value; nullopt for floats, strings, arrays.
std::optional<int64_t> integer_of(const gguf::Value &value) {
  return std::visit(
      [](const auto &v) -> std::optional<int64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if constexpr (std::is_same_v<T, uint64_t>) {
            if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
              return std::nullopt;
          }
          return static_cast<int64_t>(v);
        } else {
          return std::nullopt;
        }
      },
      value.v);
}

// Calls each(i, text) for every item of the string array `key`.
template <typename Each>
Status for_each_string(const gguf::GgufFile &file, const char *key, Each each) {
  PSHARD_ASSIGN_OR_RETURN(const gguf::Array *array, file.get_array(key));
  if (array->element_type != gguf::ValueType::kString)
    return invalid_format(std::string(key) + " must be an array of strings, found " +
                          gguf::value_type_name(array->element_type));
  for (size_t i = 0; i < array->items.size(); ++i) {
    const auto *text = std::get_if<std::string>(&array->items[i].v);
    if (text == nullptr)
      return invalid_format(std::string(key) + "[" + std::to_string(i) + "] is not a string");
    each(i, *text);
  }
  return Status::ok_status();
}

Status read_tokens(const gguf::GgufFile &file, Vocabulary &vocab) {
  PSHARD_ASSIGN_OR_RETURN(const gguf::Array *tokens, file.get_array(kTokensKey));
  vocab.tokens.resize(tokens->items.size());
  return for_each_string(file, kTokensKey,
                         [&](size_t i, const std::string &text) { vocab.tokens[i].text = text; });
}

Status read_merges(const gguf::GgufFile &file, Vocabulary &vocab) {
  if (file.find(kMergesKey) == nullptr)
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(const gguf::Array *merges, file.get_array(kMergesKey));
  vocab.merges.resize(merges->items.size());
  return for_each_string(file, kMergesKey,
                         [&](size_t i, const std::string &text) { vocab.merges[i] = text; });
}

Status check_length(const char *key, size_t found, size_t expected) {
  if (found == expected)
    return Status::ok_status();
  return invalid_format(std::string(key) + " has " + std::to_string(found) +
                        " entries but tokenizer.ggml.tokens has " + std::to_string(expected));
}

Status read_scores(const gguf::GgufFile &file, Vocabulary &vocab) {
  if (file.find(kScoresKey) == nullptr)
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(const gguf::Array *scores, file.get_array(kScoresKey));
  PSHARD_RETURN_IF_ERROR(check_length(kScoresKey, scores->items.size(), vocab.tokens.size()));
  for (size_t i = 0; i < scores->items.size(); ++i) {
    const gguf::Value &item = scores->items[i];
    if (const auto *f = std::get_if<float>(&item.v))
      vocab.tokens[i].score = *f;
    else if (const auto *d = std::get_if<double>(&item.v))
      vocab.tokens[i].score = static_cast<float>(*d);
    else
      return invalid_format(std::string(kScoresKey) + "[" + std::to_string(i) + "] is " +
                            gguf::value_type_name(item.type()) + ", expected float32");
  }
  return Status::ok_status();
}

Status read_token_types(const gguf::GgufFile &file, Vocabulary &vocab) {
  if (file.find(kTypesKey) == nullptr)
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(const gguf::Array *types, file.get_array(kTypesKey));
  PSHARD_RETURN_IF_ERROR(check_length(kTypesKey, types->items.size(), vocab.tokens.size()));
  for (size_t i = 0; i < types->items.size(); ++i) {
    std::optional<int64_t> type = integer_of(types->items[i]);
    if (!type || *type < 0 || *type > static_cast<int64_t>(TokenType::kByte))
      return invalid_format(std::string(kTypesKey) + "[" + std::to_string(i) +
                            "] is not a token type (0..6)");
    vocab.tokens[i].type = static_cast<TokenType>(*type);
  }
  return Status::ok_status();
}

// SentencePiece's normalization rules: an array of int8 or uint8, kept as bytes.
Status read_charsmap(const gguf::GgufFile& file, Vocabulary& vocab) {
  if (file.find(kCharsmapKey) == nullptr)
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(const gguf::Array* bytes, file.get_array(kCharsmapKey));
  if (bytes->element_type != gguf::ValueType::kUint8 &&
      bytes->element_type != gguf::ValueType::kInt8)
    return invalid_format(std::string(kCharsmapKey) +
                          " must be an array of bytes (uint8 or int8), " + "found " +
                          gguf::value_type_name(bytes->element_type));
  vocab.precompiled_charsmap.reserve(bytes->items.size());
  for (const gguf::Value& item : bytes->items) {
    if (const auto* u = std::get_if<uint8_t>(&item.v))
      vocab.precompiled_charsmap.push_back(static_cast<char>(*u));
    else if (const auto* i = std::get_if<int8_t>(&item.v))
      vocab.precompiled_charsmap.push_back(static_cast<char>(*i));
  }
  return Status::ok_status();
}

TokenId find_text(const Vocabulary &vocab, std::string_view text) {
  for (int32_t i = 0; i < vocab.size(); ++i)
    if (vocab.tokens[i].text == text)
      return i;
  return kNoToken;
}

// A special id from `key`; `fallback` when absent. -1 and 0xFFFFFFFF mean
// "none" (converters write either, e.g. stories260K's padding id); other ids
// past the vocabulary are an error.
Result<TokenId> read_special_id(const gguf::GgufFile &file, const char *key, TokenId fallback,
                                int32_t n_vocab) {
  const gguf::Value *value = file.find(key);
  if (value == nullptr)
    return fallback;
  const std::optional<int64_t> integer = integer_of(*value);
  if (!integer.has_value() && value->type() == gguf::ValueType::kUint64)
    return kNoToken; // past INT64_MAX: all ones
  if (!integer.has_value())
    return invalid_format(std::string(key) + " must be an integer, found " +
                          gguf::value_type_name(value->type()));
  const int64_t id = *integer;
  if (id < 0 || id == 0xFFFFFFFFll)
    return kNoToken;
  if (id >= n_vocab)
    return invalid_format(std::string(key) + " = " + std::to_string(id) +
                          " is out of range for a vocabulary of " + std::to_string(n_vocab) +
                          " tokens");
  return static_cast<TokenId>(id);
}

Result<bool> read_flag(const gguf::GgufFile &file, const char *key, bool fallback) {
  if (file.find(key) == nullptr)
    return fallback;
  return file.get_bool(key);
}

// The special ids. Missing ones default, for SentencePiece ("llama"), to the tokens
// named <s>, </s> and <unk>, as llama.cpp-converted files sometimes omit them; for
// WordPiece ("bert"), BOS and EOS are BERT's [CLS] and [SEP], which llama.cpp's
// converter writes as cls_token_id and seperator_token_id (sic).
Status read_special_ids(const gguf::GgufFile& file, Vocabulary& vocab) {
  const bool spm = vocab.model == "llama";
  const bool ugm = vocab.model == "t5";
  const bool bert = vocab.model == "bert";
  const int32_t n = vocab.size();
  // The token named `sentencepiece_text` ("llama", "t5") or `bert_text`, as the model
  // kind has it.
  const auto named = [&](std::string_view sentencepiece_text, std::string_view bert_text) {
    return spm || ugm ? find_text(vocab, sentencepiece_text)
           : bert     ? find_text(vocab, bert_text)
                      : kNoToken;
  };
  // T5 starts a text with nothing.
  const TokenId bos_default = ugm ? kNoToken : named("<s>", "[CLS]");
  PSHARD_ASSIGN_OR_RETURN(vocab.bos_id,
                          read_special_id(file, "tokenizer.ggml.bos_token_id", bos_default, n));
  PSHARD_ASSIGN_OR_RETURN(vocab.eos_id, read_special_id(file, "tokenizer.ggml.eos_token_id",
                                                        named("</s>", "[SEP]"), n));
  if (bert) {
    PSHARD_ASSIGN_OR_RETURN(vocab.bos_id,
                            read_special_id(file, "tokenizer.ggml.cls_token_id", vocab.bos_id, n));
    PSHARD_ASSIGN_OR_RETURN(
        vocab.eos_id, read_special_id(file, "tokenizer.ggml.seperator_token_id", vocab.eos_id, n));
  }
  PSHARD_ASSIGN_OR_RETURN(vocab.unk_id, read_special_id(file, "tokenizer.ggml.unknown_token_id",
                                                        named("<unk>", "[UNK]"), n));
  PSHARD_ASSIGN_OR_RETURN(vocab.pad_id,
                          read_special_id(file, "tokenizer.ggml.padding_token_id",
                                          ugm ? find_text(vocab, "<pad>") : kNoToken, n));
  PSHARD_ASSIGN_OR_RETURN(vocab.eot_id,
                          read_special_id(file, "tokenizer.ggml.eot_token_id", kNoToken, n));
  PSHARD_ASSIGN_OR_RETURN(vocab.eom_id,
                          read_special_id(file, "tokenizer.ggml.eom_token_id", kNoToken, n));
  // Fill-in-the-middle markers: the file's current key, its older one, else by text.
  for (FimRole role : kFimRoles) {
    TokenId& id = fim_id(vocab.fim, role);
    const std::span<const char* const> keys = fim_keys(role);
    for (auto key = keys.rbegin(); key != keys.rend(); ++key) {
      PSHARD_ASSIGN_OR_RETURN(id, read_special_id(file, *key, id, n));
    }
  }
  find_fim_markers(vocab, vocab.fim);
  return Status::ok_status();
}

// add_bos_token defaults to true for "llama" and "bert" and, for "gpt2", to what the
// pre-tokenizer's models use. BERT ends its input with [SEP] (EOS here) unless
// add_sep_token (llama.cpp's key for it) or add_eos_token says otherwise; T5 ends it
// with </s>. Unigram vocabularies say whether they collapse whitespace (llama.cpp's
// default when they do not: no).
Status read_add_flags(const gguf::GgufFile& file, Vocabulary& vocab) {
  const bool bert = vocab.model == "bert";
  std::string ignored;
  const bool add_bos_default =
      vocab.model == "llama" || bert ||
      (vocab.model == "gpt2" && find_pre_tokenizer(vocab.pre, &ignored).add_bos);
  PSHARD_ASSIGN_OR_RETURN(vocab.add_bos,
                          read_flag(file, "tokenizer.ggml.add_bos_token", add_bos_default));
  PSHARD_ASSIGN_OR_RETURN(
      vocab.add_eos, read_flag(file, "tokenizer.ggml.add_eos_token", bert || vocab.model == "t5"));
  if (bert) {
    PSHARD_ASSIGN_OR_RETURN(vocab.add_eos,
                            read_flag(file, "tokenizer.ggml.add_sep_token", vocab.add_eos));
  }
  PSHARD_ASSIGN_OR_RETURN(vocab.add_space_prefix,
                          read_flag(file, "tokenizer.ggml.add_space_prefix", true));
  PSHARD_ASSIGN_OR_RETURN(vocab.remove_extra_whitespaces,
                          read_flag(file, "tokenizer.ggml.remove_extra_whitespaces", false));
  return Status::ok_status();
}

} // namespace

Status validate_vocabulary(const Vocabulary &vocab) {
  if (vocab.tokens.empty())
    return invalid_format("the vocabulary is empty");
  if (vocab.tokens.size() > static_cast<size_t>(std::numeric_limits<TokenId>::max()))
    return invalid_format("the vocabulary has more tokens than a TokenId can index");
  const std::pair<const char *, TokenId> specials[] = {
      {"bos", vocab.bos_id},     {"eos", vocab.eos_id}, {"unknown", vocab.unk_id},
      {"padding", vocab.pad_id}, {"eot", vocab.eot_id}, {"eom", vocab.eom_id}};
  for (const auto &[name, id] : specials)
    if (id != kNoToken && (id < 0 || id >= vocab.size()))
      return invalid_format(std::string("the ") + name + " token id " + std::to_string(id) +
                            " is out of range for a vocabulary of " + std::to_string(vocab.size()) +
                            " tokens");
  for (FimRole role : kFimRoles)
    if (const TokenId id = fim_id(vocab.fim, role);
        id != kNoToken && (id < 0 || id >= vocab.size()))
      return invalid_format("the fill-in-the-middle " + std::string(fim_role_name(role)) +
                            " token id " + std::to_string(id) + " is out of range for a " +
                            "vocabulary of " + std::to_string(vocab.size()) + " tokens");
  return Status::ok_status();
}

Result<Vocabulary> load_vocabulary(const gguf::GgufFile &file) {
  Vocabulary vocab;
  PSHARD_ASSIGN_OR_RETURN(vocab.model, file.get_string("tokenizer.ggml.model"));
  if (file.find("tokenizer.ggml.pre") != nullptr) {
    PSHARD_ASSIGN_OR_RETURN(vocab.pre, file.get_string("tokenizer.ggml.pre"));
  }
  PSHARD_RETURN_IF_ERROR(read_tokens(file, vocab));
  PSHARD_RETURN_IF_ERROR(read_scores(file, vocab));
  PSHARD_RETURN_IF_ERROR(read_token_types(file, vocab));
  PSHARD_RETURN_IF_ERROR(read_merges(file, vocab));
  PSHARD_RETURN_IF_ERROR(read_charsmap(file, vocab));
  if (vocab.tokens.empty())
    return invalid_format(std::string(kTokensKey) + " is empty");

  PSHARD_RETURN_IF_ERROR(read_special_ids(file, vocab));
  PSHARD_RETURN_IF_ERROR(read_add_flags(file, vocab));
  PSHARD_RETURN_IF_ERROR(validate_vocabulary(vocab));
  std::string model_name;
  if (file.find("general.name") != nullptr) {
    PSHARD_ASSIGN_OR_RETURN(model_name, file.get_string("general.name"));
  }
  apply_token_overrides(vocab, model_name);
  return vocab;
}

} // namespace pshard
