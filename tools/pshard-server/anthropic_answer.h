// The Messages API's answer: a message whose content blocks are the thought (a thinking
// block), the text, and each call as a tool_use block with its input as JSON;
// stop_reason end_turn, max_tokens or tool_use; usage in input / output tokens (the
// prompt's start read from the prefix cache as cache_read_input_tokens). Streamed as
// Anthropic's events: message_start, per block content_block_start / _delta (thinking_delta,
// text_delta, input_json_delta) / _stop, message_delta with the stop reason, message_stop.
#pragma once

#include "tools/pshard-server/choice_stream.h"

#include <nlohmann/json.hpp>
#include <string>

namespace pshard::server {

// A message's header: a "msg_" id.
ResponseHeader new_anthropic_header(const std::string& model);
// Tool-use ids as Anthropic writes them: "toolu_" and the message's id part, then the
// call's index.
std::string tool_use_id_prefix(const ResponseHeader& h);

// `stop_sequence`: the stop string that ended the answer (stop_string_json), or null.
nlohmann::json anthropic_message(const ResponseHeader& h, const ChatAnswer& answer,
                                 const Completion& c, const nlohmann::json& stop_sequence);

class AnthropicStream {
public:
  AnthropicStream(const GenerationRequest& r, ResponseHeader header);
  std::string opening() const { return ""; } // message_start waits for the prompt's size
  std::string on_event(const TokenEvent& e); // message_start first; everything, with the last
  std::string error(const ApiError& e);

private:
  std::string event(const char* type, nlohmann::json body);
  std::string open_block(const nlohmann::json& block);
  std::string close_block();

  ResponseHeader header_;
  AnswerStream answer_;
  std::vector<std::string> stops_; // the request's stop strings
  bool started_ = false;
  int index_ = -1;        // of the block open now (or last closed)
  std::string open_type_; // "" when none is open
  bool text_seen_ = false;
  size_t calls_ = 0; // tool_use blocks opened
};

} // namespace pshard::server
