// Sampler: picks the next token from a row of logits.
//
// The chain, in order: repetition penalty -> (temperature <= 0: argmax) ->
// top-k -> temperature -> softmax -> top-p -> min-p -> renormalise -> draw.
// Draws come from a seeded Pcg32 (runtime/sampler/random.h), so a seed gives
// the same tokens on every platform.
//
//   SamplerParams params;
//   params.seed = 1234;
//   PSHARD_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(params));
//   TokenId next = sampler.sample(logits, generated_so_far);
//
// A Sampler keeps scratch buffers and its generator; use one per sequence and
// thread.
#pragma once

#include "runtime/core/status.h"
#include "runtime/sampler/random.h"
#include "runtime/tokenizer/token_id.h"

#include <cstdint>
#include <span>
#include <vector>

namespace pshard {

struct SamplerParams {
  float temperature = 0.8f;    // <= 0: greedy (argmax after the penalty)
  int32_t top_k = 40;          // keep the k most likely; 0 = off
  float top_p = 0.95f;         // keep the smallest set with probability >= p; 1 = off
  float min_p = 0.05f;         // drop tokens below min_p x the top probability; 0 = off
  float repeat_penalty = 1.0f; // 1 = off; > 1 discourages repeats
  int32_t repeat_last_n = 64;  // how much history the penalty looks at; 0 = off, -1 = all
  uint64_t seed = 0;
};

// kInvalidArgument naming the field when a parameter is out of its range:
// temperature finite, top_k >= 0, top_p in (0, 1], min_p in [0, 1],
// repeat_penalty finite and > 0, repeat_last_n >= -1.
Status validate_sampler_params(const SamplerParams &params);

class Sampler {
public:
  // Validates `params` first.
  static Result<Sampler> create(const SamplerParams &params);
  // `params` must pass validate_sampler_params (create() checks it). Values out
  // of range are not undefined behaviour, just meaningless.
  explicit Sampler(const SamplerParams &params);

  // The next token, given the logits over the whole vocabulary and the tokens
  // so far (prompt included, for the penalty). kNoToken for empty logits.
  TokenId sample(std::span<const float> logits, std::span<const TokenId> history);

  // Restarts the random sequence, as if constructed with `seed`.
  void reset(uint64_t seed);

  const SamplerParams &params() const { return params_; }

private:
  struct Candidate {
    TokenId id;
    float logit;
    double prob;
  };

  void fill_penalized(std::span<const float> logits, std::span<const TokenId> history);
  TokenId argmax() const;
  // Leaves candidates_ sorted by logit (highest first), cut to top_k.
  void keep_top_k();
  // Softmax with temperature, then the top-p and min-p cuts; returns the mass left.
  double compute_probabilities();
  TokenId draw(double total);

  SamplerParams params_;
  Pcg32 rng_;
  std::vector<Candidate> candidates_;
  std::vector<TokenId> recent_;
};

} // namespace pshard
