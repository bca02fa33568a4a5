// The CPU half of the suite: matmul per type x size x threads x tokens, attention per
// context length, read and copy bandwidth — then the same under a concurrent copy load,
// and the copy bandwidth under a concurrent matmul.
#include "runtime/kernels/matmul.h"
#include "runtime/profile/profile_report.h"
#include "tools/pshard-profile/background_load.h"
#include "tools/pshard-profile/cpu_attention.h"
#include "tools/pshard-profile/cpu_matmul.h"
#include "tools/pshard-profile/cpu_memory.h"
#include "tools/pshard-profile/progress.h"
#include "tools/pshard-profile/suite.h"
#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <map>
#include <memory>

namespace pshard::profiling {
namespace {

// Runs the CPU measurements with a copy load on, keeping a duration-weighted average of
// the rate the load achieved.
struct LoadMeter {
  CopyLoad& load;
  double bytes = 0;
  double seconds = 0;

  template <typename Fn> Status under_load(Fn&& fn) {
    PSHARD_RETURN_IF_ERROR(load.start());
    const double t0 = now_seconds();
    fn();
    const double elapsed = now_seconds() - t0;
    PSHARD_ASSIGN_OR_RETURN(double rate, load.stop());
    bytes += rate * elapsed;
    seconds += elapsed;
    return Status::ok_status();
  }
  double rate() const { return seconds > 0 ? bytes / seconds : 0; }
};

std::string matmul_label(TensorType type, uint64_t bytes, int64_t n, int threads, bool loaded) {
  return std::string("cpu matmul ") + tensor_type_name(type) + " " + format_bytes(double(bytes)) +
         " n=" + std::to_string(n) + " thr=" + std::to_string(threads) +
         (loaded ? " (loaded)" : "");
}

// The cells of one type: sizes x threads x tokens idle; on the largest size also the
// other row lengths and the load tokens under load.
struct TypeCells {
  std::vector<uint64_t> sizes;
  std::vector<int64_t> tokens, load_tokens;
  bool other_cols = true; // the grid's extra row lengths
};

Status measure_type(TensorType type, const TypeCells& cells, const SuiteGrid& grid,
                    std::map<int, std::unique_ptr<ThreadPool>>& pools, LoadMeter& meter,
                    Progress& progress, double unit_s, CpuTables& out) {
  for (uint64_t bytes : cells.sizes) {
    PSHARD_ASSIGN_OR_RETURN(MatmulWeights w, MatmulWeights::make(type, bytes));
    for (int threads : grid.threads) {
      MatmulRate rate;
      for (int64_t n : cells.tokens) {
        progress.step(matmul_label(type, bytes, n, threads, false));
        out.cpu->matmul.push_back(std::make_unique<fb::MatmulPointT>(
            time_cpu_matmul(w, n, *pools[threads], kMatmulUnits * unit_s, rate)));
        progress.advance(kMatmulUnits);
      }
    }
    // Under load and other row lengths only on the largest bucket: that is where
    // weights stream from DRAM, as in a pass; the reader scales the other buckets by
    // their ratios.
    if (bytes != grid.matrix_bytes.back())
      continue;
    for (int64_t cols : cells.other_cols ? grid.extra_cols : std::vector<int64_t>{}) {
      PSHARD_ASSIGN_OR_RETURN(MatmulWeights narrow, MatmulWeights::make(type, bytes, cols));
      const int threads = grid.threads.back();
      MatmulRate rate;
      for (int64_t n : grid.extra_tokens) {
        progress.step(matmul_label(type, bytes, n, threads, false) + " cols=" +
                      std::to_string(cols));
        out.cpu->matmul.push_back(std::make_unique<fb::MatmulPointT>(
            time_cpu_matmul(narrow, n, *pools[threads], kMatmulUnits * unit_s, rate)));
        progress.advance(kMatmulUnits);
      }
    }
    PSHARD_RETURN_IF_ERROR(meter.under_load([&] {
      for (int threads : grid.threads) {
        MatmulRate rate;
        for (int64_t n : cells.load_tokens) {
          progress.step(matmul_label(type, bytes, n, threads, true));
          out.under_load->cpu_matmul.push_back(std::make_unique<fb::MatmulPointT>(
              time_cpu_matmul(w, n, *pools[threads], kMatmulUnits * unit_s, rate)));
          progress.advance(kMatmulUnits);
        }
      }
    }));
  }
  return Status::ok_status();
}

Status measure_matmul(const SuiteGrid& grid, std::map<int, std::unique_ptr<ThreadPool>>& pools,
                      LoadMeter& meter, Progress& progress, double unit_s, CpuTables& out) {
  const TypeCells full{grid.matrix_bytes, grid.tokens, grid.load_tokens};
  const TypeCells sparse{{grid.matrix_bytes.back()},
                         grid.tokens.size() > 1
                             ? std::vector<int64_t>{grid.tokens.front(), grid.tokens.back()}
                             : grid.tokens,
                         {grid.load_tokens.front()},
                         /*other_cols=*/false};
  for (TensorType type : grid.types)
    PSHARD_RETURN_IF_ERROR(measure_type(type, full, grid, pools, meter, progress, unit_s, out));
  for (TensorType type : grid.sparse_types)
    PSHARD_RETURN_IF_ERROR(measure_type(type, sparse, grid, pools, meter, progress, unit_s, out));
  return Status::ok_status();
}

void measure_attention(const SuiteGrid& grid, std::map<int, std::unique_ptr<ThreadPool>>& pools,
                       KvCache& kv, Progress& progress, double unit_s,
                       std::vector<std::unique_ptr<fb::AttentionPointT>>& out, bool loaded) {
  for (int threads : grid.threads)
    for (int64_t ctx : grid.ctx_lens)
      for (int64_t n : grid.attention_tokens) {
        AttentionShape shape;
        shape.ctx_len = ctx;
        shape.n_tokens = n;
        progress.step("cpu attention ctx=" + std::to_string(ctx) + " n=" + std::to_string(n) +
                      " thr=" + std::to_string(threads) + (loaded ? " (loaded)" : ""));
        out.push_back(std::make_unique<fb::AttentionPointT>(
            time_cpu_attention(kv, shape, *pools[threads], kAttentionUnits * unit_s)));
        progress.advance(kAttentionUnits);
      }
}

void measure_read(const SuiteGrid& grid, std::map<int, std::unique_ptr<ThreadPool>>& pools,
                  const HostBuffer& buffer, Progress& progress, double unit_s,
                  std::vector<std::unique_ptr<fb::BandwidthPointT>>& out, bool loaded) {
  for (int threads : grid.threads) {
    progress.step("cpu read bandwidth thr=" + std::to_string(threads) +
                  (loaded ? " (loaded)" : ""));
    out.push_back(std::make_unique<fb::BandwidthPointT>(
        time_read_bandwidth(buffer, *pools[threads], kReadUnits * unit_s)));
    progress.advance(kReadUnits);
  }
}

} // namespace

Result<CpuTables> measure_cpu(const SuiteGrid& grid, CopyLoad& copy_load, Progress& progress,
                              double unit_s) {
  CpuTables out;
  out.cpu = std::make_unique<fb::CpuMeasurementsT>();
  out.under_load = std::make_unique<fb::UnderLoadT>();
  out.cpu->source = fb::Provenance::Measured;
  out.under_load->source = fb::Provenance::Measured;
  out.cpu->matmul_op = kCpuMatmulOp;
  out.cpu->attention_op = kCpuAttentionOp;
  for (int t : grid.threads)
    out.cpu->thread_counts.push_back(static_cast<uint32_t>(t));
  out.under_load->load_description = copy_load.description();

  std::map<int, std::unique_ptr<ThreadPool>> pools;
  for (int t : grid.threads)
    pools[t] = std::make_unique<ThreadPool>(t);
  LoadMeter meter{copy_load};

  PSHARD_RETURN_IF_ERROR(measure_matmul(grid, pools, meter, progress, unit_s, out));
  {
    AttentionShape shape;
    KvCache kv(grid.ctx_lens.back() + grid.attention_tokens.back(), shape);
    if (!kv.k.ok() || !kv.v.ok())
      return Status(StatusCode::kOutOfMemory, "cannot allocate the attention KV cache");
    measure_attention(grid, pools, kv, progress, unit_s, out.cpu->attention, false);
    PSHARD_RETURN_IF_ERROR(meter.under_load([&] {
      measure_attention(grid, pools, kv, progress, unit_s, out.under_load->cpu_attention, true);
    }));
  }
  {
    HostBuffer buffer(grid.read_buffer_bytes);
    if (!buffer.ok())
      return Status(StatusCode::kOutOfMemory, "cannot allocate the read-bandwidth buffer");
    measure_read(grid, pools, buffer, progress, unit_s, out.cpu->read_bandwidth, false);
    PSHARD_RETURN_IF_ERROR(meter.under_load([&] {
      measure_read(grid, pools, buffer, progress, unit_s, out.under_load->cpu_read_bandwidth, true);
    }));
  }
  out.under_load->load_bytes_per_s = meter.rate();

  // Copy bandwidth idle, then while every thread computes a memory-bound matmul (decode
  // on the largest q4_0 bucket streams weights like the executor's CPU sub-layers do).
  HostBuffer src(grid.copy_buffer_bytes), dst(grid.copy_buffer_bytes);
  if (!src.ok() || !dst.ok())
    return Status(StatusCode::kOutOfMemory, "cannot allocate the copy buffers");
  constexpr uint64_t kCopyChunk = 8u << 20;
  progress.step("host memcpy bandwidth");
  out.cpu->copy_bandwidth.push_back(std::make_unique<fb::BandwidthPointT>(
      time_copy_bandwidth(src, dst, kCopyChunk, kCopyUnits * unit_s)));
  progress.advance(kCopyUnits);

  const int busy_threads = grid.threads.back();
  PSHARD_ASSIGN_OR_RETURN(MatmulWeights w,
                          MatmulWeights::make(TensorType::kQ4_0, grid.matrix_bytes.back()));
  std::vector<float> x(static_cast<size_t>(w.cols)), y(static_cast<size_t>(w.rows));
  ThreadPool& pool = *pools[busy_threads];
  ComputeLoad compute([&] {
    MatrixView view{w.type, w.data.data(), w.rows, w.cols, w.row_bytes};
    matmul(view, x.data(), 1, y.data(), pool);
  });
  out.under_load->compute_description = "pshard::matmul q4_0 " +
                                        format_bytes(double(w.bucket_bytes)) + ", n_tokens=1, " +
                                        std::to_string(busy_threads) + " threads, in a loop";
  progress.step("host memcpy bandwidth (CPU busy)");
  compute.start();
  out.under_load->copy_bandwidth.push_back(std::make_unique<fb::BandwidthPointT>(
      time_copy_bandwidth(src, dst, kCopyChunk, kCopyUnits * unit_s)));
  compute.stop();
  progress.advance(kCopyUnits);
  return out;
}

} // namespace pshard::profiling
