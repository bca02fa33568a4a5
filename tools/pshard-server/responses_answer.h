// The Responses API's answer: the Response object (status completed, or incomplete when
// max_output_tokens cut it; output items: a thought as a reasoning item, the content as a
// message item with an output_text part, each call as a function_call item; usage in
// input/output tokens), and, streamed, its events — response.created, the items added,
// their deltas (response.reasoning_text.delta, response.output_text.delta,
// response.function_call_arguments.delta), each item done, then response.completed (or
// response.incomplete) with the whole Response — as OpenAI's SDKs read them.
#pragma once

#include "tools/pshard-server/choice_stream.h"

#include <nlohmann/json.hpp>
#include <string>

namespace pshard::server {

// A Responses answer's header: a "resp_" id, created_at.
ResponseHeader new_responses_header(const std::string& model);

// The output items of an answer read back.
nlohmann::json output_items(const ResponseHeader& h, const ChatAnswer& answer);
// The Response object; `request` echoes the settings OpenAI's object repeats.
nlohmann::json response_json(const ResponseHeader& h, const nlohmann::json& request,
                             pshard_finish_reason finish, const nlohmann::json& output,
                             const nlohmann::json& usage);
// output_tokens_details.reasoning_tokens with `reasoning_tokens` >= 0.
nlohmann::json responses_usage(int64_t n_prompt, int64_t n_cached, int64_t n_generated,
                               int64_t reasoning_tokens = -1);

// One streamed answer's events ("event: TYPE\ndata: {...}\n\n", numbered).
class ResponseStream {
public:
  ResponseStream(const GenerationRequest& r, ResponseHeader header, nlohmann::json request);
  std::string opening();                     // response.created, response.in_progress
  std::string on_event(const TokenEvent& e); // deltas; with the last, everything done
  std::string error(const ApiError& e);      // an error event

private:
  std::string event(const char* type, nlohmann::json body);
  std::string open_reasoning();
  std::string close_reasoning();
  std::string open_message();
  std::string close_message();
  // A function_call item as its call streams (AnswerStream's call deltas): opened with its
  // call id and name, its arguments as they come, done when the next item or the end comes.
  std::string open_call(const nlohmann::json& delta);
  std::string call_arguments(const std::string& piece);
  std::string close_call();

  ResponseHeader header_;
  nlohmann::json request_;
  AnswerStream answer_;
  int64_t sequence_ = 0;
  int output_index_ = -1; // of the item open now
  std::string reasoning_, content_;
  bool reasoning_open_ = false, reasoning_done_ = false, message_open_ = false;
  nlohmann::json done_items_ = nlohmann::json::array();
  nlohmann::json call_ = nullptr; // the function_call item open now
  size_t calls_ = 0;              // calls opened
};

} // namespace pshard::server
