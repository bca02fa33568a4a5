// libFuzzer target for SentencePiece's precompiled charsmap (a GGUF file's
// tokenizer.ggml.precompiled_charsmap, which a malicious file controls): any blob either
// parses or is refused, and a parsed one normalizes and tokenizes any text without reading
// outside itself, into ids inside the vocabulary.
// Input: two bytes of blob length (little-endian), the blob, then the text; the first
// byte's low bits also pick the normalizer's options.
#include "runtime/tokenizer/precompiled_charsmap.h"
#include "runtime/tokenizer/ugm_tokenizer.h"
#include "tests/runtime/tokenizer/unigram_vocab.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace {

void check(bool promise) {
  if (!promise)
    __builtin_trap();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace pshard;
  if (size < 2)
    return 0;
  const size_t blob_size = std::min<size_t>(data[0] | (size_t{data[1]} << 8), size - 2);
  const std::string_view blob(reinterpret_cast<const char*>(data) + 2, blob_size);
  const std::string_view text(reinterpret_cast<const char*>(data) + 2 + blob_size,
                              size - 2 - blob_size);
  auto map = PrecompiledCharsmap::parse(blob);
  if (!map.ok())
    return 0;
  for (size_t at = 0; at < text.size(); ++at) {
    const CharsmapMatch m = map->longest_match(text.substr(at));
    check(m.consumed <= text.size() - at);
  }
  Vocabulary v = testing_vocab::unigram_vocab(
      {{"\xE2\x96\x81", -2}, {"a", -3}, {"b", -3}, {"ab", -2.5f}, {"\xE2\x96\x81" "a", -2}},
      /*with_bytes=*/(data[0] & 4) != 0);
  v.add_space_prefix = (data[0] & 1) != 0;
  v.remove_extra_whitespaces = (data[0] & 2) != 0;
  v.precompiled_charsmap.assign(blob);
  auto tok = UgmTokenizer::create(std::move(v));
  check(tok.ok());
  for (TokenId id : (*tok)->encode(text, true, (data[0] & 8) != 0))
    check(id >= 0 && id < (*tok)->n_vocab());
  return 0;
}
