// How many of a prompt-lookup draft's tokens to check in the next pass. A pass of n
// tokens costs more than one of 1 — little where weights stream over PCIe or memory
// bandwidth bounds the pass, several times as much where compute does — and each
// drafted token is kept only if every one before it was. The policy keeps decayed
// counts of drafted tokens tried and kept — the first of a draft (odds a0) apart from
// later ones (a) — and a moving average of measured pass times by token count, and
// checks the k that maximises the expected tokens per second,
// (1 + a0 (1 + a + ... + a^(k-1))) / (time(k + 1) + k d), a pass's time being its
// measured ratio to a one-token pass's times the one-token time now, and d what drafting
// a token costs (a draft model's step, measured; prompt lookup's is nothing). With a
// draft model the choice comes first, so that only tokens worth checking are drafted.
// A token count not yet timed is priced like the largest timed below it, so longer
// drafts get tried once and kept only if they pay; a drafted pass before any one-token
// pass is followed by a plain one, which prices it. Acceptance is learnt even while no
// draft is checked: the token a pass samples is compared with the draft's first.
//
//   DraftPolicy policy(/*draft_max=*/8);
//   const int64_t k = policy.choose(draft.size());   // check draft[0..k)
//   ... decode_all, timed ...
//   policy.observe_pass(k + 1, ms);
//   policy.observe_draft(accepted, /*rejected=*/accepted < k);
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace pshard {

class DraftPolicy {
public:
  explicit DraftPolicy(int64_t draft_max);

  // The tokens of an `available`-token draft to check (0 .. min(available, draft_max)).
  int64_t choose(int64_t available) const;
  // A pass of `n_tokens` took `ms`.
  void observe_pass(int64_t n_tokens, double ms);
  // Drafting `n_tokens` took `ms` (a draft model; catching up on the text included).
  void observe_drafting(int64_t n_tokens, double ms);
  // A draft's first `accepted` tokens were sampled as drafted and then, if `rejected`,
  // one was not. (A drafted token the pass did not check but whose position was sampled
  // anyway — the one after the last checked — counts too: it costs nothing to compare.)
  void observe_draft(int64_t accepted, bool rejected);

  // The current estimates, in (0, 1): that the first drafted token is kept, and that a
  // later one is, given the one before it was. Apart, because the first is the likeliest
  // (the matched context is nearest) and the free comparisons only ever see it.
  double acceptance() const;
  double later_acceptance() const;
  // The expected tokens per millisecond of checking k drafted tokens.
  double expected_rate(int64_t k) const;

private:
  double pass_ms(int64_t n_tokens) const; // < 0 before any pass was timed

  struct Odds { // decayed counts of tried and kept drafted tokens
    double tried = 0, kept = 0;
    double estimate() const;
    void observe(double trials, double successes);
  };

  int64_t draft_max_;
  Odds first_, later_;
  double draft_token_ms_ = 0; // a moving average; 0: drafting is free (or not timed)
  // Pass times: of one token (a moving average), and of more as ratios to it at the
  // time, so that times measured at a shorter context (or a quieter machine) stay
  // comparable as one-token passes slow down. 0: not timed yet.
  double one_ms_ = 0;
  std::vector<double> ratio_;                       // by token count
  std::vector<std::pair<int64_t, double>> untimed_; // before any one-token pass
};

} // namespace pshard
