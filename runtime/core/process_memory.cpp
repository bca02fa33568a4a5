#include "runtime/core/process_memory.h"

#include <cstdio>
#include <sys/resource.h>
#include <unistd.h>

namespace pshard {

uint64_t peak_resident_bytes() {
  struct rusage usage {};
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024; // Linux reports KiB
}

uint64_t current_resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f)
    return 0;
  unsigned long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return n == 2 ? resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

} // namespace pshard
