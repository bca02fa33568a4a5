// One choice of a streamed answer, in two layers:
//
//   AnswerStream  its token events as what they add to the answer — reasoning (a thinking
//                 model's thought), content (never any of a tool call's text: held back
//                 where it may begin one), each call's id, name and arguments as they come
//                 (OpenAI's tool_calls deltas), and with the last event the calls, whole;
//   ChoiceStream  that as chat.completion.chunk / text_completion chunks (`n` choices
//                 interleave in one stream, each chunk carrying its index), logprobs with
//                 their tokens, the finish reason last.
//
// The Responses API's events (responses_stream.h) are made from AnswerStream too.
#pragma once

#include "tools/pshard-server/openai_response.h"

#include <optional>
#include <string>

namespace pshard::server {

class AnswerStream {
public:
  AnswerStream(const GenerationRequest& r, std::string tool_call_id_prefix);

  struct Delta {
    std::string reasoning, content;
    nlohmann::json call_deltas = nlohmann::json::array(); // ToolCallStream::Piece::deltas
    nlohmann::json calls = nlohmann::json::array();       // with the last event
    bool last = false;
  };
  Delta push(const TokenEvent& e);
  bool reasoning_taken_out() const { return reasoning_.has_value(); }
  bool offers_tools() const { return tools_.has_value(); }
  // The thought's tokens so far (all of them after the last event); -1 when the request
  // leaves reasoning in the content.
  int64_t reasoning_tokens() const { return reasoning_ ? thought_.count() : -1; }

private:
  std::string call_ids_;
  std::optional<ToolCallStream> tools_;      // a chat that offered tools
  std::optional<ReasoningStream> reasoning_; // a chat whose reasoning is taken out
  ThoughtCounter thought_;                   // fed only with reasoning_
};

class ChoiceStream {
public:
  ChoiceStream(const ServingEngine& engine, const GenerationRequest& r,
               const ResponseHeader& header, int32_t index);

  // The chat's opening chunk (the assistant's role); "" for completions.
  std::string opening() const;
  // The server-sent events this event makes (may be none).
  std::string on_event(const TokenEvent& e);
  int64_t reasoning_tokens() const { return answer_.reasoning_tokens(); }

private:
  std::string chunk(const nlohmann::json& delta_or_text, const nlohmann::json& logprobs = nullptr,
                    const nlohmann::json& finish = nullptr) const;

  const ServingEngine& engine_;
  ResponseHeader header_;
  int32_t index_;
  bool chat_, logprobs_on_;
  LogprobWriter logprobs_;
  size_t offset_ = 0; // text_offset of the next token's logprobs
  AnswerStream answer_;
};

} // namespace pshard::server
