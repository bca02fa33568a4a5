// Conformance: every Ops operation of the CUDA backend against the CPU backend (the
// reference path) on random inputs at odd shapes. Error is ||gpu - cpu|| / ||cpu|| over
// the whole output, bounded per case:
//
//   f32 weights, elementwise ops, attention      1e-5 .. 1e-4  (summation order, expf/powf ulps)
//   f16 weights                                  2e-3  (prefill rounds activations to f16)
//   bf16 weights                                 1e-2  (prefill rounds activations to bf16)
//   quantized weights (q8_0 … iq4_xs)            2e-2  (the CPU rounds activations to 8 bits,
//                                                       per 32 or, for K-quants, 256 values;
//                                                       the GPU keeps them float)
#include "cuda_test_util.h"
#include "runtime/backends/cpu/cpu_ops.h"
#include "runtime/kernels/quantize.h"

namespace pshard {
namespace {

using namespace cuda_testing;

class CudaConformance : public ::testing::Test {
protected:
  void SetUp() override {
    PSHARD_SKIP_WITHOUT_CUDA();
    auto d = CudaDevice::create();
    ASSERT_TRUE(d.ok()) << d.status().to_string();
    device_ = std::move(*d);
    const Status arena = allocate_arena_with_workspace(*device_, 256ull << 20);
    ASSERT_TRUE(arena.ok()) << arena.to_string();
    buf_ = std::make_unique<DeviceBuffers>(*device_);
  }
  Ops& gpu() { return device_->compute(); }
  void sync() { ASSERT_TRUE(device_->synchronize().ok()) << device_->synchronize().to_string(); }

  ThreadPool pool_{2};
  CpuOps cpu_{pool_};
  std::unique_ptr<CudaDevice> device_;
  std::unique_ptr<DeviceBuffers> buf_;
};

// A KV cache of ctx positions of random rows in `type` (seeds k_seed, k_seed + 1), on host
// and device; paged through `pages` (16-position pages, which the caller keeps alive)
// when it is not empty.
struct TestKv {
  std::vector<uint8_t> k, v;
  KvView cpu, gpu;
};

TestKv make_kv(DeviceBuffers& buf, TensorType type, int64_t ctx, int64_t kv_dim, uint32_t k_seed,
               const std::vector<int32_t>& pages) {
  TestKv kv;
  const size_t row = *tensor_bytes(type, kv_dim);
  kv.k.resize(row * ctx);
  kv.v.resize(row * ctx);
  const auto kf = random_floats(ctx * kv_dim, k_seed), vf = random_floats(ctx * kv_dim, k_seed + 1);
  for (int64_t p = 0; p < ctx; ++p) {
    EXPECT_TRUE(quantize_row(type, kf.data() + p * kv_dim, kv.k.data() + p * row, kv_dim).ok());
    EXPECT_TRUE(quantize_row(type, vf.data() + p * kv_dim, kv.v.data() + p * row, kv_dim).ok());
  }
  kv.cpu = KvView{kv.k.data(), kv.v.data(), ctx, kv_dim};
  kv.gpu = KvView{buf.upload(kv.k), buf.upload(kv.v), ctx, kv_dim};
  kv.cpu.k_type = kv.cpu.v_type = kv.gpu.k_type = kv.gpu.v_type = type;
  if (!pages.empty()) {
    kv.cpu = kv.cpu.with_pages(pages.data(), ctx);
    kv.gpu = kv.gpu.with_pages(buf.upload(pages), ctx);
    kv.cpu.page_tokens = kv.gpu.page_tokens = 16;
  }
  return kv;
}

// A rows x cols weight matrix of `type` from random floats, on host and device.
struct Weights {
  std::vector<uint8_t> host;
  MatrixView cpu, gpu;
};

Weights make_weights(DeviceBuffers& buf, TensorType type, int64_t rows, int64_t cols,
                     uint32_t seed) {
  Weights w;
  const size_t row_bytes = *tensor_bytes(type, cols);
  w.host.resize(row_bytes * static_cast<size_t>(rows));
  const std::vector<float> f = random_floats(static_cast<size_t>(rows * cols), seed);
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_TRUE(quantize_row(type, f.data() + r * cols, w.host.data() + r * row_bytes, cols).ok());
  w.cpu = {type, w.host.data(), rows, cols, row_bytes};
  w.gpu = w.cpu;
  w.gpu.data = buf.upload(w.host);
  return w;
}


TEST_F(CudaConformance, RmsNorm) {
  const int64_t n = 3, d = 77;
  const auto x = random_floats(n * d, 1), w = random_floats(d, 2);
  std::vector<float> want(n * d);
  cpu_.rms_norm(x.data(), w.data(), want.data(), n, d, 1e-5f);
  float* gx = buf_->upload(x);
  gpu().rms_norm(gx, buf_->upload(w), gx, n, d, 1e-5f); // in place, as ops.h allows
  sync();
  EXPECT_LE(relative_error(buf_->download(gx, n * d), want), 1e-5);
}

// The encoders' LayerNorm (BERT: with a bias), in place as ops.h allows; rows of an odd
// width and one wider than a block.
TEST_F(CudaConformance, LayerNorm) {
  for (const int64_t d : {77, 1024 + 33}) {
    const int64_t n = 3;
    const auto x = random_floats(n * d, 31, -4.0f, 4.0f), w = random_floats(d, 32),
               b = random_floats(d, 33);
    std::vector<float> want(n * d);
    cpu_.layer_norm(x.data(), w.data(), b.data(), want.data(), n, d, 1e-12f);
    float* gx = buf_->upload(x);
    gpu().layer_norm(gx, buf_->upload(w), buf_->upload(b), gx, n, d, 1e-12f);
    // ModernBERT's norms have no bias.
    std::vector<float> plain(n * d);
    cpu_.layer_norm(x.data(), w.data(), nullptr, plain.data(), n, d, 1e-5f);
    float* gp = buf_->zeros(n * d);
    gpu().layer_norm(buf_->upload(x), buf_->upload(w), nullptr, gp, n, d, 1e-5f);
    sync();
    EXPECT_LE(relative_error(buf_->download(gx, n * d), want), 1e-5) << "d " << d;
    EXPECT_LE(relative_error(buf_->download(gp, n * d), plain), 1e-5) << "no bias, d " << d;
  }
}

// ModernBERT's GeGLU with GELU's exact form.
TEST_F(CudaConformance, GeluErfMul) {
  const int64_t n = 1001;
  const auto g = random_floats(n, 34, -6.0f, 6.0f), u = random_floats(n, 35);
  std::vector<float> want(n);
  cpu_.gelu_erf_mul(g.data(), u.data(), want.data(), n);
  float* gg = buf_->upload(g);
  gpu().gelu_erf_mul(gg, buf_->upload(u), gg, n);
  sync();
  EXPECT_LE(relative_error(buf_->download(gg, n), want), 1e-5);
}

TEST_F(CudaConformance, MatmulEveryTypeAndTokenCount) {
  size_t n_types = 0;
  const TensorType* types = supported_tensor_types(&n_types);
  for (TensorType type : std::vector<TensorType>(types, types + n_types))
    for (int64_t cols : {75, 160, 512}) {
      if (cols % tensor_type_traits(type).block_values != 0)
        continue; // quantized rows are whole blocks (K-quants: of 256)
      // 75 columns: the generic matvec path; 160: the 16-byte vector loads of float rows.
      const int64_t rows = 67;
      const Weights w = make_weights(*buf_, type, rows, cols, 3);
      for (int64_t n : {1, 5, 8, 9, 33}) { // matvec path up to 8 tokens, cuBLASLt past it
        SCOPED_TRACE(std::string(tensor_type_name(type)) + " n_tokens " + std::to_string(n));
        const auto x = random_floats(static_cast<size_t>(n * cols), 4);
        std::vector<float> want(static_cast<size_t>(n * rows));
        cpu_.matmul(w.cpu, x.data(), n, want.data());
        float* gy = buf_->zeros(static_cast<size_t>(n * rows));
        gpu().matmul(w.gpu, buf_->upload(x), n, gy);
        sync();
        EXPECT_LE(relative_error(buf_->download(gy, want.size()), want), matmul_bound(type));
      }
    }
}

TEST_F(CudaConformance, LargePrefillMatmulChunksThroughTheWorkspace) {
  // 1100 tokens x 4096 columns of f16 activations overflow one workspace chunk (8 MiB).
  const int64_t rows = 96, cols = 4096, n = 1100;
  const Weights w = make_weights(*buf_, TensorType::kQ8_0, rows, cols, 5);
  const auto x = random_floats(static_cast<size_t>(n * cols), 6);
  std::vector<float> want(static_cast<size_t>(n * rows));
  cpu_.matmul(w.cpu, x.data(), n, want.data());
  float* gy = buf_->zeros(want.size());
  gpu().matmul(w.gpu, buf_->upload(x), n, gy);
  sync();
  EXPECT_LE(relative_error(buf_->download(gy, want.size()), want), 2e-2);
}

TEST_F(CudaConformance, RopeWithAndWithoutFrequencyFactors) {
  const int64_t n = 3, heads = 5, hd = 12;
  const auto factors = random_floats(4, 7, 1.0f, 4.0f);
  for (bool with_factors : {false, true}) {
    RopeParams p;
    p.head_dim = hd;
    p.rot_dim = 8; // partial rotation: the last 4 values of each head stay
    p.freq_base = 500000.0f;
    p.freq_scale = 0.5f;
    auto x = random_floats(n * heads * hd, 8);
    float* gx = buf_->upload(x);
    RopeParams gp = p;
    if (with_factors) {
      p.freq_factors = factors.data();
      gp.freq_factors = buf_->upload(factors);
    }
    cpu_.rope(x.data(), n, heads, 37, p);
    gpu().rope(gx, n, heads, 37, gp);
    sync();
    EXPECT_LE(relative_error(buf_->download(gx, x.size()), x), 1e-5) << with_factors;
  }
}

// Both pairings (adjacent, NeoX) under every scaling: none, linear, llama3 from its keys
// (no factor tensor), YaRN (per-dimension ramp and magnitude scale).
TEST_F(CudaConformance, RopeStylesAndScalings) {
  const int64_t n = 4, heads = 3, hd = 32;
  for (bool neox : {false, true})
    for (RopeScaling scaling : {RopeScaling::kNone, RopeScaling::kLinear, RopeScaling::kLlama3,
                                RopeScaling::kYarn}) {
      RopeParams p;
      p.head_dim = hd;
      p.rot_dim = hd;
      p.freq_base = 1000000.0f;
      p.neox = neox;
      p.scaling = scaling;
      p.scaling_factor = 8.0f;
      p.n_ctx_orig = 256;
      if (scaling == RopeScaling::kLinear || scaling == RopeScaling::kYarn)
        p.freq_scale = 0.25f;
      if (scaling == RopeScaling::kYarn)
        p.ext_factor = 1.0f;
      auto x = random_floats(n * heads * hd, 31);
      float* gx = buf_->upload(x);
      cpu_.rope(x.data(), n, heads, 1000, p);
      gpu().rope(gx, n, heads, 1000, p);
      sync();
      EXPECT_LE(relative_error(buf_->download(gx, x.size()), x), 1e-5)
          << (neox ? "neox" : "normal") << " scaling " << static_cast<int>(scaling);
    }
}

// The Qwen sub-layer forms: q/k/v biases, per-head q/k RMSNorm (rows of head_dim), and
// the shared expert's sigmoid-gated add.
TEST_F(CudaConformance, BiasPerHeadNormAndGatedAdd) {
  const int64_t n = 3, d = 40, heads = 5, hd = 8;
  auto y = random_floats(n * d, 32);
  const auto bias = random_floats(d, 33), x = random_floats(n * d, 34);
  const auto gate = random_floats(n, 35, -4.0f, 4.0f), norm_w = random_floats(hd, 36, 0.5f, 1.5f);
  float* gy = buf_->upload(y);
  gpu().add_bias(gy, buf_->upload(bias), n, d);
  gpu().add_gated(gy, buf_->upload(x), buf_->upload(gate), n, d);
  gpu().rms_norm(gy, buf_->upload(norm_w), gy, n * heads, hd, 1e-6f);
  cpu_.add_bias(y.data(), bias.data(), n, d);
  cpu_.add_gated(y.data(), x.data(), gate.data(), n, d);
  cpu_.rms_norm(y.data(), norm_w.data(), y.data(), n * heads, hd, 1e-6f);
  sync();
  EXPECT_LE(relative_error(buf_->download(gy, y.size()), y), 1e-5);
}

// KV caches of every type (F32, F16, Q8_0), contiguous and paged: the rows kv_append
// writes and the attention over them, against the CPU.
TEST_F(CudaConformance, KvAppendThenAttentionAcrossTiles) {
  // GQA 6 query heads over 2 KV heads; 70 cached positions span three 32-key tiles.
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0})
    for (bool paged : {false, true})
      for (int64_t hd : {32, 128}) {
        SCOPED_TRACE(std::string(tensor_type_name(type)) + (paged ? " paged" : "") +
                     " head_dim " + std::to_string(hd));
        const AttentionDims dims{6, 2, hd};
        const int64_t kv_dim = dims.n_head_kv * hd, ctx = 80, pos0 = 65, n = 5;
        const size_t row = *tensor_bytes(type, kv_dim);
        const std::vector<int32_t> pages =
            paged ? std::vector<int32_t>{4, 0, 3, 1, 2} : std::vector<int32_t>{}; // 5 of 16
        TestKv kv = make_kv(*buf_, type, ctx, kv_dim, 9, pages);
        const std::vector<uint8_t>& kh = kv.k;
        const KvView &ckv = kv.cpu, &gkv = kv.gpu;
        uint8_t* gk = gkv.k;
        const auto k_new = random_floats(n * kv_dim, 11), v_new = random_floats(n * kv_dim, 12);
        const auto q = random_floats(n * dims.n_head * hd, 13, -3.0f, 3.0f);
        std::vector<float> want(q.size());
        cpu_.kv_append(ckv, k_new.data(), v_new.data(), pos0, n);
        cpu_.attention(q.data(), ckv, dims, pos0, n, want.data());
        float* gout = buf_->zeros(q.size());
        gpu().kv_append(gkv, buf_->upload(k_new), buf_->upload(v_new), pos0, n);
        gpu().attention(buf_->upload(q), gkv, dims, pos0, n, gout);
        sync();
        std::vector<float> cpu_rows(ctx * kv_dim), gpu_rows(ctx * kv_dim);
        const std::vector<uint8_t> gk_back = buf_->download(gk, kh.size());
        for (int64_t p = 0; p < ctx; ++p) {
          dequantize_row(type, kh.data() + p * row, cpu_rows.data() + p * kv_dim, kv_dim);
          dequantize_row(type, gk_back.data() + p * row, gpu_rows.data() + p * kv_dim, kv_dim);
        }
        EXPECT_LE(relative_error(gpu_rows, cpu_rows), type == TensorType::kQ8_0 ? 1e-2 : 0.0)
            << "kv_append K";
        EXPECT_LE(relative_error(buf_->download(gout, want.size()), want),
                  type == TensorType::kQ8_0 ? 1e-3 : 1e-4);
      }
}

// A page table of 16-position pages over ctx positions, pages scattered (37 is prime to
// the counts used); empty: a contiguous cache.
std::vector<int32_t> scattered_pages(bool paged, int64_t ctx) {
  std::vector<int32_t> pages(paged ? static_cast<size_t>(ctx / 16) : 0);
  for (size_t i = 0; i < pages.size(); ++i)
    pages[i] = static_cast<int32_t>((i * 37) % pages.size());
  return pages;
}

// The long cache's size and the first position of its tokens.
constexpr int64_t kLongCtx = 3008, kLongPos0 = 2557;

// Attention of n tokens at positions kLongPos0.. over a cache of kLongCtx positions in `type`
// (contiguous or paged; K seeds kv_seed, kv_seed + 1, q seed q_seed) on the device against
// the CPU, as the relative error; `sinks` (host), when given, go to each side in its memory.
double long_cache_attention_error(CpuOps& cpu, CudaDevice& dev, DeviceBuffers& buf, TensorType type,
                                  AttentionDims dims, bool paged, int64_t n, uint32_t kv_seed,
                                  uint32_t q_seed, const std::vector<float>& sinks = {}) {
  const int64_t kv_dim = dims.n_head_kv * dims.head_dim, pos0 = kLongPos0;
  const TestKv kv = make_kv(buf, type, kLongCtx, kv_dim, kv_seed, scattered_pages(paged, kLongCtx));
  const auto q = random_floats(n * dims.n_head * dims.head_dim, q_seed, -3.0f, 3.0f);
  std::vector<float> want(q.size());
  dims.sinks = sinks.empty() ? nullptr : sinks.data();
  cpu.attention(q.data(), kv.cpu, dims, pos0, n, want.data());
  if (!sinks.empty())
    dims.sinks = buf.upload(sinks);
  float* gout = buf.zeros(q.size());
  dev.compute().attention(buf.upload(q), kv.gpu, dims, pos0, n, gout);
  const Status s = dev.synchronize();
  EXPECT_TRUE(s.ok()) << s.to_string();
  return relative_error(buf.download(gout, want.size()), want);
}

// Decode over a long cache: the positions split into chunks run side by side and merged
// (flash-decoding, attention.cu), against the CPU — one token and a few, F16 and Q8_0,
// contiguous and paged. The window ends just past a chunk's start, so the first tokens
// of a 5-token pass find the last chunk empty and the later ones hold 1-2 positions in
// it; GQA groups of 4, 12 (two head groups a block row, four warps idle) and 16 (head
// size 256); 9 tokens run whole (no split), the prefill path.
TEST_F(CudaConformance, DecodeAttentionSplitsLongCachesIntoChunks) {
  for (TensorType type : {TensorType::kF16, TensorType::kQ8_0})
    for (bool paged : {false, true})
      for (const AttentionDims& dims :
           {AttentionDims{8, 2, 128}, AttentionDims{24, 2, 64}, AttentionDims{16, 1, 256}})
        for (int64_t n : {1, 5, 9}) {
          SCOPED_TRACE(std::string(tensor_type_name(type)) + (paged ? " paged" : "") + " tokens " +
                       std::to_string(n) + " heads " + std::to_string(dims.n_head) + "/" +
                       std::to_string(dims.n_head_kv) + " of " + std::to_string(dims.head_dim));
          const auto split = cuda::kernels::plan_attention_split(
              dims.n_head, dims.head_dim, kLongPos0, n, cuda::CudaWorkspace::kScratchBytes);
          if (n <= cuda::kernels::kAttentionSplitMaxTokens) {
            ASSERT_GE(split.n_chunks, 10) << "the case must split (chunk 10 starts at 2560)";
          } else {
            ASSERT_EQ(split.chunk, 0) << "more tokens than decode: whole";
          }
          EXPECT_LE(long_cache_attention_error(cpu_, *device_, *buf_, type, dims, paged, n, 21, 23),
                    type == TensorType::kQ8_0 ? 1e-3 : 1e-4);
        }
}

// Gemma's attention: sliding windows that start inside a tile and inside a chunk (the
// earliest chunks wholly outside: empty partials), a scale other than 1/sqrt(head_dim)
// and soft-capped scores, on the whole-pass path (9 tokens) and the split decode path;
// Mistral 3's temperature (a per-position scale) on the wide window.
TEST_F(CudaConformance, AttentionThroughASlidingWindowWithSoftCappedScores) {
  for (bool paged : {false, true})
    for (int64_t n : {1, 5, 9})
      for (int64_t window : {7, 600}) {
        SCOPED_TRACE(std::string(paged ? "paged " : "") + std::to_string(n) + " tokens, window " +
                     std::to_string(window));
        AttentionDims dims{8, 2, 256};
        dims.window = window;
        dims.scale = 0.07f;
        dims.softcap = window == 7 ? 2.0f : 0.0f;
        dims.temp_scale = window == 7 ? 0.0f : 0.3f; // Mistral 3's temperature, steps of 1000
        dims.temp_length = 1000;
        EXPECT_LE(long_cache_attention_error(cpu_, *device_, *buf_, TensorType::kF16, dims, paged,
                                             n, 31, 33),
                  1e-4);
      }
}

// Llama 4's chunks: a query sees its chunk so far (chunks of 600 and 7 positions: the
// decode path's earliest split chunks empty, and a chunk starting inside a tile).
TEST_F(CudaConformance, AttentionInChunks) {
  for (bool paged : {false, true})
    for (int64_t n : {1, 5, 9})
      for (int64_t chunk : {7, 600}) {
        SCOPED_TRACE(std::string(paged ? "paged " : "") + std::to_string(n) + " tokens, chunk " +
                     std::to_string(chunk));
        AttentionDims dims{8, 2, 128};
        dims.window = chunk;
        dims.chunked = true;
        EXPECT_LE(long_cache_attention_error(cpu_, *device_, *buf_, TensorType::kF16, dims, paged,
                                             n, 31, 33),
                  1e-4);
      }
}

// A sliding-window layer's ring (runtime/model/kv_ring.h; the CPU's ring gives a whole
// cache's results, kv_ring_test): kv_append wrapping around the ring inside one pass (the
// kernel) and not (F32's copy), then the windowed attention reading across the wrap,
// against the CPU, for every cache type.
TEST_F(CudaConformance, ARingCacheWrapsUnderTheWindow) {
  for (TensorType type : {TensorType::kF32, TensorType::kF16, TensorType::kQ8_0})
    for (const auto& [pos0, n] : {std::pair<int64_t, int64_t>{60, 9}, {64, 1}, {70, 3}}) {
      SCOPED_TRACE(std::string(tensor_type_name(type)) + " " + std::to_string(n) + " tokens at " +
                   std::to_string(pos0));
      AttentionDims dims{8, 2, 64};
      dims.window = 20;
      const int64_t ring = 32, kv_dim = dims.n_head_kv * dims.head_dim; // 32 >= 20 + 9 - 1
      const size_t row = *tensor_bytes(type, kv_dim);
      TestKv kv = make_kv(*buf_, type, ring, kv_dim, 41, {});
      for (KvView* v : {&kv.cpu, &kv.gpu}) {
        v->ring = ring;
        v->n_ctx = 128; // positions; the rows are the ring's
      }
      const auto k_new = random_floats(n * kv_dim, 43), v_new = random_floats(n * kv_dim, 44);
      const auto q = random_floats(n * dims.n_head * dims.head_dim, 45, -3.0f, 3.0f);
      std::vector<float> want(q.size());
      cpu_.kv_append(kv.cpu, k_new.data(), v_new.data(), pos0, n);
      cpu_.attention(q.data(), kv.cpu, dims, pos0, n, want.data());
      float* gout = buf_->zeros(q.size());
      gpu().kv_append(kv.gpu, buf_->upload(k_new), buf_->upload(v_new), pos0, n);
      gpu().attention(buf_->upload(q), kv.gpu, dims, pos0, n, gout);
      sync();
      std::vector<float> cpu_rows(ring * kv_dim), gpu_rows(ring * kv_dim);
      const std::vector<uint8_t> v_back = buf_->download(kv.gpu.v, kv.v.size());
      for (int64_t r = 0; r < ring; ++r) {
        dequantize_row(type, kv.v.data() + r * row, cpu_rows.data() + r * kv_dim, kv_dim);
        dequantize_row(type, v_back.data() + r * row, gpu_rows.data() + r * kv_dim, kv_dim);
      }
      EXPECT_LE(relative_error(gpu_rows, cpu_rows), type == TensorType::kQ8_0 ? 1e-2 : 0.0)
          << "kv_append V rows around the ring";
      EXPECT_LE(relative_error(buf_->download(gout, want.size()), want),
                type == TensorType::kQ8_0 ? 1e-3 : 1e-4);
    }
}

// gpt-oss's sinks: each head's logit joins its softmax, on the whole-pass path (9 tokens)
// and the split decode path (the sink counted once across chunks), with and without a
// window (one that leaves the earliest chunks empty).
TEST_F(CudaConformance, AttentionWithSinks) {
  for (bool paged : {false, true})
    for (int64_t n : {1, 5, 9})
      for (int64_t window : {0, 128}) {
        SCOPED_TRACE(std::string(paged ? "paged " : "") + std::to_string(n) + " tokens, window " +
                     std::to_string(window));
        AttentionDims dims{8, 2, 64};
        dims.window = window;
        const auto sinks = random_floats(static_cast<size_t>(dims.n_head), 35, -2.0f, 4.0f);
        EXPECT_LE(long_cache_attention_error(cpu_, *device_, *buf_, TensorType::kF16, dims, paged,
                                             n, 36, 37, sinks),
                  1e-4);
      }
}

TEST_F(CudaConformance, ClampedSwiglu) {
  const int64_t n = 1001;
  const auto g = random_floats(n, 38, -12.0f, 12.0f), u = random_floats(n, 39, -12.0f, 12.0f);
  std::vector<float> want(n);
  cpu_.swiglu_oai(g.data(), u.data(), want.data(), n);
  float* gout = buf_->zeros(n);
  gpu().swiglu_oai(buf_->upload(g), buf_->upload(u), gout, n);
  sync();
  EXPECT_LE(relative_error(buf_->download(gout, n), want), 1e-5);
}

TEST_F(CudaConformance, GeluMulScaleAndSoftcap) {
  const int64_t n = 1001;
  const auto g = random_floats(n, 17, -6.0f, 6.0f), u = random_floats(n, 18);
  std::vector<float> want(n), x = random_floats(n, 19, -40.0f, 40.0f);
  cpu_.gelu_mul(g.data(), u.data(), want.data(), n);
  float* gout = buf_->zeros(n);
  float* gx = buf_->upload(x);
  gpu().gelu_mul(buf_->upload(g), buf_->upload(u), gout, n);
  gpu().scale(gx, 1.5f, n);
  gpu().softcap(gx, 30.0f, n);
  cpu_.scale(x.data(), 1.5f, n);
  cpu_.softcap(x.data(), 30.0f, n);
  sync();
  EXPECT_LE(relative_error(buf_->download(gout, n), want), 1e-5);
  EXPECT_LE(relative_error(buf_->download(gx, n), x), 1e-5);
}

// BERT's exact (erf) GELU in place, over the range where erf bends.
TEST_F(CudaConformance, GeluErf) {
  const int64_t n = 1001;
  std::vector<float> x = random_floats(n, 34, -8.0f, 8.0f);
  float* gx = buf_->upload(x);
  gpu().gelu(gx, n);
  cpu_.gelu(x.data(), n);
  sync();
  EXPECT_LE(relative_error(buf_->download(gx, n), x), 1e-5);
}

// An encoder's attention (AttentionDims::causal false): every query of the call sees the
// whole text, later positions too, in one pass of a prompt; F32 and F16 caches.
// An encoder's attention: the whole text, or (gemma-embedding) a window centred on each
// query, 8 positions either side of it here.
TEST_F(CudaConformance, AttentionBothWays) {
  for (const auto& [type, window] :
       {std::pair{TensorType::kF32, int64_t{0}}, std::pair{TensorType::kF16, int64_t{0}},
        std::pair{TensorType::kF32, int64_t{17}}, std::pair{TensorType::kF16, int64_t{16}}}) {
    SCOPED_TRACE(std::string(tensor_type_name(type)) + " window " + std::to_string(window));
    AttentionDims dims{4, 4, 64};
    dims.causal = false;
    dims.window = window;
    dims.symmetric_window = true;
    const int64_t kv_dim = dims.n_head_kv * dims.head_dim, n = 45;
    TestKv kv = make_kv(*buf_, type, 64, kv_dim, 35, {});
    const auto k = random_floats(n * kv_dim, 37), v = random_floats(n * kv_dim, 38);
    const auto q = random_floats(n * dims.n_head * dims.head_dim, 39, -3.0f, 3.0f);
    std::vector<float> want(q.size());
    cpu_.kv_append(kv.cpu, k.data(), v.data(), 0, n);
    cpu_.attention(q.data(), kv.cpu, dims, 0, n, want.data());
    float* gout = buf_->zeros(q.size());
    gpu().kv_append(kv.gpu, buf_->upload(k), buf_->upload(v), 0, n);
    gpu().attention(buf_->upload(q), kv.gpu, dims, 0, n, gout);
    sync();
    EXPECT_LE(relative_error(buf_->download(gout, want.size()), want), 1e-4);
  }
}

TEST_F(CudaConformance, SiluMulAndAdd) {
  const int64_t n = 1001;
  const auto g = random_floats(n, 14, -6.0f, 6.0f), u = random_floats(n, 15);
  std::vector<float> want(n), y = random_floats(n, 16);
  cpu_.silu_mul(g.data(), u.data(), want.data(), n);
  float* gout = buf_->zeros(n);
  float* gy = buf_->upload(y);
  gpu().silu_mul(buf_->upload(g), buf_->upload(u), gout, n);
  gpu().add(gy, gout, n);
  cpu_.add(y.data(), want.data(), n);
  sync();
  EXPECT_LE(relative_error(buf_->download(gout, n), want), 1e-5);
  EXPECT_LE(relative_error(buf_->download(gy, n), y), 1e-5);
}

// The device reads every block layout with the host's arithmetic: the same floats.
TEST_F(CudaConformance, EmbedRowsEveryType) {
  const std::vector<TokenId> tokens = {3, 0, 40, 3};
  size_t n_types = 0;
  const TensorType* types = supported_tensor_types(&n_types);
  for (TensorType type : std::vector<TensorType>(types, types + n_types)) {
    const int64_t cols = tensor_type_traits(type).block_values == 256 ? 512 : 96;
    const Weights table = make_weights(*buf_, type, 41, cols, 17);
    std::vector<float> want(tokens.size() * cols);
    cpu_.embed_rows(table.cpu, tokens, want.data());
    float* gout = buf_->zeros(want.size());
    gpu().embed_rows(table.gpu, std::vector<TokenId>(tokens),
                     gout); // a temporary: copied at the call
    sync();
    EXPECT_EQ(buf_->download(gout, want.size()), want) << tensor_type_name(type);
  }
}

} // namespace
} // namespace pshard
