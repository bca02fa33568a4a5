// The special tokens Kimi K2 writes its function calls with (kimi_tools.cpp reads and writes
// them, kimi_tool_grammar.cpp constrains them).
#pragma once

#include <string_view>

namespace pshard::server::kimi {

inline constexpr std::string_view kSectionOpen = "<|tool_calls_section_begin|>";
inline constexpr std::string_view kSectionClose = "<|tool_calls_section_end|>";
inline constexpr std::string_view kCallOpen = "<|tool_call_begin|>";
inline constexpr std::string_view kArgsOpen = "<|tool_call_argument_begin|>";
inline constexpr std::string_view kCallClose = "<|tool_call_end|>";
// A call's id, as the model writes it: functions.NAME:INDEX.
inline constexpr std::string_view kIdPrefix = "functions.";

} // namespace pshard::server::kimi
