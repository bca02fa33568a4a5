// VocabularyTokenizer: the part of a Tokenizer that only reads its Vocabulary
// (size, special ids, the BOS default, which tokens end generation), shared by
// SpmTokenizer and BpeTokenizer, which add encode() and decode().
#pragma once

#include "runtime/tokenizer/token_overrides.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/vocabulary.h"

#include <vector>

namespace pshard {

class VocabularyTokenizer : public Tokenizer {
public:
  // Subclasses keep views into vocab_, so the object stays where it was built.
  VocabularyTokenizer(const VocabularyTokenizer&) = delete;
  VocabularyTokenizer& operator=(const VocabularyTokenizer&) = delete;

  int32_t n_vocab() const override { return vocab_.size(); }
  TokenId bos() const override { return vocab_.bos_id; }
  TokenId eos() const override { return vocab_.eos_id; }
  bool add_bos_by_default() const override { return vocab_.add_bos; }
  bool is_end_of_generation(TokenId id) const override {
    return id >= 0 && id < vocab_.size() && end_of_generation_[id];
  }
  const Vocabulary& vocabulary() const override { return vocab_; }

protected:
  explicit VocabularyTokenizer(Vocabulary vocab)
      : vocab_(std::move(vocab)), end_of_generation_(end_of_generation_flags(vocab_)) {}

  const Vocabulary vocab_;

private:
  std::vector<bool> end_of_generation_;
};

} // namespace pshard
