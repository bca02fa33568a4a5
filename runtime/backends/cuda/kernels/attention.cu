// Causal grouped-query attention over the KV cache in VRAM (rows of F32, F16 or Q8_0,
// contiguous or paged), flash-attention style: keys
// and values stream through shared memory in tiles of 32 positions and each query head
// keeps a running max, sum and weighted accumulator (online softmax), so memory is
// O(tile), never O(context²).
//
// A block serves one token and one KV head: the K/V tile it loads is shared by the warps
// of that KV head's query heads (GQA), one warp per query head, up to kMaxWarps per
// block (grid.z covers larger groups). In a warp, lane j scores key j of the tile, and
// lane l owns head dimensions l, l + 32, … of the accumulator.
//
// Decode (a few tokens) with scratch splits the positions too (flash-decoding): one
// token and KV head is otherwise a handful of blocks on a GPU of 100+ multiprocessors,
// each streaming the whole cache alone — at a 4K context, a block per KV head reads
// megabytes. Each block then covers one chunk of positions and leaves its running max,
// sum and unnormalised accumulator in the scratch; a second kernel merges the chunks per
// head (the same online-softmax rescaling, across chunks instead of tiles).
//
// A sink (gpt-oss) is one more score with a zero value row: chunk 0 starts its running
// state from it (max = sink, sum = 1) instead of (-inf, 0), so every merge counts it once.
#include "runtime/backends/cuda/kernels/attention_merge.cuh"
#include "runtime/backends/cuda/kernels/block_formats.cuh"
#include "runtime/backends/cuda/kernels/kernels.h"

#include <cmath>

namespace pshard::cuda::kernels {
namespace {

constexpr int kTile = 32;
constexpr int kMaxWarps = 8;
constexpr int kMaxDimsPerLane = 8; // head_dim <= 256

// Value c of a K/V row of type t (F32, F16 or Q8_0).
__device__ __forceinline__ float kv_value(const uint8_t* row, TensorType t, int64_t c) {
  switch (t) {
  case TensorType::kF16:
    return weight_at<TensorType::kF16>(row, c);
  case TensorType::kQ8_0:
    return weight_at<TensorType::kQ8_0>(row, c);
  default:
    return weight_at<TensorType::kF32>(row, c);
  }
}

// The row of position p: through the page table when the cache is paged, around the
// ring when it is one.
__device__ __forceinline__ int64_t kv_row(const KvRows& kv, int64_t p) {
  return kv.pages  ? static_cast<int64_t>(kv.pages[p / kv.page_tokens]) * kv.page_tokens +
                         p % kv.page_tokens
         : kv.ring ? p % kv.ring
                   : p;
}

// split.chunk == 0: one block covers every position and writes `out`; otherwise block
// z / split.groups_z covers positions [s * chunk, (s + 1) * chunk) and writes its partial
// (hd accumulator values, then max and sum) at split.partial, per (token, head, chunk).
struct Split {
  int64_t chunk = 0;
  int64_t n_chunks = 1;
  int64_t groups_z = 1;
  float* partial = nullptr;
};

__global__ void attention_kernel(const float* q, KvRows kv, int64_t n_head, int64_t group,
                                 int64_t hd, int64_t pos0, float scale, float* out, Split split,
                                 int64_t window, float softcap, float temp_scale,
                                 int64_t temp_length, const float* sinks, int64_t seen_end,
                                 bool symmetric, bool chunked) {
  extern __shared__ float smem[];
  const int64_t kstride = hd + 1; // padded: lanes reading different keys hit different banks
  float* ks = smem;
  float* vs = ks + kTile * kstride;
  float* qs = vs + kTile * hd;
  const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, nw = blockDim.x / 32;
  const int64_t t = blockIdx.x, g = blockIdx.y;
  const int64_t chunk_index = blockIdx.z / split.groups_z;
  const int64_t head_in_group = (blockIdx.z % split.groups_z) * kMaxWarps + warp;
  const bool active = head_in_group < group;
  const int64_t h = g * group + head_in_group;
  const int64_t own = pos0 + t + 1;
  // Causal: positions [first, pos0 + t]; an encoder's (seen_end > 0): [0, seen_end), or
  // its window centred on the query (AttentionDims::first_visible / visible_end).
  int64_t causal = seen_end > 0 ? seen_end : own;
  int64_t first = window > 0 && own > window ? own - window : 0;
  if (window > 0 && chunked) // Llama 4: the query's chunk so far
    first = (own - 1) - (own - 1) % window;
  if (window > 0 && symmetric) {
    const int64_t half = window / 2;
    first = own - 1 > half ? own - 1 - half : 0;
    causal = own + half < causal ? own + half : causal;
  }
  if (temp_scale != 0.0f && temp_length > 0) // as AttentionDims::score_scale(pos)
    scale *= 1.0f + temp_scale * logf(floorf(static_cast<float>(own) /
                                             static_cast<float>(temp_length)) + 1.0f);
  // This block's positions [j_begin, n_kv); empty for a chunk past the token's end or
  // before its window (its partial then says so: max -inf, sum 0). Uniform across the
  // block, as the barriers in the loop need.
  const int64_t chunk_begin = split.chunk ? chunk_index * split.chunk : 0;
  const int64_t j_begin = chunk_begin > first ? chunk_begin : first;
  const int64_t j_end = split.chunk ? (chunk_index + 1) * split.chunk : causal;
  const int64_t n_kv = j_end < causal ? j_end : causal;
  float* qw = qs + warp * hd;
  if (active)
    for (int64_t d = lane; d < hd; d += 32)
      qw[d] = q[(t * n_head + h) * hd + d];
  float m = -INFINITY, l = 0.0f;
  if (sinks && active && chunk_index == 0) {
    m = sinks[h];
    l = 1.0f;
  }
  float acc[kMaxDimsPerLane] = {};
  for (int64_t j0 = j_begin; j0 < n_kv; j0 += kTile) {
    __syncthreads(); // the previous tile is consumed (and qw written, the first time)
    const int64_t rows = n_kv - j0 < kTile ? n_kv - j0 : kTile;
    for (int64_t i = threadIdx.x; i < rows * hd; i += blockDim.x) {
      const int64_t j = i / hd, d = i % hd;
      const int64_t r = kv_row(kv, j0 + j);
      ks[j * kstride + d] = kv_value(kv.k + r * kv.k_row_bytes, kv.k_type, g * hd + d);
      vs[j * hd + d] = kv_value(kv.v + r * kv.v_row_bytes, kv.v_type, g * hd + d);
    }
    __syncthreads();
    if (!active)
      continue;
    float s = -INFINITY;
    if (lane < rows) {
      float dot = 0.0f;
      for (int64_t d = 0; d < hd; ++d)
        dot += qw[d] * ks[lane * kstride + d];
      s = dot * scale;
      if (softcap > 0.0f)
        s = softcap * tanhf(s / softcap);
    }
    float tile_max = s;
    for (int o = 16; o > 0; o >>= 1)
      tile_max = fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, o));
    const float m_new = fmaxf(m, tile_max);
    const float p = lane < rows ? expf(s - m_new) : 0.0f;
    const float corr = expf(m - m_new);
    float p_sum = p;
    for (int o = 16; o > 0; o >>= 1)
      p_sum += __shfl_xor_sync(0xffffffffu, p_sum, o);
    l = l * corr + p_sum;
    m = m_new;
#pragma unroll
    for (int i = 0; i < kMaxDimsPerLane; ++i)
      acc[i] *= corr;
    for (int j = 0; j < rows; ++j) {
      const float pj = __shfl_sync(0xffffffffu, p, j);
#pragma unroll
      for (int i = 0; i < kMaxDimsPerLane; ++i) {
        const int64_t d = lane + 32 * i;
        if (d < hd)
          acc[i] += pj * vs[j * hd + d];
      }
    }
  }
  (void)nw;
  if (!active)
    return;
  if (split.chunk) {
    float* part = split.partial + ((t * n_head + h) * split.n_chunks + chunk_index) * (hd + 2);
#pragma unroll
    for (int i = 0; i < kMaxDimsPerLane; ++i) {
      const int64_t d = lane + 32 * i;
      if (d < hd)
        part[d] = acc[i];
    }
    if (lane == 0) {
      part[hd] = m;
      part[hd + 1] = l;
    }
    return;
  }
  const float inv = 1.0f / l;
#pragma unroll
  for (int i = 0; i < kMaxDimsPerLane; ++i) {
    const int64_t d = lane + 32 * i;
    if (d < hd)
      out[(t * n_head + h) * hd + d] = acc[i] * inv;
  }
}

// One block per (token, head): the chunks' partials merged into the head's output
// (attention_merge.cuh). Chunk 0 always holds the token's first position, so the overall
// max is finite; an empty chunk (max -inf) weighs expf(-inf) = 0.
__global__ void attention_merge_kernel(const float* partial, int64_t n_chunks, int64_t hd,
                                       float* out) {
  const int64_t row = blockIdx.x; // token * n_head + head
  const float* parts = partial + row * n_chunks * (hd + 2);
  const MergeScale scale = attention_merge_scale(parts, n_chunks, hd);
  for (int64_t d = threadIdx.x; d < hd; d += blockDim.x)
    out[row * hd + d] = attention_merge_value(parts, n_chunks, hd, scale, d);
}

// One block per token: its K and V rows into the cache's types. Q8_0 as ggml quantizes
// (d = max|x| / 127, q = round(x / d)), one warp per 32-value block.
__global__ void kv_store_kernel(const float* x, int64_t kv_dim, uint8_t* base, size_t row_bytes,
                                TensorType t, KvRows kv, int64_t pos0) {
  const int64_t tok = blockIdx.x;
  const int64_t r = kv_row(kv, pos0 + tok);
  const float* src = x + tok * kv_dim;
  uint8_t* row = base + r * row_bytes;
  if (t == TensorType::kF32) {
    for (int64_t i = threadIdx.x; i < kv_dim; i += blockDim.x)
      reinterpret_cast<float*>(row)[i] = src[i];
  } else if (t == TensorType::kF16) {
    for (int64_t i = threadIdx.x; i < kv_dim; i += blockDim.x) {
      const __half h = __float2half_rn(src[i]);
      memcpy(row + 2 * i, &h, 2);
    }
  } else { // Q8_0
    const int warp = threadIdx.x / 32, lane = threadIdx.x & 31, warps = blockDim.x / 32;
    for (int64_t b = warp; b < kv_dim / 32; b += warps) {
      const float v = src[b * 32 + lane];
      float amax = fabsf(v);
      for (int o = 16; o > 0; o >>= 1)
        amax = fmaxf(amax, __shfl_xor_sync(0xffffffffu, amax, o));
      const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
      uint8_t* blk = row + b * 34;
      blk[2 + lane] = static_cast<uint8_t>(static_cast<int8_t>(roundf(v * id)));
      if (lane == 0) {
        const __half h = __float2half_rn(d);
        memcpy(blk, &h, 2);
      }
    }
  }
}

} // namespace

cudaError_t kv_store(const float* x, int64_t n_tokens, const KvRows& kv, bool values,
                     int64_t pos0, cudaStream_t s) {
  if (n_tokens <= 0)
    return cudaGetLastError();
  kv_store_kernel<<<static_cast<unsigned>(n_tokens), 128, 0, s>>>(
      x, values ? kv.v_dim : kv.kv_dim, values ? kv.v : kv.k, values ? kv.v_row_bytes : kv.k_row_bytes,
      values ? kv.v_type : kv.k_type, kv, pos0);
  return cudaGetLastError();
}

AttentionSplit plan_attention_split(int64_t n_head, int64_t head_dim, int64_t pos0,
                                    int64_t n_tokens, size_t scratch_bytes) {
  AttentionSplit a;
  if (n_tokens <= 0 || n_tokens > kAttentionSplitMaxTokens || head_dim <= 0 || n_head <= 0)
    return a;
  const int64_t positions = pos0 + n_tokens; // the last token's causal window
  const auto per_chunk = static_cast<size_t>(n_tokens * n_head * (head_dim + 2)) * sizeof(float);
  const int64_t fit = static_cast<int64_t>(scratch_bytes / per_chunk);
  if (fit < 1)
    return a;
  const int64_t cap = fit < kAttentionMaxChunks ? fit : kAttentionMaxChunks;
  int64_t chunk = kAttentionChunk;
  while ((positions + chunk - 1) / chunk > cap)
    chunk *= 2;
  a.chunk = chunk;
  a.n_chunks = (positions + chunk - 1) / chunk;
  return a;
}

cudaError_t attention(const float* q, const KvRows& kv, const AttentionShape& shape, int64_t pos0,
                      int64_t n_tokens, float* out, cudaStream_t s, float* scratch,
                      size_t scratch_bytes) {
  const int64_t n_head = shape.n_head, n_head_kv = shape.n_head_kv, head_dim = shape.head_dim;
  if (head_dim <= 0 || head_dim > 32 * kMaxDimsPerLane || n_head <= 0 || n_head_kv <= 0 ||
      n_head % n_head_kv != 0)
    return cudaErrorInvalidValue;
  if (n_tokens <= 0)
    return cudaGetLastError();
  const int64_t group = n_head / n_head_kv;
  const int warps = static_cast<int>(group < kMaxWarps ? group : kMaxWarps);
  const size_t smem = sizeof(float) * static_cast<size_t>(kTile * (head_dim + 1) +
                                                          kTile * head_dim + warps * head_dim);
  if (smem > 48 * 1024) {
    const cudaError_t e = cudaFuncSetAttribute(
        attention_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (e != cudaSuccess)
      return e;
  }
  const float scale = shape.scale;
  const int64_t groups_z = (group + kMaxWarps - 1) / kMaxWarps;
  const AttentionSplit plan =
      scratch ? plan_attention_split(n_head, head_dim, pos0, n_tokens, scratch_bytes)
              : AttentionSplit{};
  Split split;
  split.groups_z = groups_z;
  if (plan.chunk > 0) {
    split.chunk = plan.chunk;
    split.n_chunks = plan.n_chunks;
    split.partial = scratch;
  }
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(n_head_kv),
                  static_cast<unsigned>(groups_z * split.n_chunks));
  attention_kernel<<<grid, warps * 32, smem, s>>>(q, kv, n_head, group, head_dim, pos0, scale,
                                                  out, split, shape.window, shape.softcap,
                                                  shape.temp_scale, shape.temp_length,
                                                  shape.sinks,
                                                  shape.causal ? 0 : pos0 + n_tokens,
                                                  shape.symmetric_window && !shape.causal,
                                                  shape.chunked);
  if (split.chunk) {
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess)
      return e;
    attention_merge_kernel<<<static_cast<unsigned>(n_tokens * n_head), 128, 0, s>>>(
        scratch, split.n_chunks, head_dim, out);
  }
  return cudaGetLastError();
}

} // namespace pshard::cuda::kernels
