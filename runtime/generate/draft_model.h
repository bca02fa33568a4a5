// Drafts from a small model of the same vocabulary (llama.cpp's -md/--model-draft): its
// own session kept in step with the conversation, its most likely token each step.
// A target that streams its weights over PCIe, or reads them from RAM, checks many
// drafted tokens in one pass for about the price of one; the tokens stay those of plain
// decoding (generator.h), whatever the draft model says.
//
//   ModelDrafter drafter(*draft_session, target_vocab, /*p_min=*/kDefaultDraftPMin);
//   GenerateParams gp;
//   gp.lookup.draft_max = 16;
//   gp.drafter = &drafter;
#pragma once

#include "runtime/core/status.h"
#include "runtime/model/decoder.h"
#include "runtime/tokenizer/tokenizer.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace pshard {

// Where speculative decoding's drafts come from when not from the context's own text
// (prompt_lookup.h).
class Drafter {
public:
  virtual ~Drafter() = default;
  // At most `limit` tokens likely to follow `history` (every token so far); empty when
  // there are none.
  virtual Result<std::vector<TokenId>> draft(std::span<const TokenId> history, int64_t limit) = 0;
};

// A draft stops at a token the draft model gives less than this probability (llama.cpp's
// --draft-p-min): an unsure guess is rarely accepted, and each one costs a draft-model
// step and a logits row of the target's pass.
inline constexpr float kDefaultDraftPMin = 0.75f;

// How much of what a decoder holds (`held`) to keep for `wanted`: the start they share,
// leaving at least wanted's last token to decode, for its logits (a drafter catching up
// on a text, a prompt cache read for a prompt).
inline size_t start_to_keep(std::span<const TokenId> held, std::span<const TokenId> wanted) {
  if (wanted.empty())
    return 0;
  const size_t same =
      std::mismatch(held.begin(), held.end(), wanted.begin(), wanted.end()).first - held.begin();
  return std::min(same, wanted.size() - 1);
}

// kInvalidArgument unless 0 <= p_min <= 1.
Status check_draft_p_min(float p_min);

// The draft model's next drafted token from its logits: the most likely one (ties to the
// lower id), or none where the target's vocabulary (`target_vocab` tokens) lacks it or
// its probability is below `p_min` (the draft ends there).
std::optional<TokenId> confident_token(std::span<const float> logits, int64_t target_vocab,
                                       float p_min);

class ModelDrafter final : public Drafter {
public:
  // `session` (the draft model's) must outlive the drafter; drafted tokens stop at one
  // the target's vocabulary (`target_vocab` tokens) lacks, or one the draft model gives
  // less than `p_min` probability (0: never).
  ModelDrafter(Decoder& session, int64_t target_vocab, float p_min = 0.0f)
      : session_(session), target_vocab_(target_vocab), p_min_(p_min) {}

  // Rewinds the session to the start it shares with `history` (to 0 where it cannot
  // go there), decodes the rest, then takes its most likely token `limit` times.
  Result<std::vector<TokenId>> draft(std::span<const TokenId> history, int64_t limit) override;

private:
  Decoder& session_;
  int64_t target_vocab_;
  float p_min_;
  std::vector<TokenId> held_; // what the session's positions hold
};

// kInvalidArgument unless a draft model's tokenizer gives every id both vocabularies have
// the target's piece and the vocabularies differ by at most 128 ids (llama.cpp's rule:
// added tokens at the end may differ).
Status check_draft_vocabulary(const Tokenizer& target, const Tokenizer& draft);

} // namespace pshard
