#include "tools/pshard-server/openai_response.h"

#include <atomic>
#include <cmath>
#include <ctime>
#include <random>

namespace pshard::server {

using nlohmann::json;

ResponseHeader new_header(Endpoint endpoint, const std::string& model) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t boot = std::random_device{}();
  char id[64];
  std::snprintf(id, sizeof id, "%s-%08llx%06llx", endpoint == Endpoint::kChat ? "chatcmpl" : "cmpl",
                static_cast<unsigned long long>(boot & 0xffffffffu),
                static_cast<unsigned long long>(++counter));
  return {id, static_cast<int64_t>(std::time(nullptr)), model, endpoint};
}

json finish_reason_json(pshard_finish_reason finish, bool made_calls) {
  if (made_calls && finish != PSHARD_FINISH_LENGTH)
    return "tool_calls";
  switch (finish) {
  case PSHARD_FINISH_STOP:
    return "stop";
  case PSHARD_FINISH_LENGTH:
    return "length";
  default:
    return nullptr;
  }
}

json usage_json(int64_t n_prompt, int64_t n_cached, int64_t n_generated, int64_t reasoning_tokens) {
  json u = {{"prompt_tokens", n_prompt},
            {"completion_tokens", n_generated},
            {"total_tokens", n_prompt + n_generated},
            {"prompt_tokens_details", {{"cached_tokens", n_cached}}}};
  if (reasoning_tokens >= 0)
    u["completion_tokens_details"] = {{"reasoning_tokens", reasoning_tokens}};
  return u;
}

int64_t reasoning_tokens(const GenerationRequest& r, const Completion& c) {
  if (r.endpoint != Endpoint::kChat || r.reasoning.format != ReasoningFormat::kDeepseek)
    return -1;
  ThoughtCounter counter(r.reasoning.opened, *r.reasoning.tags);
  size_t at = 0;
  for (const TokenEvent& e : c.tokens) {
    counter.add(e.text, true);
    at += e.text.size();
  }
  counter.add(std::string_view(c.text).substr(std::min(at, c.text.size())), false);
  return counter.count();
}

json LogprobWriter::token_bytes(const std::string& piece) const {
  json bytes = json::array();
  for (unsigned char c : piece)
    bytes.push_back(static_cast<int>(c));
  return bytes;
}

json LogprobWriter::entry(pshard_token id, float logprob, bool with_id, bool as_prob) const {
  const std::string piece = engine_.piece(id);
  json e = {{"token", piece}, {"bytes", token_bytes(piece)}};
  if (as_prob)
    e["prob"] = std::exp(static_cast<double>(logprob));
  else
    e["logprob"] = logprob;
  if (with_id)
    e["id"] = id;
  return e;
}

json LogprobWriter::content_json(std::span<const TokenEvent> tokens, bool with_ids,
                                 bool as_probs) const {
  json content = json::array();
  for (const TokenEvent& t : tokens) {
    json top = json::array();
    for (const TokenLogprob& alt : t.top)
      top.push_back(entry(alt.id, alt.logprob, with_ids, as_probs));
    json e = entry(t.token, t.logprob, with_ids, as_probs);
    e[as_probs ? "top_probs" : "top_logprobs"] = std::move(top);
    content.push_back(std::move(e));
  }
  return content;
}

json LogprobWriter::completion_probabilities(std::span<const TokenEvent> tokens) const {
  return content_json(tokens, true, post_sampling_);
}

json LogprobWriter::to_json(const std::vector<TokenEvent>& tokens, size_t offset) const {
  if (endpoint_ == Endpoint::kChat)
    return {{"content", content_json(tokens, false)}};
  json out = {{"tokens", json::array()},
              {"token_logprobs", json::array()},
              {"top_logprobs", json::array()},
              {"text_offset", json::array()}};
  for (const TokenEvent& t : tokens) {
    const std::string piece = engine_.piece(t.token);
    out["tokens"].push_back(piece);
    out["token_logprobs"].push_back(t.logprob);
    json top = json::object();
    for (const TokenLogprob& alt : t.top)
      top[engine_.piece(alt.id)] = alt.logprob;
    out["top_logprobs"].push_back(top);
    out["text_offset"].push_back(offset);
    offset += piece.size();
  }
  return out;
}

ChatAnswer read_chat_answer(const std::string& text, const GenerationRequest& r,
                            const std::string& tool_call_id_prefix) {
  ChatAnswer a;
  std::string content = text;
  if (r.reasoning.format == ReasoningFormat::kDeepseek) {
    ReasoningSplit split = split_reasoning(text, r.reasoning.opened, *r.reasoning.tags);
    if (split.reasoning) {
      a.reasoning = std::move(*split.reasoning);
      content = std::move(split.content);
    }
  }
  if (r.tools)
    a.message =
        parse_tool_answer(content, tool_call_id_prefix, *r.tools->format, &r.tools->string_args);
  else
    a.message.content = std::move(content);
  return a;
}

json choice_json(int32_t index, const Completion& c, const json& logprobs, const ChatAnswer* chat) {
  const bool made_calls = chat && !chat->message.tool_calls.empty();
  json choice = {{"index", index},
                 {"logprobs", logprobs},
                 {"finish_reason", finish_reason_json(c.finish, made_calls)}};
  if (chat) {
    json& m = choice["message"] = {{"role", "assistant"}, {"content", chat->message.content}};
    if (!chat->reasoning.is_null())
      m["reasoning_content"] = chat->reasoning;
    if (made_calls)
      m["tool_calls"] = chat->message.tool_calls;
  } else {
    choice["text"] = c.text;
  }
  return choice;
}

json completion_body(const ResponseHeader& h, const std::vector<Completion>& choices,
                     const json& choices_json, int64_t reasoning_tokens) {
  int64_t n_generated = 0;
  for (const Completion& c : choices)
    n_generated += c.n_generated;
  return {{"id", h.id},
          {"object", h.endpoint == Endpoint::kChat ? "chat.completion" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", choices_json},
          {"usage", usage_json(choices.at(0).n_prompt, choices.at(0).n_cached, n_generated,
                               reasoning_tokens)}};
}

json stream_chunk(const ResponseHeader& h, const json& delta_or_text, const json& logprobs,
                  const json& finish, int32_t index) {
  json choice = {{"index", index}, {"logprobs", logprobs}, {"finish_reason", finish}};
  choice[h.endpoint == Endpoint::kChat ? "delta" : "text"] = delta_or_text;
  return {{"id", h.id},
          {"object", h.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array({choice})}};
}

json usage_chunk(const ResponseHeader& h, int64_t n_prompt, int64_t n_cached, int64_t n_generated,
                 int64_t reasoning_tokens) {
  return {{"id", h.id},
          {"object", h.endpoint == Endpoint::kChat ? "chat.completion.chunk" : "text_completion"},
          {"created", h.created},
          {"model", h.model},
          {"choices", json::array()},
          {"usage", usage_json(n_prompt, n_cached, n_generated, reasoning_tokens)}};
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

} // namespace pshard::server
