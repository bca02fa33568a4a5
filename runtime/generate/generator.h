// The generation loop: prompt prefill, then sample / decode until n_predict tokens
// or an end-of-generation token, streaming text and timing every phase.
//
//   GenerateParams gp;
//   gp.n_predict = 32;
//   PSHARD_ASSIGN_OR_RETURN(GenerateResult r,
//       generate(*session, *tokenizer, sampler, prompt_ids, gp,
//                [](const TokenEvent& e) { std::cout << e.text << std::flush; return true; }));
#pragma once

#include "runtime/core/status.h"
#include "runtime/generate/prompt_lookup.h"
#include "runtime/model/model.h"
#include "runtime/sampler/sampler.h"
#include "runtime/tokenizer/tokenizer.h"

#include <functional>
#include <span>
#include <string>
#include <vector>

namespace pshard {

class Drafter; // draft_model.h

// A Sampler with a TokenFilter (Sampler::set_filter, a grammar) constrains the tokens:
// generation then fails with the filter's reason when it allows none, and an
// end-of-generation token it allows ends generation even with ignore_eos.
struct GenerateParams {
  int32_t n_predict = 128; // new tokens at most; < 0: until the context is full
  bool ignore_eos = false;
  int32_t top_logprobs = 0; // record the N most likely tokens of every position
  // Speculative decoding with drafts from the context (prompt_lookup.h): each pass
  // decodes the sampled token and up to lookup.draft_max drafted ones (decode_all),
  // then samples position by position from those logits, exactly as one token a pass
  // would, while the samples match the draft; the first that differs is kept and the
  // rest dropped (rewind). So the tokens are those of plain decoding, for any sampler
  // and seed, wherever the model gives a pass's rows the logits it gives them one at a
  // time (cpu and emu: bit-identical). Off when the decoder has one logit row. By
  // default only as many drafted tokens are checked as pay (lookup.adaptive).
  PromptLookup lookup;
  // With lookup.draft_max: the drafts from here (a draft model, draft_model.h) instead of
  // the context's own text; it must outlive the call.
  Drafter* drafter = nullptr;
  // Tokens the decoder already holds before the prompt (a kept sequence's): the
  // sampler's penalties and the lookup see them as the prompt's start, as if decoded now.
  std::span<const TokenId> held;
};

struct TokenLogprob {
  TokenId id;
  float logprob; // log-softmax of the raw logits, before any sampling transform
};

struct TokenEvent {
  TokenId id;
  std::string text; // complete UTF-8 ready to show (may be empty while a character is split)
  // With GenerateParams::top_logprobs: this position's most likely tokens (else null).
  const std::vector<TokenLogprob>* top = nullptr;
};

struct GenerateTimings {
  int64_t n_prompt = 0;
  int64_t n_generated = 0;
  double prompt_ms = 0;     // prefill of the whole prompt
  double generation_ms = 0; // every decode step after the prompt
  double first_token_ms = 0; // from the start until the first token is sampled
  int64_t n_decode_passes = 0; // decode calls after the prompt
  int64_t n_drafted = 0;       // tokens drafted (prompt lookup or a draft model)
  int64_t n_accepted = 0;      // of those, sampled as drafted
  double prompt_tokens_per_s() const { return prompt_ms > 0 ? n_prompt * 1e3 / prompt_ms : 0; }
  double generation_tokens_per_s() const;
};

struct GenerateResult {
  std::vector<TokenId> prompt;
  std::vector<TokenId> generated;
  std::string text; // the generated tokens decoded
  std::vector<std::vector<TokenLogprob>> top_logprobs; // one list per generated position
  GenerateTimings timings;
};

// Returning false from on_token stops generation after that token.
using TokenCallback = std::function<bool(const TokenEvent&)>;

Result<GenerateResult> generate(Decoder& session, const Tokenizer& tokenizer, Sampler& sampler,
                                std::span<const TokenId> prompt, const GenerateParams& params,
                                const TokenCallback& on_token = nullptr);

// The n highest log-probabilities of a logit vector, highest first, ties to the lower id.
std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int32_t n);
// log(sum(exp(logits))): a token's log-probability is its logit minus this.
double log_sum_exp(std::span<const float> logits);

} // namespace pshard
