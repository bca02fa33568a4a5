// llama.cpp spells some flags with one dash and several letters (-cnv, -np, -npp), which
// CLI11 reads as bundled short flags; each tool lists its own and gets argv with them
// spelled out.
//
//   constexpr FlagSpelling kFlags[] = {{"-np", "--parallel"}};
//   std::vector<std::string> args = expand_llama_flags(argc, argv, kFlags);
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

struct FlagSpelling {
  std::string_view llama;     // "-np"
  std::string_view long_form; // "--parallel"
};

std::vector<std::string> expand_llama_flags(int argc, char** argv,
                                            std::span<const FlagSpelling> spellings);

} // namespace pshard
