// libFuzzer target for how pshard-server reads a model's answer as it streams: any text,
// cut into any pieces, must give through the streams exactly what the whole text gives —
//   - ReasoningStream (<think>, Mistral's [THINK] and harmony's channels): the reasoning
//     and content of split_reasoning;
//   - ToolCallStream (Hermes, Llama 3 JSON, Mistral, harmony, GLM-4.5 and Kimi K2 calls): the
//     content and calls of parse_tool_answer, no piece of a call ever sent as content; its
//     deltas, joined as a client joins them, the calls' ids, names and arguments (as JSON
//     values);
// and what a stream may send (streamable_prefix) never shrinks as text arrives.
// The first input byte picks the format (and with the second's bit 6, the thought's tags),
// the second seeds the cuts; the rest is the text.
// A broken promise traps, so the fuzzer reports it.
#include "tools/pshard-server/reasoning.h"
#include "tools/pshard-server/tool_calls.h"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <random>
#include <string>

namespace {

using namespace pshard::server;

void check(bool promise) {
  if (!promise)
    __builtin_trap();
}

std::string content_of(const ToolAnswer& a, const std::string& text, const ToolFormat& format) {
  if (a.tool_calls.empty() && !format.parse) // harmony's content is its messages' text
    return text;
  return a.content.is_string() ? a.content.get<std::string>() : "";
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2)
    return 0;
  const ToolFormat* const kFormats[] = {
      &kHermesTools,  &kLlama3JsonTools, &kMistralV3Tools, &kMistralTekkenTools, &kMistralArgsTools,
      &kHarmonyTools, &kGlmXmlTools,     &kKimiK2Tools,    &kQwen3CoderTools,    &kQwen35Tools};
  const ToolFormat& format = *kFormats[data[0] % std::size(kFormats)];
  std::mt19937 cuts(data[1] & 0x3f);
  const std::string text(reinterpret_cast<const char*>(data + 2), size - 2);

  const bool opened = (data[1] & 0x80) != 0; // a thought the prompt opened
  const ThoughtTags* const kTags[] = {&kThinkTags, &kMistralThinkTags, &kHarmonyThoughtTags,
                                      &kHarmonyToolThoughtTags};
  const ThoughtTags& tags =
      *kTags[((data[1] & 0x40) != 0 ? 1 : 0) + 2 * ((data[0] / std::size(kFormats)) % 2)];
  const ReasoningSplit whole = split_reasoning(text, opened, tags);
  const ToolAnswer answer = parse_tool_answer(text, "c", format);
  ReasoningStream reasoning(opened, tags);
  ToolCallStream tools(format);
  std::string thought, content, calls_content;
  nlohmann::json calls = nlohmann::json::array();
  nlohmann::json joined = nlohmann::json::array(); // the deltas as a client joins them
  size_t sendable = 0;
  for (size_t at = 0; at <= text.size();) {
    const size_t n = std::min<size_t>(text.size() - at, cuts() % 6);
    const bool last = at + n == text.size();
    const std::string piece = text.substr(at, n);
    ReasoningStream::Piece r = reasoning.push(piece, last);
    thought += r.reasoning;
    content += r.content;
    ToolCallStream::Piece t = tools.push(piece, last, "c");
    calls_content += t.content;
    if (!t.calls.empty())
      calls = t.calls;
    for (const nlohmann::json& d : t.deltas) {
      const size_t i = d["index"].get<size_t>();
      check(i <= joined.size());
      if (i == joined.size())
        joined.push_back({{"id", d["id"]}, {"name", d["function"]["name"]}, {"arguments", ""}});
      joined[i]["arguments"] =
          joined[i]["arguments"].get<std::string>() + d["function"].value("arguments", "");
    }
    at += n;
    const size_t now = streamable_prefix(text.substr(0, at), format);
    check(now >= sendable && now <= at);
    sendable = now;
    if (last)
      break;
  }
  check(thought == whole.reasoning.value_or(""));
  check(content == whole.content);
  check(calls == answer.tool_calls);
  check(calls_content == content_of(answer, text, format));
  for (size_t i = 0; i < answer.tool_calls.size(); ++i) {
    check(i < joined.size());
    const nlohmann::json& want = answer.tool_calls[i];
    check(joined[i]["id"] == want["id"] && joined[i]["name"] == want["function"]["name"]);
    const auto got =
        nlohmann::json::parse(joined[i]["arguments"].get<std::string>(), nullptr, false);
    check(got == nlohmann::json::parse(want["function"]["arguments"].get<std::string>()));
  }
  return 0;
}
