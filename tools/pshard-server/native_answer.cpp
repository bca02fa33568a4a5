#include "tools/pshard-server/native_answer.h"

#include "tools/pshard-server/openai_response.h"

namespace pshard::server {

using nlohmann::json;

json native_answer(const std::string& content, pshard_finish_reason finish, int64_t n_prompt,
                   int64_t n_cached, int64_t n_generated, const std::string& model,
                   const json& stopping_word) {
  return {{"content", content},
          {"stop", true},
          {"stop_type", finish == PSHARD_FINISH_LENGTH ? "limit"
                        : stopping_word.is_null()      ? "eos"
                                                       : "word"},
          {"stopping_word", stopping_word.is_null() ? json("") : stopping_word},
          {"tokens_predicted", n_generated},
          {"tokens_evaluated", n_prompt},
          {"tokens_cached", n_cached},
          {"model", model}};
}

std::string NativeStream::on_event(const TokenEvent& e) const {
  std::string out;
  if (!e.text.empty())
    out = sse(json{{"content", e.text}, {"stop", false}});
  if (e.finish != PSHARD_FINISH_NONE)
    out += sse(native_answer("", e.finish, e.n_prompt, e.n_cached, e.n_generated, model_,
                             stop_string_json(stops_, e.stop_string)));
  return out;
}

std::string NativeStream::error(const ApiError& e) const { return sse(error_json(e)); }

} // namespace pshard::server
