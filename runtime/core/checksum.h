// A 64-bit checksum of a byte stream fed in chunks, to tell a damaged file from a good
// one (a flipped bit, a block of zeros, a chunk from another file) before its bytes are
// trusted. Not for adversaries. Four independent lanes of 8-byte words keep it near
// memory speed (several GB/s), so checking a multi-GB KV state costs little next to
// reading it. The same chunks in the same order give the same sum: writer and reader
// must feed the same pieces.
//
//   Checksum64 sum;
//   sum.add(header, sizeof header);
//   sum.add(rows.data(), rows.size());
//   uint64_t v = sum.value();
#pragma once

#include <cstddef>
#include <cstdint>

namespace pshard {

class Checksum64 {
public:
  void add(const void* data, size_t n);
  uint64_t value() const { return state_; }

private:
  uint64_t state_ = 0x243f6a8885a308d3ull; // any odd start; π's first digits
};

} // namespace pshard
