// The emulated GPU's memory: one address range reserved at the device's full capacity
// (never committed up front) of which the arena's first `bytes` are readable and
// writable. Everything past the arena's end is PROT_NONE, so a kernel or copy that
// strays outside the plan's layout faults at once instead of corrupting memory, and
// resizing keeps the arena's address and contents, like CUDA's virtual memory API.
#pragma once

#include "runtime/core/status.h"

#include <cstdint>

namespace pshard::emu {

class EmuArena {
public:
  EmuArena() = default;
  ~EmuArena();
  EmuArena(const EmuArena&) = delete;
  EmuArena& operator=(const EmuArena&) = delete;

  // Reserves address space for up to `max_bytes` (nothing is committed).
  Status reserve(uint64_t max_bytes);
  // Makes [0, bytes) usable; shrinking discards the tail's contents.
  Status set_size(uint64_t bytes);
  uint8_t* base() const { return base_; }
  uint64_t size() const { return size_; }

private:
  uint8_t* base_ = nullptr;
  uint64_t reserved_ = 0;
  uint64_t size_ = 0;
};

} // namespace pshard::emu
