// An answer pushed through a ToolCallStream piece by piece, as the server streams one (the
// server's tool-format tests): the content sent, the calls' argument deltas joined as a
// client joins them, and the calls sent whole at the end.
#pragma once

#include "tools/pshard-server/tool_calls.h"

#include <initializer_list>
#include <string>

namespace pshard::server {

struct Streamed {
  std::string content, args;
  nlohmann::json calls;
};

inline Streamed streamed_calls(const ToolFormat& format, const StringArgs& string_args,
                               std::initializer_list<const char*> pieces) {
  ToolCallStream s(format, string_args);
  Streamed out;
  auto take = [&](const ToolCallStream::Piece& p) {
    out.content += p.content;
    for (const nlohmann::json& d : p.deltas)
      out.args += d["function"].value("arguments", "");
  };
  for (const char* piece : pieces)
    take(s.push(piece, false, "c"));
  ToolCallStream::Piece last = s.push("", true, "c");
  take(last);
  out.calls = last.calls;
  return out;
}

} // namespace pshard::server
