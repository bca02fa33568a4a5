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

// AVX-VNNI by CPUID (leaf 7, sub-leaf 1, EAX bit 4): clang 14's __builtin_cpu_supports
// does not know it.
bool has_avx_vnni() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(7, 1, &a, &b, &c, &d) != 0 && (a & (1u << 4)) != 0;
}
#endif

struct Features {
  bool avx2 = false, avx_vnni = false, avx512 = false;
};

Features probe() {
  Features f;
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  // GCC's probe also checks (via XGETBV) that the OS saves the wide registers.
  f.avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && has_f16c();
  f.avx_vnni = f.avx2 && has_avx_vnni();
  f.avx512 = f.avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
             __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni");
#endif
  return f;
}

const Features& features() {
  static const Features f = probe();
  return f;
}

// The most preferred supported path at most `cap`.
Isa best_at_most(Isa cap) {
  for (Isa i : {Isa::kAvx512, Isa::kAvx2Vnni, Isa::kAvx2})
    if (i <= cap && isa_supported(i))
      return i;
  return Isa::kScalar;
}

Isa initial_isa() {
  const char* cap = std::getenv("PSHARD_ISA");
  Isa wanted;
  if (cap != nullptr && parse_isa(cap, &wanted))
    return best_at_most(wanted);
  return detected_isa();
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
  case Isa::kAvx2Vnni:
    return "avx2vnni";
  case Isa::kAvx512: return "avx512";
  }
  return "?";
}

bool parse_isa(std::string_view text, Isa* isa) {
  std::string lower(text);
  for (char& c : lower)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (Isa i : {Isa::kScalar, Isa::kAvx2, Isa::kAvx2Vnni, Isa::kAvx512})
    if (lower == isa_name(i)) {
      *isa = i;
      return true;
    }
  return false;
}

Isa detected_isa() { return best_at_most(Isa::kAvx512); }

bool isa_supported(Isa isa) {
  switch (isa) {
  case Isa::kScalar:
    return true;
  case Isa::kAvx2:
    return features().avx2;
  case Isa::kAvx2Vnni:
    return features().avx_vnni;
  case Isa::kAvx512:
    return features().avx512;
  }
  return false;
}

Isa active_isa() { return active().load(std::memory_order_relaxed); }

bool force_isa(Isa isa) {
  if (!isa_supported(isa))
    return false;
  active().store(isa, std::memory_order_relaxed);
  return true;
}

} // namespace pshard::kernels
