#include "runtime/serve/request.h"

#include "runtime/batch/cache_key.h"

#include <string>

namespace pshard {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
  case FinishReason::kNone:
    return "";
  case FinishReason::kStop:
    return "stop";
  case FinishReason::kLength:
    return "length";
  case FinishReason::kCancelled:
    return "cancelled";
  case FinishReason::kError:
    return "error";
  }
  return "";
}

namespace {

Status validate_embedding(const RequestParams::Embedding& e, const RequestParams& r,
                          int64_t n_embd) {
  if (n_embd <= 0)
    return unsupported("this engine returns logits only, not embeddings");
  if (e.pooling == Pooling::kUnspecified)
    return invalid_argument("an embedding request needs a pooling (mean, cls, last or none)");
  if (r.constraint)
    return invalid_argument("an embedding request generates nothing, so it takes no grammar");
  return check_embedding_options(e.options, n_embd);
}

} // namespace

Status validate_request(const RequestParams& r, int64_t n_vocab, int64_t n_ctx, int64_t n_embd) {
  if (r.prompt.empty())
    return invalid_argument("the prompt is empty; give at least one token (e.g. BOS)");
  for (size_t i = 0; i < r.prompt.size(); ++i)
    if (r.prompt[i] < 0 || r.prompt[i] >= n_vocab)
      return out_of_range("prompt token " + std::to_string(i) + " is " +
                          std::to_string(r.prompt[i]) + ", outside the vocabulary of " +
                          std::to_string(n_vocab) + " tokens");
  const auto n_prompt = static_cast<int64_t>(r.prompt.size());
  if (n_prompt > n_ctx)
    return out_of_range("the prompt has " + std::to_string(n_prompt) +
                        " tokens, more than the context of " + std::to_string(n_ctx) +
                        " tokens a sequence holds; shorten it or serve with a larger context (-c)");
  if (r.embedding)
    return validate_embedding(*r.embedding, r, n_embd);
  if (r.max_tokens >= 0 && n_prompt + r.max_tokens > n_ctx)
    return out_of_range("the prompt's " + std::to_string(n_prompt) + " tokens and max_tokens " +
                        std::to_string(r.max_tokens) + " exceed the context of " +
                        std::to_string(n_ctx) + " tokens; ask for at most " +
                        std::to_string(n_ctx - n_prompt) + " new tokens");
  for (TokenId t : r.stop_tokens)
    if (t < 0 || t >= n_vocab)
      return out_of_range("stop token " + std::to_string(t) + " is outside the vocabulary of " +
                          std::to_string(n_vocab) + " tokens");
  for (const std::string& s : r.stop_strings)
    if (s.empty())
      return invalid_argument("a stop string is empty; every stop string needs a character");
  if (r.top_logprobs < 0 || r.top_logprobs > 100)
    return invalid_argument("top_logprobs must be between 0 and 100, got " +
                            std::to_string(r.top_logprobs));
  if (const PromptImages* images = r.images.get()) {
    if (images->spans.size() != images->images.size() || !image_spans_fit(images->spans, n_prompt))
      return invalid_argument("the prompt's " + std::to_string(images->images.size()) +
                              " images (" + std::to_string(images->spans.size()) +
                              " spans) do not lie in the prompt of " + std::to_string(n_prompt) +
                              " tokens in order, each inside it and after the one before");
    for (size_t i = 0; i < images->images.size(); ++i) {
      const ImageSpan& span = images->spans[i];
      const PromptImage& img = images->images[i];
      if (img.n_embd <= 0 ||
          static_cast<int64_t>(img.rows.size()) != span.n_tokens() * img.n_embd ||
          img.n_deepstack < 0 ||
          static_cast<int64_t>(img.deepstack.size()) !=
              img.n_deepstack * span.n_tokens() * img.n_embd)
        return invalid_argument("the prompt's image " + std::to_string(i) + " (" +
                                std::to_string(span.tokens_x) + " x " +
                                std::to_string(span.tokens_y) + " tokens at position " +
                                std::to_string(span.begin) +
                                ") does not have one embedding row (and one per DeepStack "
                                "merger) per image token");
    }
  }
  return validate_sampler_params(r.sampling);
}

std::vector<TokenId> prompt_cache_keys(const RequestParams& r) {
  std::vector<TokenId> keys(r.prompt);
  if (const PromptImages* images = r.images.get())
    for (size_t i = 0; i < images->images.size(); ++i) {
      const ImageSpan& span = images->spans[i];
      if (!name_image_rows(keys, span.begin, span.n_tokens(), images->images[i].key))
        break;
    }
  return keys;
}

} // namespace pshard
