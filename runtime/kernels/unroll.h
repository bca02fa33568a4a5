// Private, for the ISA files: fully unrolls a loop over a register tile's rows or
// tokens (a compile-time count). Without it GCC at -O2 keeps a tile's accumulator
// array on the stack, and every FMA becomes a load, an FMA and a store.
#pragma once

#if defined(__clang__)
#define PSHARD_UNROLL _Pragma("unroll")
#else
#define PSHARD_UNROLL _Pragma("GCC unroll 32")
#endif
