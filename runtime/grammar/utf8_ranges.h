// Code point ranges as UTF-8 byte-range sequences, so a grammar over Unicode
// characters can be matched one byte at a time.
//
//   utf8_sequences(0x80, 0x7FF)   // -> {[C2-DF][80-BF]}
//   utf8_sequences(0x0, 0x10FFFF) // -> 1-, 2-, 3- and 4-byte forms, surrogates left out
//
// Every well-formed encoding of a code point in the range matches exactly one of the
// sequences, and nothing else does (no overlong forms, no surrogates).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace pshard {

using ByteRange = std::pair<uint8_t, uint8_t>; // inclusive
using Utf8Sequence = std::vector<ByteRange>;   // one range per byte, 1 to 4 of them

std::vector<Utf8Sequence> utf8_sequences(char32_t first, char32_t last);

} // namespace pshard
