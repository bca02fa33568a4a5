#include "tools/pshard-server/choice_stream.h"

namespace pshard::server {

using nlohmann::json;

AnswerStream::AnswerStream(const GenerationRequest& r, std::string tool_call_id_prefix)
    : call_ids_(std::move(tool_call_id_prefix)), thought_(r.reasoning.opened, *r.reasoning.tags) {
  if (r.tools)
    tools_.emplace(*r.tools->format, r.tools->string_args);
  if (r.endpoint == Endpoint::kChat && r.reasoning.format == ReasoningFormat::kDeepseek)
    reasoning_.emplace(r.reasoning.opened, *r.reasoning.tags);
}

AnswerStream::Delta AnswerStream::push(const TokenEvent& e) {
  Delta d;
  d.last = e.finish != PSHARD_FINISH_NONE;
  d.content = e.text;
  if (reasoning_) {
    thought_.add(e.text, e.token >= 0);
    ReasoningStream::Piece p = reasoning_->push(e.text, d.last);
    d.reasoning = std::move(p.reasoning);
    d.content = std::move(p.content);
  }
  if (tools_) {
    ToolCallStream::Piece p = tools_->push(d.content, d.last, call_ids_);
    d.content = std::move(p.content);
    d.call_deltas = std::move(p.deltas);
    d.calls = std::move(p.calls);
  }
  return d;
}

ChoiceStream::ChoiceStream(const ServingEngine& engine, const GenerationRequest& r,
                           const ResponseHeader& header, int32_t index)
    : engine_(engine), header_(header), index_(index), chat_(r.endpoint == Endpoint::kChat),
      logprobs_on_(r.logprobs), logprobs_(engine, r.endpoint),
      answer_(r, tool_call_id_prefix(header, index)) {}

std::string ChoiceStream::chunk(const json& delta_or_text, const json& logprobs,
                                const json& finish) const {
  return sse(stream_chunk(header_, delta_or_text, logprobs, finish, index_));
}

std::string ChoiceStream::opening() const {
  return chat_ ? chunk(json{{"role", "assistant"}, {"content", ""}}) : "";
}

std::string ChoiceStream::on_event(const TokenEvent& e) {
  std::string out;
  AnswerStream::Delta d = answer_.push(e);
  if (!d.reasoning.empty())
    out += chunk(json{{"reasoning_content", d.reasoning}});
  if (answer_.offers_tools()) { // content up to a call, then each call as it comes
    if (!d.content.empty())
      out += chunk(json{{"content", d.content}});
    if (!d.call_deltas.empty())
      out += chunk(json{{"tool_calls", d.call_deltas}});
  } else if (e.token >= 0 || !e.text.empty()) {
    json lp = nullptr;
    if (logprobs_on_ && e.token >= 0) {
      lp = logprobs_.to_json({e}, offset_);
      offset_ += engine_.piece(e.token).size();
    }
    // A token of held-back or reasoning text sends no empty content, unless it carries
    // the token's logprobs.
    if (!answer_.reasoning_taken_out() || !d.content.empty() || !lp.is_null())
      out += chunk(chat_ ? json{{"content", d.content}} : json(d.content), lp);
  }
  if (d.last)
    out += chunk(chat_ ? json::object() : json(""), nullptr,
                 finish_reason_json(e.finish, /*made_calls=*/!d.calls.empty()));
  return out;
}

} // namespace pshard::server
