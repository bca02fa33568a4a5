// TokenId: one vocabulary entry's index. Its own header so that code which only
// passes ids around (the sampler, the generation loop) needs no tokenizer.
#pragma once

#include <cstdint>

namespace pshard {

using TokenId = int32_t;

// "No such token" (a vocabulary without BOS, for instance).
inline constexpr TokenId kNoToken = -1;

} // namespace pshard
