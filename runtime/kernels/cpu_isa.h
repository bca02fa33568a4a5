// Which SIMD implementation of the kernels runs.
//
// The CPU is probed once; PSHARD_ISA=scalar|avx2|avx2vnni|avx512 in the environment caps
// the choice (to measure or test a client CPU's path on a bigger one). The project is
// built without -march=native: each ISA path lives in its own .cpp compiled with its
// own flags and is only called after this check.
//
//   if (!kernels::force_isa(kernels::Isa::kAvx2)) GTEST_SKIP() << "no AVX2 here";
//   ... matmul now runs the AVX2 kernels ...
//   kernels::force_isa(kernels::detected_isa());
#pragma once

#include <string_view>

namespace pshard::kernels {

// Ordered by preference, each path with features of its own (Zen 4 has AVX-512 but not
// AVX-VNNI, so a later path need not support an earlier one's instructions):
//   kAvx2      AVX2 + FMA + F16C (most client x86 CPUs since 2013)
//   kAvx2Vnni  kAvx2 + AVX-VNNI (Intel client cores since Alder Lake, Zen 5)
//   kAvx512    AVX2's + AVX-512 F/BW/VL/VNNI (Ice Lake, Sapphire Rapids, Zen 4 and later)
enum class Isa { kScalar = 0, kAvx2 = 1, kAvx2Vnni = 2, kAvx512 = 3 };

const char* isa_name(Isa isa);
// "scalar", "avx2", "avx2vnni", "avx512" (case-insensitive); false for anything else.
bool parse_isa(std::string_view text, Isa* isa);

// The best path this CPU and OS support (ignores PSHARD_ISA).
Isa detected_isa();
bool isa_supported(Isa isa);

// The path in use: detected_isa(), or under PSHARD_ISA the best supported path at most that
// one, unless force_isa changed it.
Isa active_isa();

// Switches every later kernel call to `isa`; false (and no change) when the CPU
// lacks it. For tests and benchmarks; must not race with running kernels.
bool force_isa(Isa isa);

} // namespace pshard::kernels
