// Both processors computing at once (profile schema 1.4). A split MoE block runs some of
// its experts on the CPU while the device runs the others, and the two slow each other
// where they share something: the emulated GPU is a thread of the same CPU (its cores on
// a small machine, always its memory bandwidth), and a real GPU's host thread takes a
// core. Measured both ways on the largest bucket of each type at the load tiers, the
// other side running the same kind of matmul in a loop meanwhile:
//   device_matmul_beside_cpu  the device's cells while the CPU's threads run one;
//   cpu_matmul_beside_device  the CPU's cells, at every thread count, while the device
//                             runs them back to back.
// The lookup turns them into ratios over the idle cells (profile_lookup.h, kBesideCompute).
#include "runtime/kernels/matmul.h"
#include "tools/pshard-profile/background_load.h"
#include "tools/pshard-profile/cpu_matmul.h"
#include "tools/pshard-profile/progress.h"
#include "tools/pshard-profile/suite.h"

#include <atomic>
#include <future>
#include <map>
#include <thread>

namespace pshard::profiling {
namespace {

std::string label(const char* side, TensorType type, int64_t n, int threads) {
  return std::string(side) + " matmul " + tensor_type_name(type) + " n=" + std::to_string(n) +
         (threads > 0 ? " thr=" + std::to_string(threads) : "") + " (both computing)";
}

// The device running `type` matmuls of `n` tokens back to back on a thread of its own
// until stopped. start() returns once the first has finished (so what is timed next runs
// beside a device already busy), with its failure if it failed; a later failure is kept
// for stop().
class DeviceComputeLoad {
public:
  DeviceComputeLoad(DeviceMeasurer& device, TensorType type, int64_t n, int64_t rows, int64_t cols)
      : device_(device), type_(type), n_(n), rows_(rows), cols_(cols) {}
  ~DeviceComputeLoad() { (void)stop(); }
  Status start() {
    std::promise<Status> first;
    std::future<Status> started = first.get_future();
    thread_ = std::thread([this, &first] {
      bool told = false;
      while (!stop_.load(std::memory_order_relaxed)) {
        Result<double> r = device_.time_matmul(type_, n_, rows_, cols_);
        if (!told) {
          first.set_value(r.status());
          told = true;
        }
        if (!r.ok()) {
          failure_ = r.status();
          return;
        }
      }
    });
    return started.get();
  }
  Status stop() {
    stop_ = true;
    if (thread_.joinable())
      thread_.join();
    return failure_;
  }

private:
  DeviceMeasurer& device_;
  TensorType type_;
  int64_t n_, rows_, cols_;
  std::atomic<bool> stop_{false};
  Status failure_ = Status::ok_status();
  std::thread thread_;
};

Status measure_both(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                    double unit_s, fb::UnderLoadT& out) {
  const uint64_t bytes = grid.matrix_bytes.back();
  std::map<int, std::unique_ptr<ThreadPool>> pools;
  for (int threads : grid.threads)
    pools[threads] = std::make_unique<ThreadPool>(threads);
  for (TensorType type : grid.types) {
    PSHARD_ASSIGN_OR_RETURN(MatmulWeights w, MatmulWeights::make(type, bytes));
    const MatrixView view{w.type, w.data.data(), w.rows, w.cols, w.row_bytes};
    for (int64_t n : grid.load_tokens) {
      std::vector<float> x(static_cast<size_t>(w.cols * n)), y(static_cast<size_t>(w.rows * n));
      { // the device, beside the CPU's most threads
        ThreadPool& pool = *pools[grid.threads.back()];
        ComputeLoad cpu([&] { matmul(view, x.data(), n, y.data(), pool); });
        progress.step(label("gpu", type, n, 0));
        cpu.start();
        Result<fb::MatmulPointT> p =
            time_device_matmul(device, type, bytes, kMatmulCols, n, kMatmulUnits * unit_s);
        cpu.stop();
        PSHARD_RETURN_IF_ERROR(p.status());
        out.device_matmul_beside_cpu.push_back(std::make_unique<fb::MatmulPointT>(std::move(*p)));
        progress.advance(kMatmulUnits);
      }
      DeviceComputeLoad busy(device, type, n, w.rows, w.cols); // the CPU, beside the device
      PSHARD_RETURN_IF_ERROR(busy.start());
      for (int threads : grid.threads) {
        progress.step(label("cpu", type, n, threads));
        MatmulRate rate;
        out.cpu_matmul_beside_device.push_back(std::make_unique<fb::MatmulPointT>(
            time_cpu_matmul(w, n, *pools[threads], kMatmulUnits * unit_s, rate)));
        progress.advance(kMatmulUnits);
      }
      PSHARD_RETURN_IF_ERROR(busy.stop());
    }
  }
  out.beside_description = "the other side running the same matmul (" +
                           std::string(device.matmul_op()) + " / pshard::matmul) in a loop";
  return Status::ok_status();
}

} // namespace

double beside_units(const SuiteGrid& g) {
  return kMatmulUnits * double(g.types.size() * g.load_tokens.size() * (1 + g.threads.size()));
}

// Optional figures (absent, neither side slows the other): a device that cannot be driven
// from a second thread, or fails meanwhile, costs the profile these cells only, and the
// profile says why they are missing.
Status measure_beside(const SuiteGrid& grid, DeviceMeasurer& device, Progress& progress,
                      double unit_s, fb::ProfileT& profile) {
  fb::UnderLoadT& out = *profile.under_load;
  const Status st = measure_both(grid, device, progress, unit_s, out);
  if (!st.ok()) {
    out.cpu_matmul_beside_device.clear();
    out.device_matmul_beside_cpu.clear();
    out.beside_description = "not measured: " + st.to_string();
  }
  return Status::ok_status();
}

} // namespace pshard::profiling
