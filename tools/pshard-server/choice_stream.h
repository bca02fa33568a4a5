// One choice of a streamed answer (`n` of them interleave in one stream, each chunk
// carrying its index): its token events turned into the chunks to send — a thinking
// model's reasoning as reasoning_content, content held back where it may begin a tool
// call and the calls sent whole, logprobs with their tokens, and with its last event the
// finish reason.
#pragma once

#include "tools/pshard-server/openai_response.h"

#include <optional>
#include <string>

namespace pshard::server {

class ChoiceStream {
public:
  ChoiceStream(const ServingEngine& engine, const GenerationRequest& r,
               const ResponseHeader& header, int32_t index);

  // The chat's opening chunk (the assistant's role); "" for completions.
  std::string opening() const;
  // The server-sent events this event makes (may be none).
  std::string on_event(const TokenEvent& e);

private:
  std::string chunk(const nlohmann::json& delta_or_text, const nlohmann::json& logprobs = nullptr,
                    const nlohmann::json& finish = nullptr) const;

  const ServingEngine& engine_;
  ResponseHeader header_;
  int32_t index_;
  bool chat_, logprobs_on_;
  LogprobWriter logprobs_;
  size_t offset_ = 0;                        // text_offset of the next token's logprobs
  std::optional<ToolCallStream> tools_;      // a chat that offered tools
  std::optional<ReasoningStream> reasoning_; // a chat whose reasoning is taken out
};

} // namespace pshard::server
