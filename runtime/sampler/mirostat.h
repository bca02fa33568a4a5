// Mirostat (Basu et al., "Mirostat: A Neural Text Decoding Algorithm that Directly
// Controls Perplexity", ICLR 2021; llama.cpp's --mirostat 1|2): each step truncates the
// distribution so the chosen token's surprise (-log2 p) stays near a target tau, learning
// a threshold mu from the surprise it observes (mu -= eta x (surprise - tau)). It
// replaces the truncation stages (top-k, top-p, typical, min-p, XTC); mu starts at 2 tau.
#pragma once

#include "runtime/sampler/candidate.h"
#include "runtime/sampler/random.h"

#include <cstddef>
#include <vector>

namespace pshard {

struct MirostatParams {
  float tau = 5.0f; // target surprise, in bits
  float eta = 0.1f; // learning rate
};

// Version 1: estimates the distribution's Zipf exponent s from its 100 most likely
// tokens and keeps the top k = ((e 2^mu) / (1 - N^-e))^(1/s) (e = s - 1; N: the
// vocabulary's size, `n_vocab`), then draws. Version 2: keeps the tokens whose surprise
// is at most mu (the most likely one always), then draws. Both take the candidates in any
// order with normalised probabilities, sort only what they keep (a vocabulary of 150K
// is never sorted whole), leave the kept set sorted and renormalised, and update mu from
// the chosen token's surprise in it.
TokenId mirostat_v1(std::vector<Candidate>& candidates, size_t n_vocab, const MirostatParams& p,
                    float& mu, Pcg32& rng);
TokenId mirostat_v2(std::vector<Candidate>& candidates, const MirostatParams& p, float& mu,
                    Pcg32& rng);

// Version 1's estimate of the Zipf exponent (exposed for tests): the least-squares slope
// of log(p_i / p_i+1) over log((i + 2) / (i + 1)) for the first `m` tokens, sorted most
// likely first.
double zipf_exponent(const std::vector<Candidate>& candidates, size_t m = 100);

} // namespace pshard
