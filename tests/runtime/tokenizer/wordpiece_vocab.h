// Test helper for WordPiece vocabularies built in memory (used by the tokenizer and
// fuzz tests), laid out as llama.cpp's converter writes BERT's.
#pragma once

#include "runtime/tokenizer/vocabulary.h"

#include <initializer_list>

namespace pshard::testing_vocab {

// [PAD] [UNK] [CLS] [SEP] [MASK] (ids 0..4, control tokens; [CLS] and [SEP] as BOS and
// EOS, both added), then `pieces` as normal tokens: word-initial ones spelled with "▁",
// the ones inside a word (BERT's "##") bare.
inline Vocabulary wordpiece_vocab(std::initializer_list<const char*> pieces) {
  Vocabulary vocab;
  vocab.model = "bert";
  for (const char* control : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"})
    vocab.tokens.push_back({control, 0.0f, TokenType::kControl});
  vocab.pad_id = 0;
  vocab.unk_id = 1;
  vocab.bos_id = 2;
  vocab.eos_id = 3;
  vocab.add_bos = true;
  vocab.add_eos = true;
  for (const char* piece : pieces)
    vocab.tokens.push_back({piece, 0.0f, TokenType::kNormal});
  return vocab;
}

} // namespace pshard::testing_vocab
