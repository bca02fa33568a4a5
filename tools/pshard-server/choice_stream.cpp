#include "tools/pshard-server/choice_stream.h"

namespace pshard::server {

using nlohmann::json;

ChoiceStream::ChoiceStream(const ServingEngine& engine, const GenerationRequest& r,
                           const ResponseHeader& header, int32_t index)
    : engine_(engine), header_(header), index_(index), chat_(r.endpoint == Endpoint::kChat),
      logprobs_on_(r.logprobs), logprobs_(engine, r.endpoint) {
  if (r.tools)
    tools_.emplace(*r.tools->format);
  if (chat_ && r.reasoning.format == ReasoningFormat::kDeepseek)
    reasoning_.emplace();
}

std::string ChoiceStream::chunk(const json& delta_or_text, const json& logprobs,
                                const json& finish) const {
  return sse(stream_chunk(header_, delta_or_text, logprobs, finish, index_));
}

std::string ChoiceStream::opening() const {
  return chat_ ? chunk(json{{"role", "assistant"}, {"content", ""}}) : "";
}

std::string ChoiceStream::on_event(const TokenEvent& e) {
  std::string out;
  const bool last = e.finish != PSHARD_FINISH_NONE;
  json finish = finish_reason_json(e.finish);
  std::string text = e.text; // the content's part of it
  if (reasoning_) {
    ReasoningStream::Piece p = reasoning_->push(e.text, last);
    if (!p.reasoning.empty())
      out += chunk(json{{"reasoning_content", p.reasoning}});
    text = std::move(p.content);
  }
  if (tools_) { // content up to a call; the calls whole at the end
    ToolCallStream::Piece p = tools_->push(text, last, tool_call_id_prefix(header_, index_));
    if (!p.content.empty())
      out += chunk(json{{"content", p.content}});
    if (!p.calls.empty()) {
      out += chunk(tool_calls_delta(p.calls));
      finish = finish_reason_json(e.finish, /*made_calls=*/true);
    }
  } else if (e.token >= 0 || !e.text.empty()) {
    json lp = nullptr;
    if (logprobs_on_ && e.token >= 0) {
      lp = logprobs_.to_json({e}, offset_);
      offset_ += engine_.piece(e.token).size();
    }
    // A token of held-back or reasoning text sends no empty content, unless it carries
    // the token's logprobs.
    if (!reasoning_ || !text.empty() || !lp.is_null())
      out += chunk(chat_ ? json{{"content", text}} : json(text), lp);
  }
  if (last)
    out += chunk(chat_ ? json::object() : json(""), nullptr, finish);
  return out;
}

} // namespace pshard::server
