#include "runtime/generate/draft_model.h"

#include <algorithm>
#include <cmath>

namespace pshard {

std::optional<TokenId> confident_token(std::span<const float> logits, int64_t target_vocab,
                                       float p_min) {
  const auto top = std::max_element(logits.begin(), logits.end());
  const auto id = static_cast<TokenId>(top - logits.begin());
  if (id >= target_vocab)
    return std::nullopt;
  if (p_min > 0) { // softmax of the top logit
    double sum = 0;
    for (float l : logits)
      sum += std::exp(static_cast<double>(l) - *top);
    if (1.0 / sum < p_min)
      return std::nullopt;
  }
  return id;
}

Result<std::vector<TokenId>> ModelDrafter::draft(std::span<const TokenId> history, int64_t limit) {
  limit = std::min<int64_t>(limit, session_.n_ctx() - static_cast<int64_t>(history.size()));
  if (limit <= 0 || history.empty())
    return std::vector<TokenId>{};
  size_t same = start_to_keep(held_, history);
  if (same < held_.size()) {
    if (!session_.rewinds_anywhere() || !session_.rewind(static_cast<int64_t>(same)).ok()) {
      PSHARD_RETURN_IF_ERROR(session_.rewind(0));
      same = 0;
    }
    held_.resize(same);
  }
  PSHARD_ASSIGN_OR_RETURN(std::span<const float> logits, session_.decode(history.subspan(same)));
  held_.insert(held_.end(), history.begin() + static_cast<std::ptrdiff_t>(same), history.end());
  std::vector<TokenId> out;
  for (int64_t k = 0; k < limit; ++k) {
    const std::optional<TokenId> token = confident_token(logits, target_vocab_, p_min_);
    if (!token)
      break;
    const TokenId next = *token;
    out.push_back(next);
    if (k + 1 == limit)
      break;
    const TokenId feed[] = {next};
    PSHARD_ASSIGN_OR_RETURN(logits, session_.decode(feed));
    held_.push_back(next);
  }
  return out;
}

Status check_draft_p_min(float p_min) {
  if (!(p_min >= 0.0f && p_min <= 1.0f)) // NaN fails too
    return invalid_argument("the draft's minimum probability (--draft-p-min) must be between "
                            "0 and 1, got " +
                            std::to_string(p_min));
  return Status::ok_status();
}

Status check_draft_vocabulary(const Tokenizer& target, const Tokenizer& draft) {
  const int64_t a = target.n_vocab(), b = draft.n_vocab();
  if (std::abs(a - b) > 128)
    return invalid_argument("the draft model's vocabulary has " + std::to_string(b) +
                            " tokens and the model's " + std::to_string(a) +
                            ": a draft model needs the same vocabulary (the same family's "
                            "smaller model)");
  for (int64_t id = 0; id < std::min(a, b); ++id) {
    const auto t = static_cast<TokenId>(id);
    if (target.token_to_piece(t) != draft.token_to_piece(t))
      return invalid_argument("the draft model's token " + std::to_string(id) + " is '" +
                              draft.token_to_piece(t) + "' where the model's is '" +
                              target.token_to_piece(t) +
                              "': a draft model needs the same vocabulary");
  }
  return Status::ok_status();
}

} // namespace pshard
