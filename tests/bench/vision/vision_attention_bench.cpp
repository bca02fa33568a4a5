// The tiled vision attention's memory and time as the image grows: for 480p, 720p,
// 1080p and 1440p frames (16:9, sides rounded up to 28-pixel image tokens: the patch
// counts of pshard-compile's tiers) in a Qwen2.5-VL-shaped attention (16 heads of 80),
// prints the scratch the tiled kernel touched (measured: its scratch is filled with a
// sentinel first and the highest byte written is found afterwards), the score matrix an
// untiled attention would hold (16 x patches² floats), and the time of window attention (8 x
// 8-patch windows, all queries) and of full attention over every key (timed on the first --queries
// queries, and that time scaled to all of them, since 1440p full attention takes minutes on a
// laptop CPU).
//
//   build/tests/bench/vision_attention_bench --threads 2 --tile 256 --queries 128
#include "runtime/core/thread_pool.h"
#include "runtime/vision/tiled_attention.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

using pshard::TiledAttention;

constexpr int64_t kHeads = 16, kHeadDim = 80, kPatch = 14, kMerged = 28, kWindow = 8;
constexpr uint32_t kSentinel = 0x7fc0dead; // a NaN no kernel writes

struct Frame {
  const char* name;
  int64_t width, height;
};

// Sides rounded up to whole image tokens, as the preprocessor and the planner's tiers do.
int64_t rounded(int64_t side) { return (side + kMerged - 1) / kMerged * kMerged; }

// Runs of window attention: kWindow x kWindow patches, in the encoder's grouped order
// (every window one contiguous run), the last row and column of windows shorter.
std::vector<int64_t> window_runs(int64_t px, int64_t py) {
  std::vector<int64_t> runs;
  int64_t at = 0;
  for (int64_t wy = 0; wy < py; wy += kWindow)
    for (int64_t wx = 0; wx < px; wx += kWindow) {
      const int64_t n = std::min(kWindow, px - wx) * std::min(kWindow, py - wy);
      runs.insert(runs.end(), {at, at + n});
      at += n;
    }
  return runs;
}

// Milliseconds of one call, and the scratch bytes it wrote (the highest sentinel lost).
std::pair<double, uint64_t> run(TiledAttention a, std::vector<uint32_t>& scratch, int64_t workers,
                                pshard::ThreadPool& pool) {
  std::fill(scratch.begin(), scratch.end(), kSentinel);
  const auto t0 = std::chrono::steady_clock::now();
  pshard::tiled_attention(a, reinterpret_cast<float*>(scratch.data()), workers, pool);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Each worker's slot is written from its start; the touched bytes are each slot's
  // highest written word, summed.
  const auto slot = static_cast<size_t>(pshard::tiled_attention_scratch_floats(a.tile, a.head_dim));
  uint64_t touched = 0;
  for (size_t w = 0; w < static_cast<size_t>(workers); ++w) {
    size_t top = 0;
    for (size_t i = 0; i < slot; ++i)
      if (scratch[w * slot + i] != kSentinel)
        top = i + 1;
    touched += top * sizeof(float);
  }
  return {ms, touched};
}

std::string mib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", bytes / (1 << 20));
  return buf;
}

} // namespace

int main(int argc, char** argv) {
  int threads = 2;
  int64_t tile = 256, queries = 128;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const long long v = std::atoll(argv[i + 1]);
    if (flag == "--threads")
      threads = static_cast<int>(v);
    else if (flag == "--tile")
      tile = v;
    else if (flag == "--queries")
      queries = v;
    else {
      std::fprintf(stderr, "usage: %s [--threads N] [--tile N] [--queries N]\n", argv[0]);
      return 2;
    }
  }
  if (threads < 1 || tile < 1 || queries < 1) {
    std::fprintf(stderr, "--threads, --tile and --queries take positive numbers\n");
    return 2;
  }
  pshard::ThreadPool pool(threads);
  const Frame frames[] = {
      {"480p", 854, 480}, {"720p", 1280, 720}, {"1080p", 1920, 1080}, {"1440p", 2560, 1440}};
  std::printf("Qwen2.5-VL-shaped attention: %lld heads x %lld, query tile %lld, key block "
              "%lld, %d threads; full attention timed on %lld queries\n\n",
              static_cast<long long>(kHeads), static_cast<long long>(kHeadDim),
              static_cast<long long>(tile), static_cast<long long>(pshard::kKeyBlock), threads,
              static_cast<long long>(queries));
  std::printf("| image | patches | tiled scratch (measured) MiB | untiled scores MiB | window ms | "
              "full ms (%lld q) | full ms (all, scaled) | untiled full ms (%lld q) |\n",
              static_cast<long long>(queries), static_cast<long long>(queries));
  std::printf("|---|---:|---:|---:|---:|---:|---:|---:|\n");
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (const Frame& f : frames) {
    const int64_t px = rounded(f.width) / kPatch, py = rounded(f.height) / kPatch, n = px * py;
    std::vector<float> q(static_cast<size_t>(n * kHeads * kHeadDim)), k(q.size()), v(q.size()),
        out(q.size());
    for (std::vector<float>* x : {&q, &k, &v})
      for (float& e : *x)
        e = dist(rng);
    std::vector<uint32_t> scratch(
        static_cast<size_t>(pshard::tiled_attention_scratch_floats(tile, kHeadDim) * threads));
    TiledAttention a;
    a.q = q.data();
    a.k = k.data();
    a.v = v.data();
    a.out = out.data();
    a.n_head = kHeads;
    a.head_dim = kHeadDim;
    a.tile = tile;
    const std::vector<int64_t> windows = window_runs(px, py), whole = {0, n};
    a.runs = windows;
    const auto [window_ms, window_bytes] = run(a, scratch, threads, pool);
    a.runs = whole;
    a.max_queries = std::min(queries, n);
    const auto [full_ms, full_bytes] = run(a, scratch, threads, pool);
    const auto u0 = std::chrono::steady_clock::now();
    pshard::untiled_attention(a, pool); // the same queries, two-pass softmax, O(n) per query
    const double untiled_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - u0).count();
    const double untiled = static_cast<double>(kHeads) * static_cast<double>(n) *
                           static_cast<double>(n) * sizeof(float);
    std::printf("| %s (%lldx%lld) | %lld | %s | %s | %.1f | %.1f | %.0f | %.1f |\n", f.name,
                static_cast<long long>(rounded(f.width)), static_cast<long long>(rounded(f.height)),
                static_cast<long long>(n),
                mib(static_cast<double>(std::max(window_bytes, full_bytes))).c_str(),
                mib(untiled).c_str(), window_ms, full_ms,
                full_ms * static_cast<double>(n) / static_cast<double>(a.max_queries), untiled_ms);
  }
  return 0;
}
