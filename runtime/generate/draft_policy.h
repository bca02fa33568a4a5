// How many of a prompt-lookup draft's tokens to check in the next pass. A pass of n
// tokens costs more than one of 1 — little where weights stream over PCIe or memory
// bandwidth bounds the pass, several times as much where compute does — and each
// drafted token is kept only if every one before it was. The policy keeps a decayed
// count of the drafted tokens checked and accepted (acceptance a) and a moving average
// of measured pass times by token count, and checks the k that maximises the expected
// tokens per second, (1 + a + ... + a^k) / time(k + 1). A token count not yet timed is
// priced like the largest timed below it, so longer drafts get tried once and kept only
// if they pay. Acceptance is learnt even while no draft is checked: the token a pass
// samples is compared with the draft's first.
//
//   DraftPolicy policy(/*draft_max=*/8);
//   const int64_t k = policy.choose(draft.size());   // check draft[0..k)
//   ... decode_all, timed ...
//   policy.observe_pass(k + 1, ms);
//   policy.observe_draft(accepted, /*rejected=*/accepted < k);
#pragma once

#include <cstdint>
#include <vector>

namespace pshard {

class DraftPolicy {
public:
  explicit DraftPolicy(int64_t draft_max);

  // The tokens of an `available`-token draft to check (0 .. min(available, draft_max)).
  int64_t choose(int64_t available) const;
  // A pass of `n_tokens` took `ms`.
  void observe_pass(int64_t n_tokens, double ms);
  // A draft's first `accepted` tokens were sampled as drafted and then, if `rejected`,
  // one was not. (A drafted token the pass did not check but whose position was sampled
  // anyway — the one after the last checked — counts too: it costs nothing to compare.)
  void observe_draft(int64_t accepted, bool rejected);

  double acceptance() const; // the current estimate, in (0, 1)
  // The expected tokens per millisecond of checking k drafted tokens.
  double expected_rate(int64_t k) const;

private:
  double pass_ms(int64_t n_tokens) const; // < 0 before any pass was timed

  int64_t draft_max_;
  double tried_ = 0, kept_ = 0; // decayed counts of checked and accepted positions
  std::vector<double> ms_;      // by token count; 0: not timed yet
};

} // namespace pshard
