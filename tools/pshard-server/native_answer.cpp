#include "tools/pshard-server/native_answer.h"

#include "tools/pshard-server/openai_response.h"

namespace pshard::server {

using nlohmann::json;

namespace {

json timings(const NativeCounts& c) {
  const int64_t prompt_n = c.n_prompt - c.n_cached;
  const double prompt_ms = c.first_token_ms, predicted_ms = c.total_ms - c.first_token_ms;
  auto per_token = [](double ms, int64_t n) { return n > 0 ? ms / static_cast<double>(n) : 0.0; };
  auto per_second = [](double ms, int64_t n) {
    return ms > 0 ? 1e3 * static_cast<double>(n) / ms : 0.0;
  };
  return {{"prompt_n", prompt_n},
          {"prompt_ms", prompt_ms},
          {"prompt_per_token_ms", per_token(prompt_ms, prompt_n)},
          {"prompt_per_second", per_second(prompt_ms, prompt_n)},
          {"predicted_n", c.n_generated},
          {"predicted_ms", predicted_ms},
          {"predicted_per_token_ms", per_token(predicted_ms, c.n_generated)},
          {"predicted_per_second", per_second(predicted_ms, c.n_generated)}};
}

} // namespace

json native_answer(const std::string& content, pshard_finish_reason finish,
                   const NativeCounts& counts, const std::string& model, const json& stopping_word,
                   const json& probabilities, const std::vector<pshard_token>& tokens) {
  json answer = {{"content", content},
                 {"tokens", tokens},
                 {"stop", true},
                 {"stop_type", finish == PSHARD_FINISH_LENGTH ? "limit"
                               : stopping_word.is_null()      ? "eos"
                                                              : "word"},
                 {"stopping_word", stopping_word.is_null() ? json("") : stopping_word},
                 {"tokens_predicted", counts.n_generated},
                 {"tokens_evaluated", counts.n_prompt},
                 {"tokens_cached", counts.n_cached},
                 {"model", model},
                 {"timings", timings(counts)}};
  if (!probabilities.is_null())
    answer["completion_probabilities"] = probabilities;
  return answer;
}

std::string NativeStream::on_event(const TokenEvent& e) const {
  std::string out;
  if ((probabilities_ || return_tokens_) && e.token >= 0) { // every token, its text whole or not
    json chunk = {{"content", e.text},
                  {"tokens", return_tokens_ ? json::array({e.token}) : json::array()},
                  {"stop", false}};
    if (probabilities_)
      chunk["completion_probabilities"] =
          probabilities_->completion_probabilities(std::span(&e, 1));
    out = sse(chunk);
  } else if (!e.text.empty()) {
    out = sse(json{{"content", e.text}, {"tokens", json::array()}, {"stop", false}});
  }
  if (e.finish != PSHARD_FINISH_NONE)
    out += sse(native_answer("", e.finish, native_counts(e), model_,
                             stop_string_json(stops_, e.stop_string)));
  return out;
}

std::string NativeStream::error(const ApiError& e) const { return sse(error_json(e)); }

} // namespace pshard::server
