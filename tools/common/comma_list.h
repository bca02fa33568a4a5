// "a,b,,c" -> {"a", "b", "c"} (or {"a", "b", "", "c"}): a command line's comma-separated
// list, read by the tools themselves where CLI11's list options would not do (its "[a,b]"
// syntax takes brackets that values such as Mistral's "[INST]" have).
#pragma once

#include <string>
#include <vector>

namespace pshard {

// `keep_empty`: an empty item stays, for a caller that refuses it by name.
std::vector<std::string> comma_list(const std::string& text, bool keep_empty = false);

} // namespace pshard
