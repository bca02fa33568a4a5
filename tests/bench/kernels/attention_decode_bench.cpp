// One decode token's attention over a long KV cache, as CpuOps::attention runs it, on one
// thread: a Llama-3-8B-shaped layer (32 query heads over 8 KV heads of 128, F16 cache rows
// holding a position's every KV head) repeated over enough layers that the caches are far
// larger than the CPU's caches, so each token reads its KV from memory as a real decode
// does. Prints, per ISA path and context, the time per layer and the KV bytes read per
// second (medians of --reps tokens), beside the memory's streaming read rate measured
// the same way, so the ratio says how near the kernel comes to the memory's rate, and the
// share of the core's FMA rate on the path's vectors its multiply-adds reach. --warm 1
// keeps one layer, read again and again from the CPU's caches: the kernel's arithmetic
// alone, the ceiling a cold cache can approach (at 1K positions, 1 MiB a layer). --per-head 1
// attends each KV head in a call of its own instead of a thread's heads in lockstep. --group N
// puts N query heads over each of the 8 KV heads (Llama-3-8B: 4; Qwen3-30B-A3B: 8).
//
//   build/tests/bench/attention_decode_bench --contexts 1024,4096,16384 --reps 9 [--isa avx2]
//                                            [--warm 1] [--per-head 1] [--group 4]
#include "runtime/kernels/attention_kernel.h"
#include "runtime/kernels/cpu_isa.h"
#include "runtime/kernels/ops.h"
#include "runtime/kernels/stream.h"
#include "runtime/kernels/unroll.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <immintrin.h>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace pshard;

constexpr int64_t kKvHeads = 8, kHeadDim = 128;
constexpr size_t kRowBytes = kKvHeads * kHeadDim * 2; // F16: one position, every KV head

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::vector<int64_t> parse_list(const char* s) {
  std::vector<int64_t> out;
  for (const char* p = s; *p;) {
    out.push_back(std::strtoll(p, nullptr, 10));
    p = std::strchr(p, ',');
    if (!p)
      break;
    ++p;
  }
  return out;
}

// Page-aligned bytes (stream_sum reads 64-byte aligned blocks).
struct Buffer {
  std::unique_ptr<uint8_t, decltype(&std::free)> p{nullptr, &std::free};
  size_t n = 0;
  explicit Buffer(size_t bytes)
      : p(static_cast<uint8_t*>(std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096)),
          &std::free),
        n(bytes) {}
  uint8_t* data() const { return p.get(); }
  size_t size() const { return n; }
};

struct Cache {
  Buffer k, v; // layers x context rows
  int64_t layers = 0, context = 0;
  Cache(int64_t layers_, int64_t context_, size_t bytes)
      : k(bytes), v(bytes), layers(layers_), context(context_) {}
};

// Enough layers for 512 MiB of K and V together (at least 2; warm: 1), random halves in [-1, 1].
Cache make_cache(int64_t context, bool warm) {
  const int64_t layers =
      warm ? 1
           : std::max<int64_t>(2, (512ll << 20) / (2 * static_cast<int64_t>(kRowBytes) * context));
  Cache c(layers, context, static_cast<size_t>(layers * context) * kRowBytes);
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> mant(0, 1023), sign(0, 1);
  for (Buffer* b : {&c.k, &c.v})
    for (size_t i = 0; i + 1 < b->size(); i += 2) {
      const uint16_t h = static_cast<uint16_t>((sign(rng) << 15) | (14 << 10) | mant(rng));
      std::memcpy(b->data() + i, &h, 2);
    }
  return c;
}

// One token over every layer, as CpuOps::attention runs it on one thread: every KV head's
// group of query heads in one lockstep call (attend_heads), or (per_head) each KV head's group
// in a call of its own, as before 2026-12-07.
void decode_token(const Cache& c, const std::vector<float>& q, std::vector<float>& out,
                  std::vector<float>& scores, int64_t group, bool per_head) {
  for (int64_t l = 0; l < c.layers; ++l) {
    const size_t layer = static_cast<size_t>(l * c.context) * kRowBytes;
    AttendHead heads[kKvHeads];
    for (int64_t h = 0; h < kKvHeads; ++h) {
      AttendHead& a = heads[h];
      a.q = q.data() + h * group * kHeadDim;
      a.k = c.k.data() + layer + static_cast<size_t>(h * kHeadDim) * 2;
      a.v = c.v.data() + layer + static_cast<size_t>(h * kHeadDim) * 2;
      a.k_row_bytes = a.v_row_bytes = kRowBytes;
      a.k_type = a.v_type = TensorType::kF16;
      a.n_kv = c.context;
      a.head_dim = kHeadDim;
      a.scale = 0.088f;
      a.group = group;
      a.out = out.data() + h * group * kHeadDim;
      a.scores = scores.data() + (per_head ? 0 : h * group * (c.context + 1));
      if (per_head)
        attend_head(a);
    }
    if (!per_head)
      attend_heads(heads, kKvHeads);
  }
}

// The core's rate of single-float multiply-adds on the path's vectors: twelve independent
// FMA chains, enough to fill every FMA pipe. The two passes' arithmetic (a multiply-add per
// K and V value per query head) cannot run faster: with a group of four heads or more it
// binds before memory on a core whose 512-bit FMAs issue one a cycle (this machine kind's
// EPYC, 2026-12-07: 3.0 G a second, 512-bit, against 5.5 G of 256-bit).
constexpr long kFmaRounds = 20'000'000;
// One asm statement holds all twelve in registers: no chain folds into another, none is
// spilled between rounds.
#define PSHARD_KEEP_12(a)                                                                          \
  asm volatile(""                                                                                  \
               : "+x"(a[0]), "+x"(a[1]), "+x"(a[2]), "+x"(a[3]), "+x"(a[4]), "+x"(a[5]),           \
                 "+x"(a[6]), "+x"(a[7]), "+x"(a[8]), "+x"(a[9]), "+x"(a[10]), "+x"(a[11]))
__attribute__((target("avx512f"))) double fma_rate_avx512() {
  __m512 a[12];
  for (int i = 0; i < 12; ++i)
    a[i] = _mm512_set1_ps(0.001f * static_cast<float>(i));
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-4f);
  const auto t0 = std::chrono::steady_clock::now();
  for (long n = 0; n < kFmaRounds; ++n) {
    PSHARD_UNROLL
    for (int i = 0; i < 12; ++i)
      a[i] = _mm512_fmadd_ps(a[i], x, y);
    PSHARD_KEEP_12(a);
  }
  return 12.0 * kFmaRounds * 16 / seconds_since(t0);
}
__attribute__((target("avx2,fma"))) double fma_rate_avx2() {
  __m256 a[12];
  for (int i = 0; i < 12; ++i)
    a[i] = _mm256_set1_ps(0.001f * static_cast<float>(i));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(1e-4f);
  const auto t0 = std::chrono::steady_clock::now();
  for (long n = 0; n < kFmaRounds; ++n) {
    PSHARD_UNROLL
    for (int i = 0; i < 12; ++i)
      a[i] = _mm256_fmadd_ps(a[i], x, y);
    PSHARD_KEEP_12(a);
  }
  return 12.0 * kFmaRounds * 8 / seconds_since(t0);
}
#undef PSHARD_KEEP_12

// 0 for the scalar path (no vector FMA to measure).
double fma_peak(kernels::Isa isa) {
  switch (isa) {
  case kernels::Isa::kAvx512:
    return fma_rate_avx512();
  case kernels::Isa::kAvx2:
  case kernels::Isa::kAvx2Vnni:
    return fma_rate_avx2();
  default:
    return 0;
  }
}

// The same bytes summed in order: what streaming them costs on this thread.
double stream_seconds(const Cache& c) {
  const auto t0 = std::chrono::steady_clock::now();
  volatile float sink = 0; // the sums are used
  for (const Buffer* b : {&c.k, &c.v})
    sink = sink + stream_sum(reinterpret_cast<const float*>(b->data()),
                             static_cast<int64_t>(b->size() / sizeof(float)) & ~int64_t{63});
  return seconds_since(t0);
}

} // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> contexts = {1024, 4096, 16384};
  int reps = 7;
  int64_t group = 4;
  std::string only; // --isa: one path
  bool warm = false, per_head = false;
  const auto usage = [&] {
    std::fprintf(stderr,
                 "usage: %s [--contexts 1024,4096] [--reps 7] [--isa avx2] [--warm 1] "
                 "[--per-head 1] [--group 4]\n",
                 argv[0]);
    return 2;
  };
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 == argc) // options come in pairs: a lone last one (--help, a value left out)
      return usage();
    if (std::strcmp(argv[i], "--contexts") == 0)
      contexts = parse_list(argv[i + 1]);
    else if (std::strcmp(argv[i], "--isa") == 0)
      only = argv[i + 1];
    else if (std::strcmp(argv[i], "--per-head") == 0)
      per_head = std::atoi(argv[i + 1]) != 0;
    else if (std::strcmp(argv[i], "--group") == 0)
      group = std::max(1, std::atoi(argv[i + 1]));
    else if (std::strcmp(argv[i], "--warm") == 0)
      warm = std::atoi(argv[i + 1]) != 0;
    else if (std::strcmp(argv[i], "--reps") == 0)
      reps = std::max(1, std::atoi(argv[i + 1]));
    else
      return usage();
  }
  std::vector<float> q(group * kKvHeads * kHeadDim), out(group * kKvHeads * kHeadDim);
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float& x : q)
    x = dist(rng);
  std::printf("| ISA | context | layers | KV MiB a token | ms a layer | KV GB/s | stream GB/s | "
              "ratio | FMA share |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  const kernels::Isa isas[] = {kernels::Isa::kScalar, kernels::Isa::kAvx2, kernels::Isa::kAvx512};
  for (const int64_t context : contexts) {
    const Cache c = make_cache(context, warm);
    std::vector<float> scores(static_cast<size_t>(kKvHeads * group * (context + 1)));
    const double bytes = 2.0 * static_cast<double>(c.k.size());
    for (const kernels::Isa isa : isas) {
      if ((!only.empty() && only != kernels::isa_name(isa)) || !kernels::force_isa(isa))
        continue;
      std::vector<double> t, s;
      decode_token(c, q, out, scores, group, per_head); // warm: pages touched
      for (int r = 0; r < reps; ++r) {
        s.push_back(stream_seconds(c));
        const auto t0 = std::chrono::steady_clock::now();
        decode_token(c, q, out, scores, group, per_head);
        t.push_back(seconds_since(t0));
      }
      const double tm = median(t), sm = median(s);
      // Multiply-adds a token: scores and the weighted V sum, each value of each row once
      // per query head.
      const double fmas =
          2.0 * static_cast<double>(c.layers * context * kKvHeads * group * kHeadDim);
      const double peak = fma_peak(isa);
      std::printf("| %s | %lld | %lld | %.1f | %.3f | %.2f | %.2f | %.2f | %.2f |\n",
                  kernels::isa_name(isa), static_cast<long long>(context),
                  static_cast<long long>(c.layers), bytes / c.layers / (1 << 20),
                  tm * 1e3 / static_cast<double>(c.layers), bytes / tm * 1e-9, bytes / sm * 1e-9,
                  sm / tm, peak > 0 ? fmas / tm / peak : 0.0);
    }
    kernels::force_isa(kernels::detected_isa());
  }
  return 0;
}
