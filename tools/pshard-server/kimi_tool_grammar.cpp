// The grammar of Kimi K2's calls section (tool_calls.h's sections_grammar): apart from
// kimi_tools.cpp so that the answer-reading code builds without the grammar's dependencies
// (the answer-stream fuzzer compiles only that).
#include "tools/pshard-server/kimi_markers.h"
#include "tools/pshard-server/tool_calls.h"

namespace pshard::server {

FieldError
sections_grammar(const std::vector<std::pair<std::string, nlohmann::ordered_json>>& tools,
                 bool parallel, const ToolFormat& format, std::string& out) {
  using namespace kimi;
  std::string branches;
  if (FieldError e = per_tool_branches(
          tools, "\":\" [0-9]{1,5} " + gbnf_literal(std::string(kArgsOpen)), out, branches))
    return e;
  out += "root ::= " + gbnf_literal(format.call_open) + " tool-call" +
         (parallel ? " ( tool-call )*" : "") + " " + gbnf_literal(format.call_close) +
         "\ntool-call ::= " + gbnf_literal(std::string(kCallOpen) + std::string(kIdPrefix)) +
         " ( " + branches + " ) " + gbnf_literal(std::string(kCallClose));
  return std::nullopt;
}

} // namespace pshard::server
