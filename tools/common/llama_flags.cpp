#include "tools/common/llama_flags.h"

namespace pshard {

std::vector<std::string> expand_llama_flags(int argc, char** argv,
                                            std::span<const FlagSpelling> spellings) {
  std::vector<std::string> args(argv, argv + argc);
  for (std::string& a : args)
    for (const FlagSpelling& f : spellings)
      if (a == f.llama) {
        a = f.long_form;
        break;
      }
  return args;
}

} // namespace pshard
