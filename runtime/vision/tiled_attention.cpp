#include "runtime/vision/tiled_attention.h"

#include "runtime/kernels/attention_kernel.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace pshard {
namespace {

// One (run, query tile, head) unit of work.
struct Unit {
  int64_t run = 0, q0 = 0, q1 = 0, head = 0;
};

struct Scratch {
  float* acc; // tile x head_dim
  float* max; // tile
  float* sum; // tile
};

// A worker's tile, cut to the longest run.
int64_t slot_tile(int64_t tile, int64_t longest_run) {
  return std::clamp<int64_t>(tile, 1, std::max<int64_t>(1, longest_run));
}

Scratch carve(float* slot, int64_t tile, int64_t hd) {
  return {slot, slot + tile * hd, slot + tile * hd + tile};
}

void run_unit(const TiledAttention& a, const Unit& u, int64_t k0, int64_t k1, Scratch s) {
  const int64_t hd = a.head_dim, stride = a.n_head * hd, nq = u.q1 - u.q0;
  const int64_t h_off = u.head * hd;
  std::fill_n(s.acc, nq * hd, 0.0f);
  std::fill_n(s.max, nq, -std::numeric_limits<float>::infinity());
  std::fill_n(s.sum, nq, 0.0f);
  AttendBlock b;
  b.q = a.q + u.q0 * stride + h_off;
  b.q_stride = b.kv_stride = stride;
  b.nq = nq;
  b.head_dim = hd;
  b.scale = 1.0f / std::sqrt(static_cast<float>(hd));
  b.acc = s.acc;
  b.max = s.max;
  b.sum = s.sum;
  for (int64_t b0 = k0; b0 < k1; b0 += kKeyBlock) { // the active ISA path's block step
    b.k = a.k + b0 * stride + h_off;
    b.v = a.v + b0 * stride + h_off;
    b.nb = std::min(kKeyBlock, k1 - b0);
    attend_block(b);
  }
  for (int64_t i = 0; i < nq; ++i) {
    float* o = a.out + (u.q0 + i) * stride + h_off;
    const float inv = 1.0f / s.sum[i];
    for (int64_t d = 0; d < hd; ++d)
      o[d] = s.acc[i * hd + d] * inv;
  }
}

} // namespace

int64_t tiled_attention_scratch_floats(int64_t tile, int64_t head_dim, int64_t longest_run) {
  const int64_t t = slot_tile(tile, longest_run);
  return t * head_dim + 2 * t;
}

uint64_t tiled_attention_scratch_bytes(int64_t tile, int64_t head_dim, int64_t workers,
                                       int64_t longest_run) {
  return static_cast<uint64_t>(tiled_attention_scratch_floats(tile, head_dim, longest_run) *
                               workers) *
         sizeof(float);
}

void tiled_attention(const TiledAttention& a, float* scratch, int64_t workers, ThreadPool& pool) {
  int64_t longest = 1;
  for (size_t r = 0; r + 1 < a.runs.size(); r += 2)
    longest = std::max(longest, a.runs[r + 1] - a.runs[r]);
  const int64_t tile = slot_tile(a.tile, longest);
  std::vector<Unit> units;
  for (size_t r = 0; r + 1 < a.runs.size(); r += 2) {
    const int64_t begin = a.runs[r];
    const int64_t end =
        a.max_queries > 0 ? std::min(a.runs[r + 1], begin + a.max_queries) : a.runs[r + 1];
    for (int64_t q0 = begin; q0 < end; q0 += tile)
      for (int64_t h = 0; h < a.n_head; ++h)
        units.push_back({static_cast<int64_t>(r), q0, std::min(q0 + tile, end), h});
  }
  // Worker w takes units [w U / W, (w + 1) U / W) and scratch slot w: the split does not
  // depend on the pool, and no two workers share a slot.
  const auto n_units = static_cast<int64_t>(units.size());
  const int64_t n_workers = std::clamp<int64_t>(workers, 1, std::max<int64_t>(1, n_units));
  const int64_t slot_floats = tiled_attention_scratch_floats(a.tile, a.head_dim, longest);
  pool.parallel_for(n_workers, [&](int64_t begin, int64_t end) {
    for (int64_t w = begin; w < end; ++w) {
      const Scratch s = carve(scratch + w * slot_floats, tile, a.head_dim);
      for (int64_t u = w * n_units / n_workers; u < (w + 1) * n_units / n_workers; ++u) {
        const Unit& unit = units[static_cast<size_t>(u)];
        const size_t r = static_cast<size_t>(unit.run);
        run_unit(a, unit, a.runs[r], a.runs[r + 1], s);
      }
    }
  });
}

void untiled_attention(const TiledAttention& a, ThreadPool& pool) {
  int64_t n = 0;
  for (size_t r = 1; r < a.runs.size(); r += 2)
    n = std::max(n, a.runs[r]);
  std::vector<int64_t> run_of(static_cast<size_t>(n), -1);
  for (size_t r = 0; r + 1 < a.runs.size(); r += 2)
    for (int64_t t = a.runs[r]; t < a.runs[r + 1]; ++t)
      run_of[static_cast<size_t>(t)] = static_cast<int64_t>(r);
  const int64_t hd = a.head_dim, stride = a.n_head * hd;
  const size_t row_bytes = static_cast<size_t>(stride) * sizeof(float);
  pool.parallel_for(n, [&](int64_t begin, int64_t end) {
    std::vector<float> scores(static_cast<size_t>(n));
    for (int64_t t = begin; t < end; ++t) {
      if (run_of[static_cast<size_t>(t)] < 0)
        continue;
      const size_t r = static_cast<size_t>(run_of[static_cast<size_t>(t)]);
      const int64_t k0 = a.runs[r], k1 = a.runs[r + 1];
      if (a.max_queries > 0 && t - k0 >= a.max_queries)
        continue;
      for (int64_t h = 0; h < a.n_head; ++h) {
        AttendHead head;
        head.q = a.q + t * stride + h * hd;
        head.k = reinterpret_cast<const uint8_t*>(a.k + k0 * stride + h * hd);
        head.v = reinterpret_cast<const uint8_t*>(a.v + k0 * stride + h * hd);
        head.k_row_bytes = head.v_row_bytes = row_bytes;
        head.n_kv = k1 - k0;
        head.head_dim = hd;
        head.scale = 1.0f / std::sqrt(static_cast<float>(hd));
        head.out = a.out + t * stride + h * hd;
        head.scores = scores.data();
        attend_head(head);
      }
    }
  });
}

} // namespace pshard
