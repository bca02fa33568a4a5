// The sampler's stages after the penalties, each on the working set of candidates
// (runtime/sampler/candidate.h). Sampler (sampler.h) runs them in its chain's order; each
// is the published method of its name, as llama.cpp's samplers of the same name take it.
#pragma once

#include "runtime/sampler/candidate.h"
#include "runtime/sampler/random.h"

#include <span>
#include <vector>

namespace pshard {

// Top-nσ (Tang et al., "Top-nσ: Not All Logits Are You Need", 2024): keeps the tokens
// whose logit is at least the largest minus n standard deviations of the finite logits.
// Any order in, same order out; n > 0.
void keep_top_n_sigma(std::vector<Candidate>& candidates, float n);

// The temperature for this step, by the entropy of the candidates' softmax (llama.cpp's
// dynamic temperature, --dynatemp-range/-exp): from max(0, t - range) for a certain
// choice to t + range for a uniform one, along normalized_entropy^exponent. Never below
// 1e-4 (a certain choice then stays near greedy instead of dividing by zero).
double dynamic_temperature(std::span<const Candidate> candidates, float temperature, float range,
                           float exponent);

// Softmax of the logits at `temperature` into `prob`, which then sums to 1, in any order
// (the sum is taken in the candidates' order); when the top logit is not finite the set
// becomes the most likely candidate alone, with probability 1.
void softmax(std::vector<Candidate>& candidates, double temperature);

// Divides every probability by their sum (after a stage dropped some).
void renormalize(std::vector<Candidate>& candidates);

// top-p: the smallest prefix (most likely first) whose mass reaches p (of a set whose
// probabilities sum to 1; else scale p by their sum). Sorted in.
void keep_top_p(std::vector<Candidate>& candidates, double p);
// min-p: drops the tokens below p x the most likely one's probability. Sorted in.
void keep_min_p(std::vector<Candidate>& candidates, float p);

// Locally typical sampling (Meister et al., "Locally Typical Sampling", 2023): keeps the
// tokens whose surprise (-log p) is closest to the distribution's entropy, fewest first
// until their mass reaches p. Normalised probabilities in; out sorted most likely first
// and renormalised.
void keep_typical(std::vector<Candidate>& candidates, float p);

// XTC, "exclude top choices" (P. E. W., 2024): when at least two tokens have probability
// >= threshold, drops all of them but the least likely. Sorted, normalised in; out
// renormalised. The caller draws whether to apply it (xtc_probability).
void exclude_top_choices(std::vector<Candidate>& candidates, float threshold);

// One draw from the candidates' probabilities, which sum to `total` (the draw is scaled
// by it, so a set cut by the stages above needs no renormalising first).
TokenId draw(std::span<const Candidate> candidates, double total, Pcg32& rng);

// The token draw() would give for the candidates sorted most likely first, found without
// sorting them all: the mass of ever smaller parts of the sorted order is taken by
// partitioning (as quickselect does), and only the last few are sorted. For sampling
// from a whole vocabulary. Reorders `candidates`.
TokenId draw_in_sorted_order(std::vector<Candidate>& candidates, double total, Pcg32& rng);

} // namespace pshard
