#include "runtime/kernels/cpu_isa.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <string>

namespace pshard::kernels {
namespace {

#if defined(__x86_64__) || defined(__i386__)
// F16C by CPUID itself (leaf 1, ECX): clang before 16 has no "f16c" for
// __builtin_cpu_supports, and the sanitizer build uses clang.
bool has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid(1, &a, &b, &c, &d) != 0 && (c & bit_F16C) != 0;
}
#endif

Isa probe() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // GCC's probe also checks (via XGETBV) that the OS saves the wide registers.
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512vnni");
  return avx512 ? Isa::kAvx512 : avx2 ? Isa::kAvx2 : Isa::kScalar;
#else
  return Isa::kScalar;
#endif
}

Isa initial_isa() {
  Isa isa = detected_isa();
  const char* cap = std::getenv("PSHARD_ISA");
  Isa wanted;
  if (cap != nullptr && parse_isa(cap, &wanted) && wanted < isa)
    isa = wanted;
  return isa;
}

std::atomic<Isa>& active() {
  static std::atomic<Isa> isa{initial_isa()};
  return isa;
}

} // namespace

const char* isa_name(Isa isa) {
  switch (isa) {
  case Isa::kScalar: return "scalar";
  case Isa::kAvx2: return "avx2";
  case Isa::kAvx512: return "avx512";
  }
  return "?";
}

bool parse_isa(std::string_view text, Isa* isa) {
  std::string lower(text);
  for (char& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (Isa i : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512})
    if (lower == isa_name(i)) {
      *isa = i;
      return true;
    }
  return false;
}

Isa detected_isa() {
  static const Isa isa = probe();
  return isa;
}

bool isa_supported(Isa isa) { return isa <= detected_isa(); }

Isa active_isa() { return active().load(std::memory_order_relaxed); }

bool force_isa(Isa isa) {
  if (!isa_supported(isa))
    return false;
  active().store(isa, std::memory_order_relaxed);
  return true;
}

} // namespace pshard::kernels
