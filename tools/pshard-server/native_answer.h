// llama-server's native answer, as its POST /completion and /infill give it (what
// SillyTavern, llama.vscode and other clients of llama.cpp's own API read), for requests
// that ran as OpenAI completions (native_completion.h, infill.h).
#pragma once

#include "pshard/pshard.h"
#include "tools/pshard-server/api_error.h"
#include "tools/pshard-server/request_runner.h"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pshard::server {

// llama-server's answer: {"content", "stop": true, "stop_type" ("eos", "limit"),
// "tokens_predicted", "tokens_evaluated", "tokens_cached", "model"}; streamed, chunks of
// {"content", "stop": false} and that last object with empty content.
// `stopping_word`: the stop string that ended it ("stop_type": "word"), or null.
nlohmann::json native_answer(const std::string& content, pshard_finish_reason finish,
                             int64_t n_prompt, int64_t n_cached, int64_t n_generated,
                             const std::string& model, const nlohmann::json& stopping_word);

// That answer streamed: {"content", "stop": false} chunks, the last object at the end.
class NativeStream {
public:
  NativeStream(std::string model, std::vector<std::string> stops)
      : model_(std::move(model)), stops_(std::move(stops)) {}
  std::string opening() const { return ""; }
  std::string on_event(const TokenEvent& e) const;
  std::string error(const ApiError& e) const;

private:
  std::string model_;
  std::vector<std::string> stops_;
};

} // namespace pshard::server
