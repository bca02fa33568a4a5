#include "runtime/generate/prompt_lookup.h"

#include <algorithm>
#include <string>

namespace pshard {

Status validate_prompt_lookup(const PromptLookup& lookup) {
  if (lookup.draft_max < 0)
    return invalid_argument("draft_max must be >= 0 (0: no speculative decoding), got " +
                            std::to_string(lookup.draft_max));
  if (lookup.ngram_min < 1 || lookup.ngram_max < lookup.ngram_min)
    return invalid_argument(
        "the lookup n-gram sizes must satisfy 1 <= ngram_min <= ngram_max, got " +
        std::to_string(lookup.ngram_min) + " and " + std::to_string(lookup.ngram_max));
  return Status::ok_status();
}

Status check_draft_max(int32_t draft_max) {
  if (draft_max < 0 || draft_max > kMaxDraftTokens)
    return invalid_argument("draft_max must be between 0 and " + std::to_string(kMaxDraftTokens) +
                            ", got " + std::to_string(draft_max));
  return Status::ok_status();
}

std::vector<TokenId> draft_from_history(std::span<const TokenId> history,
                                        const PromptLookup& lookup, int64_t limit) {
  const int64_t want = std::min<int64_t>(lookup.draft_max, limit);
  const auto size = static_cast<int64_t>(history.size());
  if (want <= 0)
    return {};
  // The best match cut short by the end of the history (a run like "a a a a" matches
  // itself one token back), kept in case no n finds a whole draft.
  int64_t best_from = -1, best_len = 0;
  for (int64_t n = std::min<int64_t>(lookup.ngram_max, size - 1); n >= lookup.ngram_min; --n) {
    const auto suffix = history.subspan(static_cast<size_t>(size - n));
    // The most recent earlier occurrence: text tends to continue as it last did.
    for (int64_t start = size - n - 1; start >= 0; --start) {
      if (!std::equal(suffix.begin(), suffix.end(), history.begin() + start))
        continue;
      const int64_t from = start + n, len = std::min(want, size - from);
      if (len == want)
        return {history.begin() + from, history.begin() + from + len};
      if (len > best_len) {
        best_from = from;
        best_len = len;
      }
    }
  }
  if (best_len == 0)
    return {};
  return {history.begin() + best_from, history.begin() + best_from + best_len};
}

} // namespace pshard
