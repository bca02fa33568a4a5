#include "tools/pshard-mkmodel/synthetic_vocab.h"

#include "runtime/gguf/gguf_file.h"

#include <cstdio>
#include <string>

namespace pshard {

Status add_synthetic_vocab(int64_t n_vocab, const std::vector<std::string>& control_tokens,
                           const std::vector<std::string>& user_tokens, gguf::GgufWriter& w) {
  const auto n_extra = static_cast<int64_t>(control_tokens.size() + user_tokens.size());
  const int64_t least = kMinSyntheticVocab + n_extra;
  if (n_vocab < least)
    return invalid_argument("a generated vocabulary needs at least " + std::to_string(least) +
                            " tokens, asked for " + std::to_string(n_vocab));
  for (const auto* list : {&control_tokens, &user_tokens})
    for (const std::string& t : *list)
      if (t.empty())
        return invalid_argument("an empty added token; give their texts, e.g. "
                                "--user-tokens '<think>,</think>'");
  gguf::Array tokens{gguf::ValueType::kString, {}}, scores{gguf::ValueType::kFloat32, {}},
      types{gguf::ValueType::kInt32, {}};
  auto add = [&](std::string piece, float score, int32_t type) {
    tokens.items.push_back({std::move(piece)});
    scores.items.push_back({score});
    types.items.push_back({type});
  };
  add("<unk>", 0, 2);
  add("<s>", 0, 3);
  add("</s>", 0, 3);
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "<0x%02X>", b);
    add(buf, 0, 6);
  }
  const std::string word_start = "\xe2\x96\x81"; // U+2581, SentencePiece's space
  float score = -1;
  for (char c = ' '; c <= '~'; ++c) {
    add(word_start + std::string(1, c), score, 1);
    score -= 0.01f;
    add(c == ' ' ? std::string("  ") : std::string(1, c), score, 1);
    score -= 0.01f;
  }
  const int64_t fill_to = n_vocab - n_extra;
  for (int64_t i = static_cast<int64_t>(tokens.items.size()); i < fill_to; ++i)
    add(word_start + "tok" + std::to_string(i), score - static_cast<float>(i), 1);
  for (const std::string& t : control_tokens)
    add(t, 0, 3);
  for (const std::string& t : user_tokens)
    add(t, 0, 4);
  w.set("tokenizer.ggml.model", {std::string("llama")});
  w.set("tokenizer.ggml.tokens", {std::move(tokens)});
  w.set("tokenizer.ggml.scores", {std::move(scores)});
  w.set("tokenizer.ggml.token_type", {std::move(types)});
  w.set("tokenizer.ggml.unknown_token_id", {uint32_t{0}});
  w.set("tokenizer.ggml.bos_token_id", {uint32_t{1}});
  w.set("tokenizer.ggml.eos_token_id", {uint32_t{2}});
  return Status::ok_status();
}

Result<int64_t> copy_tokenizer(const std::string& path, gguf::GgufWriter& w) {
  PSHARD_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly));
  for (const auto& kv : file->metadata())
    if (kv.key.rfind("tokenizer.", 0) == 0)
      w.set(kv.key, kv.value);
  auto tokens = file->get_array("tokenizer.ggml.tokens");
  if (!tokens.ok())
    return tokens.status().with_context("copying the tokenizer of " + path);
  return static_cast<int64_t>((*tokens)->items.size());
}

} // namespace pshard
