// How one forward pass's token budget is shared among the active sequences: every
// decoding sequence's next token first (so that a long prompt never stalls the others'
// streams), then prompt chunks in admission order (first come, first served), each as
// long as the budget left allows. When more sequences decode than the budget holds, the
// ones served start at `rotation`, which the caller advances each pass, so every
// decoder gets its turn. Drafted tokens only fill what is left, decoders in the same
// rotation, so speculation never slows a prompt or another sequence's stream.
//
//   std::vector<PassWant> wants = {{1, true}, {900, false}, {1, true}};
//   plan_pass(wants, 256, 0);   // {0: 1}, {2: 1}, {1: 254}
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pshard {

struct PassWant {
  int64_t tokens = 0;    // a decoder wants 1; a prefilling sequence its prompt's rest
  bool decoding = false; // decoders are served before prompts
  int64_t drafted = 0;   // a decoder's drafted tokens (speculative decoding): served last,
                         // from what the decoders and prompts leave of the budget
  bool whole = false;    // a prompt served all at once or not this pass (a model that
                         // attends both ways); it never holds up the prompts after it
};

struct PassShare {
  size_t index = 0; // into the wants
  int64_t tokens = 0;
};

// Shares in the order of `wants` (decoders and prompts mixed as given), none empty.
std::vector<PassShare> plan_pass(std::span<const PassWant> wants, int64_t budget, size_t rotation);

} // namespace pshard
