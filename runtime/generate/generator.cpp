#include "runtime/generate/generator.h"

#include "runtime/generate/draft_model.h"
#include "runtime/generate/draft_policy.h"
#include "runtime/tokenizer/utf8.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace pshard {
namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

double GenerateTimings::generation_tokens_per_s() const {
  // The first token comes out of the prompt pass; later ones each cost a decode step.
  return generation_ms > 0 && n_generated > 1 ? (n_generated - 1) * 1e3 / generation_ms : 0;
}

double log_sum_exp(std::span<const float> logits) {
  double max_logit = -INFINITY;
  for (float l : logits)
    max_logit = std::max<double>(max_logit, l);
  double sum = 0;
  for (float l : logits)
    sum += std::exp(static_cast<double>(l) - max_logit);
  return max_logit + std::log(sum);
}

std::vector<TokenLogprob> top_logprobs(std::span<const float> logits, int32_t n) {
  const double log_z = log_sum_exp(logits);
  std::vector<TokenId> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  const size_t k = std::min<size_t>(static_cast<size_t>(std::max(n, 0)), ids.size());
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(k), ids.end(),
                    [&](TokenId a, TokenId b) {
                      return logits[a] > logits[b] || (logits[a] == logits[b] && a < b);
                    });
  std::vector<TokenLogprob> out;
  for (size_t i = 0; i < k; ++i)
    out.push_back({ids[i], static_cast<float>(logits[ids[i]] - log_z)});
  return out;
}

Result<GenerateResult> generate(Decoder& session, const Tokenizer& tokenizer, Sampler& sampler,
                                std::span<const TokenId> prompt, const GenerateParams& params,
                                const TokenCallback& on_token) {
  if (prompt.empty())
    return invalid_argument("the prompt is empty; give at least one token (e.g. BOS)");
  PSHARD_RETURN_IF_ERROR(validate_prompt_lookup(params.lookup));
  if (params.lookup.draft_max > 0 && !session.rewinds_anywhere())
    return invalid_argument(kRecurrentNoDraftsMessage);
  GenerateResult r;
  r.prompt.assign(prompt.begin(), prompt.end());
  r.timings.n_prompt = static_cast<int64_t>(prompt.size());
  std::vector<TokenId> history(params.held.begin(), params.held.end());
  history.insert(history.end(), prompt.begin(), prompt.end());
  // Where plain decoding would have the session: every sampled position's token fed but
  // the last one's. Drafted tokens past that never happened: a mismatch drops them, and
  // so does the end of generation.
  const int64_t start = session.n_past() + static_cast<int64_t>(prompt.size());
  int64_t sampled = 0;
  auto drop_unsampled = [&]() -> Status {
    return session.n_past() > start + sampled - 1 ? session.rewind(start + sampled - 1)
                                                  : Status::ok_status();
  };

  const auto t_start = std::chrono::steady_clock::now();
  PSHARD_ASSIGN_OR_RETURN(std::span<const float> logits, session.decode(prompt));
  r.timings.prompt_ms = ms_since(t_start);

  const int64_t room = session.n_ctx() - session.n_past();
  const int64_t limit = params.n_predict < 0 ? room : std::min<int64_t>(params.n_predict, room + 1);
  const auto n_vocab = logits.size();
  const int64_t max_draft =
      std::min<int64_t>(params.lookup.draft_max, session.max_logit_rows() - 1);
  // The last decode's rows: row `row` holds the logits of the position being sampled;
  // the rows after it follow `draft`, valid while the samples match it. `draft` is the
  // part of the lookup's `proposed` tokens the policy chose to check.
  std::vector<TokenId> proposed, draft;
  size_t row = 0;
  DraftPolicy policy(max_draft);
  Utf8StreamBuffer stream;
  const auto t_gen = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < limit; ++i) {
    const std::span<const float> at = logits.subspan(row * n_vocab, n_vocab);
    if (params.top_logprobs > 0)
      r.top_logprobs.push_back(top_logprobs(at, params.top_logprobs));
    const TokenId next = sampler.sample(at, history);
    if (next == kNoToken)
      return sampler.filter_status().ok() ? internal_error("the sampler gave no token")
                                          : sampler.filter_status();
    ++sampled;
    if (i == 0)
      r.timings.first_token_ms = ms_since(t_start);
    if ((!params.ignore_eos || sampler.filter()) && tokenizer.is_end_of_generation(next)) {
      if (params.top_logprobs > 0)
        r.top_logprobs.pop_back();
      break;
    }
    r.generated.push_back(next);
    history.push_back(next);
    TokenEvent event{next, stream.push(tokenizer.token_to_piece(next)),
                     params.top_logprobs > 0 ? &r.top_logprobs.back() : nullptr};
    const bool keep_going = !on_token || on_token(event);
    if (!keep_going || i + 1 == limit)
      break;
    if (row < draft.size() && next == draft[row]) { // the next row follows this token
      ++row;
      ++r.timings.n_accepted;
      continue;
    }
    PSHARD_RETURN_IF_ERROR(drop_unsampled());
    // What the pass taught: the checked tokens up to the first rejection, and the token
    // after them compared with the proposed one there (free: it was sampled anyway).
    if (row < draft.size())
      policy.observe_draft(static_cast<int64_t>(row), true);
    else if (row < proposed.size())
      policy.observe_draft(static_cast<int64_t>(row) + (next == proposed[row]),
                           next != proposed[row]);
    else if (!draft.empty()) // every checked token kept, nothing more proposed to compare
      policy.observe_draft(static_cast<int64_t>(row), false);
    if (session.n_past() >= session.n_ctx())
      break;
    // Never past the context or the tokens still wanted (the draft's last row samples one
    // more token).
    const int64_t drafts =
        std::min({max_draft, session.n_ctx() - session.n_past() - 1, limit - i - 2});
    // The drafted tokens to check: all of a fixed draft; as many as pay of prompt
    // lookup's (free to draft); a draft model's tokens cost its steps, so it drafts only
    // as many as the policy would check, and one when none would (unchecked, it is still
    // compared with the sampled token: the odds stay learnt).
    int64_t k = 0;
    if (drafts <= 0) {
      proposed.clear();
    } else if (params.drafter) {
      const int64_t chosen = params.lookup.adaptive ? policy.choose(drafts) : drafts;
      const auto t_draft = std::chrono::steady_clock::now();
      PSHARD_ASSIGN_OR_RETURN(proposed,
                              params.drafter->draft(history, std::max<int64_t>(1, chosen)));
      policy.observe_drafting(std::max<int64_t>(1, static_cast<int64_t>(proposed.size())),
                              ms_since(t_draft));
      k = chosen > 0 ? static_cast<int64_t>(proposed.size()) : 0;
    } else {
      proposed = draft_from_history(history, params.lookup, drafts);
      k = params.lookup.adaptive ? policy.choose(static_cast<int64_t>(proposed.size()))
                                 : static_cast<int64_t>(proposed.size());
    }
    draft.assign(proposed.begin(), proposed.begin() + k);
    row = 0;
    ++r.timings.n_decode_passes;
    r.timings.n_drafted += static_cast<int64_t>(draft.size());
    std::vector<TokenId> input{next};
    input.insert(input.end(), draft.begin(), draft.end());
    const auto t_pass = std::chrono::steady_clock::now();
    if (draft.empty()) {
      PSHARD_ASSIGN_OR_RETURN(logits, session.decode(input));
    } else {
      PSHARD_ASSIGN_OR_RETURN(logits, session.decode_all(input));
    }
    policy.observe_pass(static_cast<int64_t>(input.size()), ms_since(t_pass));
  }
  PSHARD_RETURN_IF_ERROR(drop_unsampled());
  r.timings.generation_ms = ms_since(t_gen);
  r.timings.n_generated = static_cast<int64_t>(r.generated.size());
  if (std::string rest = stream.flush(); !rest.empty() && on_token)
    on_token(TokenEvent{kNoToken, rest, nullptr});
  r.text = tokenizer.decode(r.generated);
  return r;
}

} // namespace pshard
