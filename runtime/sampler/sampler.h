// Sampler: picks the next token from a row of logits.
//
// The chain: logit biases, then the stages in `order` (runtime/sampler/sampler_order.h),
// then a draw. pshard's order: penalties (repetition, frequency, presence) -> DRY ->
// top-n-sigma -> top-k -> temperature (fixed, or dynamic by the entropy) -> typical ->
// top-p -> min-p -> XTC; llama.cpp's puts the temperature last. A stage whose setting is
// off does nothing; each is off by default but the penalties' window, top-k, top-p and
// min-p (runtime/sampler/sampler_stages.h, dry_penalty.h, mirostat.h). The stages that
// read probabilities (typical, top-p, min-p, XTC) take the softmax of the tokens left at
// the temperature applied so far (1 before the temperature's stage, as in llama.cpp); a
// stage left out of the order does not run (no temperature: 1). Two settings override
// the order: temperature <= 0 takes the argmax after every penalty and DRY, and Mirostat
// replaces every stage but the penalties and DRY. Draws come from a seeded Pcg32
// (runtime/sampler/random.h), so a seed gives the same tokens on every platform.
//
//   SamplerParams params;
//   params.seed = 1234;
//   PSHARD_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(params));
//   TokenId next = sampler.sample(logits, generated_so_far);
//
// A Sampler keeps scratch buffers and its generator; use one per sequence and
// thread. With a TokenFilter (set_filter: a grammar, for one) it samples only among
// the tokens the filter allows, after the leading penalties and before the rest of the
// chain, so the draw is from the model's distribution restricted to them.
#pragma once

#include "runtime/core/status.h"
#include "runtime/sampler/candidate.h"
#include "runtime/sampler/dry_penalty.h"
#include "runtime/sampler/mirostat.h"
#include "runtime/sampler/random.h"
#include "runtime/sampler/sampler_order.h"
#include "runtime/sampler/token_filter.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

namespace pshard {

// OpenAI's logit_bias: added to a token's logit before anything else; -inf (or, as
// OpenAI's -100 does in practice, a large negative bias) bans the token.
struct LogitBias {
  TokenId token;
  float bias;
};

struct SamplerParams {
  float temperature = 0.8f;    // <= 0: greedy (argmax after the penalty)
  int32_t top_k = 40;          // keep the k most likely; 0 = off
  float top_p = 0.95f;         // keep the smallest set with probability >= p; 1 = off
  float min_p = 0.05f;         // drop tokens below min_p x the top probability; 0 = off
  float repeat_penalty = 1.0f; // 1 = off; > 1 discourages repeats
  int32_t repeat_last_n = 64;  // how much history the penalties look at; 0 = off, -1 = all
  // OpenAI's penalties over the same window: a token's logit loses frequency_penalty
  // for each time it occurs there and presence_penalty once if it occurs at all.
  float frequency_penalty = 0.0f; // 0 = off
  float presence_penalty = 0.0f;  // 0 = off
  std::vector<LogitBias> logit_bias;
  uint64_t seed = 0;
  // llama.cpp's other samplers, by its names and defaults (sampler_stages.h says how each
  // works):
  float typical_p = 1.0f;         // locally typical sampling; 1 = off
  float top_n_sigma = 0.0f;       // keep logits within n standard deviations of the top; <= 0 = off
  float xtc_probability = 0.0f;   // how often XTC drops the top choices; 0 = off
  float xtc_threshold = 0.1f;     // ... those with probability >= this, but the least likely
  float dynatemp_range = 0.0f;    // temperature +- this by the entropy; 0 = fixed
  float dynatemp_exponent = 1.0f; // > 0
  int32_t mirostat = 0;           // 0 = off, 1 or 2: Mirostat's version (mirostat.h)
  MirostatParams mirostat_params;
  DryParams dry;
  // Per token id: a DRY sequence breaker (runtime/sampler/dry_breaker_tokens.h makes
  // it from strings); null: none. dry_spans: the breakers that span tokens; null: none.
  std::shared_ptr<const std::vector<bool>> dry_breakers;
  std::shared_ptr<const DrySpans> dry_spans;
  SamplerOrder order = default_sampler_order(); // the stages and their order
};

// kInvalidArgument naming the field when a parameter is out of its range:
// temperature finite, top_k >= 0, top_p in (0, 1], min_p in [0, 1],
// repeat_penalty finite and > 0, repeat_last_n >= -1, frequency and presence penalties
// finite, logit biases not NaN nor +inf, on tokens >= 0 (checked against the
// vocabulary when sampling: a token past it is ignored); typical_p in (0, 1],
// top_n_sigma finite, XTC's probability and threshold in [0, 1], dynatemp_range finite
// and >= 0, dynatemp_exponent finite and > 0, mirostat 0, 1 or 2 with tau and eta finite
// and >= 0, DRY's multiplier finite and >= 0, base finite and >= 1, allowed_length >= 1,
// penalty_last_n >= -1; no stage twice in the order.
Status validate_sampler_params(const SamplerParams &params);

class Sampler {
public:
  // Validates `params` first.
  static Result<Sampler> create(const SamplerParams &params);
  // `params` must pass validate_sampler_params (create() checks it). Values out
  // of range are not undefined behaviour, just meaningless.
  explicit Sampler(const SamplerParams &params);

  // The next token, given the logits over the whole vocabulary and the tokens
  // so far (prompt included, for the penalty). kNoToken for empty logits, and when
  // the filter allows no token (filter_status() then says why).
  TokenId sample(std::span<const float> logits, std::span<const TokenId> history);

  // Samples only what `filter` allows from now on, and tells it each token taken;
  // null removes it. Shared so a Sampler stays copyable; one filter per sequence.
  void set_filter(std::shared_ptr<TokenFilter> filter) { filter_ = std::move(filter); }
  const std::shared_ptr<TokenFilter>& filter() const { return filter_; }
  // Why the last sample() gave kNoToken under a filter (ok otherwise).
  const Status& filter_status() const { return filter_status_; }

  // Restarts the random sequence and Mirostat's threshold, as if constructed with `seed`.
  void reset(uint64_t seed);

  // The distribution the last sample() drew `chosen` from, after every stage (what
  // llama-server calls post-sampling probabilities): chosen's probability, and in `top`
  // the n most likely tokens of it (fewer when fewer are left), most likely first, with
  // theirs. Greedy: chosen alone, with 1. Call before the next sample().
  double drawn_distribution(TokenId chosen, size_t n, std::vector<std::pair<TokenId, double>>& top);

  const SamplerParams &params() const { return params_; }

private:
  // Where the chain stands as it runs (run_chain).
  struct ChainState {
    bool identity = true;    // candidates_ is the whole vocabulary, indexed by token id
    bool sorted = false;     // most likely first
    bool probs = false;      // prob holds the softmax at `temperature` (of a superset, maybe)
    bool normalized = false; // ... of the candidates as they stand, so it sums to 1
    double temperature = 1.0;
    // After a stage that dropped or moved candidates.
    void cut(bool now_sorted, bool now_normalized) {
      identity = false;
      sorted = now_sorted;
      normalized = now_normalized;
    }
  };

  // Logits and biases into candidates_, then the penalty stages (penalties, DRY) that lead
  // the order, or all of them when sampling greedily; chain_start_ is where the rest begin.
  void fill_penalized(std::span<const float> logits);
  // The penalties or DRY: by index into candidates_ with `by_id`, else by lookup.
  void apply_penalty_stage(SamplerStage stage, bool by_id);
  // Repetition, frequency and presence penalties over the last repeat_last_n tokens.
  void apply_repetition_penalties(bool by_id);
  TokenId argmax() const;
  // Keeps only the candidates the filter allows; false when none is left.
  bool apply_filter();
  // `whole`: candidates_ is still the whole vocabulary by token id.
  TokenId sample_unfiltered(bool whole);
  TokenId sample_mirostat(bool whole);
  // The order's stages from chain_start_, then the draw.
  TokenId run_chain(bool whole);
  bool stage_on(SamplerStage stage) const;
  // Whether the next stage after order[i] that is on is min-p.
  bool min_p_follows(size_t i) const;
  // Cuts candidates_ to the top_k most likely, sorted (highest logit first), and returns
  // true; false with top-k off, leaving them as they are.
  bool keep_top_k();
  void ensure_probs(ChainState& st);
  void typical_stage(ChainState& st);
  // top-p, on sorted candidates or, finding the cut without sorting them all, on unsorted
  // ones: after min-p's cut when min-p comes next (the two cuts commute), else by ever
  // longer sorted heads until one holds the mass.
  void top_p_stage(ChainState& st, bool min_p_next);
  void min_p_stage(ChainState& st);
  void xtc_stage(ChainState& st);
  // The temperature, or the dynamic one for the candidates as they stand.
  double step_temperature() const;

  SamplerParams params_;
  Pcg32 rng_;
  std::vector<Candidate> candidates_;
  std::span<const TokenId> history_; // the current sample()'s
  size_t chain_start_ = 0;
  bool last_greedy_ = false; // what drawn_distribution() reads: the argmax, or
  double last_total_ = 1.0;  // the candidates' mass the draw was scaled by
  std::vector<TokenId> recent_;
  DryPenalty dry_;
  float mirostat_mu_ = 0.0f;
  std::shared_ptr<TokenFilter> filter_;
  Status filter_status_;
};

} // namespace pshard
