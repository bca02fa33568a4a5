#include "runtime/backends/cuda/cuda_graphs.h"

#include <cstdlib>
#include <string>

namespace pshard::cuda {

bool graphs_enabled_from_env() {
  const char* v = std::getenv("PSHARD_CUDA_GRAPHS");
  if (!v)
    return true;
  const std::string s(v);
  return !(s == "0" || s == "off" || s == "false");
}

PassGraphs::Exec* PassGraphs::find(uint64_t key) {
  for (Exec& e : execs_)
    if (e.key == key)
      return &e;
  return nullptr;
}

bool PassGraphs::begin(cudaStream_t stream, uint64_t key) {
  if (!enabled_ || capturing_)
    return false;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    // Not a failure of the pass: it runs op by op. Clear the error so the next kernel
    // launch (which reports cudaGetLastError) does not take it for its own, and stop
    // trying: a stream that cannot capture once will not later.
    (void)cudaGetLastError();
    enabled_ = false;
    return false;
  }
  capturing_ = true;
  key_ = key;
  return true;
}

cudaGraph_t PassGraphs::end_capture(cudaStream_t stream, StickyError& sticky) {
  if (!capturing_)
    return nullptr;
  capturing_ = false;
  cudaGraph_t graph = nullptr;
  const cudaError_t e = cudaStreamEndCapture(stream, &graph);
  if (e != cudaSuccess || graph == nullptr) {
    sticky.note(cuda_status(e != cudaSuccess ? e : cudaErrorStreamCaptureInvalidated,
                            "cudaStreamEndCapture (a pass recorded as a CUDA graph; "
                            "PSHARD_CUDA_GRAPHS=0 runs passes without graphs)",
                            __FILE__, __LINE__));
    if (graph != nullptr)
      (void)cudaGraphDestroy(graph);
    return nullptr;
  }
  return graph;
}

bool PassGraphs::launch(cudaStream_t stream, cudaGraph_t graph, StickyError& sticky) {
  if (graph == nullptr)
    return false;
  Exec* at = find(key_);
  if (at) {
    cudaGraphExecUpdateResultInfo info{};
    if (cudaGraphExecUpdate(at->exec, graph, &info) == cudaSuccess) {
      ++updates_;
    } else {
      // Another topology under this key: the update's error is expected, not the next
      // launch's; instantiate below.
      (void)cudaGetLastError();
      (void)cudaGraphExecDestroy(at->exec);
      at->exec = nullptr;
    }
  } else {
    if (execs_.size() >= kMaxExecs) {
      (void)cudaGraphExecDestroy(execs_.front().exec);
      execs_.erase(execs_.begin());
    }
    execs_.push_back({key_, nullptr});
    at = &execs_.back();
  }
  if (at->exec == nullptr) {
    const cudaError_t e = cudaGraphInstantiate(&at->exec, graph, 0);
    if (e != cudaSuccess) {
      sticky.note(cuda_status(e,
                              "cudaGraphInstantiate (PSHARD_CUDA_GRAPHS=0 runs passes "
                              "without graphs)",
                              __FILE__, __LINE__));
      at->exec = nullptr;
      execs_.erase(execs_.begin() + (at - execs_.data()));
      (void)cudaGraphDestroy(graph);
      return false;
    }
    ++instantiations_;
  }
  (void)cudaGraphDestroy(graph); // the executable keeps what it needs
  const cudaError_t e = cudaGraphLaunch(at->exec, stream);
  if (e != cudaSuccess) {
    sticky.note(cuda_status(e, "cudaGraphLaunch", __FILE__, __LINE__));
    return false;
  }
  ++launches_;
  return true;
}

void PassGraphs::clear() {
  for (const Exec& e : execs_)
    if (e.exec != nullptr)
      (void)cudaGraphExecDestroy(e.exec);
  execs_.clear();
}

} // namespace pshard::cuda
