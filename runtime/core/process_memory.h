// Resident memory of this process, for reports (pshard-run prints its peak).
#pragma once

#include <cstdint>

namespace pshard {

// Peak resident set size so far, in bytes (0 where the OS cannot tell).
uint64_t peak_resident_bytes();
// Current resident set size, in bytes (0 where the OS cannot tell).
uint64_t current_resident_bytes();

} // namespace pshard
