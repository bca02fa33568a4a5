#include "runtime/backends/emu/emu_arena.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

namespace pshard::emu {
namespace {

uint64_t page_round_up(uint64_t bytes) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

} // namespace

EmuArena::~EmuArena() {
  if (base_)
    munmap(base_, reserved_);
}

Status EmuArena::reserve(uint64_t max_bytes) {
  if (base_)
    return internal_error("the emulated arena is already reserved");
  const uint64_t bytes = page_round_up(std::max<uint64_t>(max_bytes, 1));
  void* p = mmap(nullptr, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED)
    return Status(StatusCode::kOutOfMemory,
                  "cannot reserve " + std::to_string(bytes >> 20) +
                      " MiB of address space for the emulated GPU: " + std::strerror(errno));
  base_ = static_cast<uint8_t*>(p);
  reserved_ = bytes;
  return Status::ok_status();
}

Status EmuArena::set_size(uint64_t bytes) {
  const uint64_t old_pages = page_round_up(size_), new_pages = page_round_up(bytes);
  if (new_pages > reserved_)
    return internal_error("emulated arena of " + std::to_string(bytes) +
                          " bytes exceeds its reservation");
  if (new_pages > old_pages &&
      mprotect(base_ + old_pages, new_pages - old_pages, PROT_READ | PROT_WRITE) != 0)
    return Status(StatusCode::kOutOfMemory,
                  std::string("cannot commit emulated GPU memory: ") + std::strerror(errno));
  if (new_pages < old_pages) {
    // Drop the tail's pages so host memory follows the emulated allocation.
    madvise(base_ + new_pages, old_pages - new_pages, MADV_DONTNEED);
    mprotect(base_ + new_pages, old_pages - new_pages, PROT_NONE);
  }
  size_ = bytes;
  return Status::ok_status();
}

} // namespace pshard::emu
