// llama.cpp's flags that have no pshard counterpart, so a user's llama-server or llama-cli
// command line still runs or says what to write instead (CLI11 alone answers "The
// following argument was not expected"):
//   - accepted, with a note on stderr, where pshard already does what they ask
//     (--jinja: templates are rendered natively; --embeddings: always served; -fa: the
//     attention kernels are tiled anyway);
//   - refused, naming pshard's way, where they would place weights (-ngl, -ot,
//     --n-cpu-moe: pshard places them by a compiled schedule and a VRAM budget).
//
//   std::vector<std::string> notes;
//   PSHARD_ASSIGN_OR_RETURN(args, absorb_llama_flags(args, kLlamaModelCompat, &notes));
#pragma once

#include "runtime/core/status.h"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

struct LlamaCompatFlag {
  std::string_view flag; // "-ngl"
  int values;            // arguments it takes: 0, 1, or -1 (llama.cpp's -fa: on|off|auto, optional)
  bool accepted;         // else refused
  std::string_view note; // why it changes nothing, or what to use instead
};

// Flags every pshard tool that loads a model treats alike, and the server's only ones.
extern const std::span<const LlamaCompatFlag> kLlamaModelCompat;
extern const std::span<const LlamaCompatFlag> kLlamaServerCompat;

// `args` without the listed flags (and their values); one note per accepted flag in
// `notes`; kInvalidArgument naming the flag and its note for a refused one (or one whose
// value is missing).
Result<std::vector<std::string>> absorb_llama_flags(std::vector<std::string> args,
                                                    std::span<const LlamaCompatFlag> flags,
                                                    std::vector<std::string>* notes);

} // namespace pshard
