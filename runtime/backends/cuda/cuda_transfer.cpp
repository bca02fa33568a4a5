#include "runtime/backends/cuda/cuda_transfer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace pshard::cuda {

TransferOptions transfer_options_from_env() {
  TransferOptions o;
  if (const char* v = std::getenv("PSHARD_CUDA_TRANSFER"))
    o.mode = std::string(v) == "staging" ? TransferMode::kStaging : TransferMode::kRegister;
  return o;
}

const char* transfer_mode_name(TransferMode m) {
  return m == TransferMode::kRegister ? "register" : "staging";
}

TransferEngine::~TransferEngine() {
  for (const Range& r : ranges_)
    if (r.registered)
      (void)cudaHostUnregister(const_cast<uint8_t*>(r.begin));
  for (const Mapping& m : mapped_)
    (void)cudaHostUnregister(m.host);
  for (cudaEvent_t e : ring_done_)
    (void)cudaEventDestroy(e);
  for (uint8_t* p : ring_)
    (void)cudaFreeHost(p);
  for (Bounce* b : bounce_all_) {
    (void)cudaFreeHost(b->pinned);
    delete b;
  }
}

Status TransferEngine::register_source(const void* host, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  Range r{static_cast<const uint8_t*>(host), bytes, false};
  if (options_.mode == TransferMode::kRegister) {
    // ReadOnly lets the driver register a read-only file mapping (the model's mmap).
    const cudaError_t e = cudaHostRegister(const_cast<void*>(host), bytes,
                                           cudaHostRegisterReadOnly | cudaHostRegisterPortable);
    if (e == cudaSuccess)
      r.registered = true;
    else
      (void)cudaGetLastError(); // refused (e.g. no ReadOnly support): stage this range
  }
  if (!r.registered)
    PSHARD_RETURN_IF_ERROR(ensure_ring());
  ranges_.push_back(r);
  return Status::ok_status();
}

void TransferEngine::unregister_source(const void* host) {
  std::lock_guard<std::mutex> lock(mu_);
  auto m = std::find_if(mapped_.begin(), mapped_.end(),
                        [&](const Mapping& x) { return x.host == host; });
  if (m != mapped_.end()) {
    (void)cudaHostUnregister(m->host);
    mapped_.erase(m);
    return;
  }
  auto it =
      std::find_if(ranges_.begin(), ranges_.end(), [&](const Range& r) { return r.begin == host; });
  if (it == ranges_.end())
    return;
  if (it->registered)
    (void)cudaHostUnregister(const_cast<uint8_t*>(it->begin));
  ranges_.erase(it);
}

Result<uint8_t*> TransferEngine::map(void* host, uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  auto* begin = static_cast<uint8_t*>(host);
  for (const Mapping& m : mapped_) {
    if (begin >= m.host && begin + bytes <= m.host + m.bytes)
      return m.device + (begin - m.host);
    if (begin < m.host + m.bytes && m.host < begin + bytes)
      return internal_error("CUDA map_host_memory: [" + std::to_string(bytes) +
                            " bytes] overlaps a mapped range of " + std::to_string(m.bytes) +
                            " bytes without lying inside it (a range is mapped whole, once)");
  }
  PSHARD_CUDA_RETURN_IF_ERROR(
      cudaHostRegister(host, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable));
  void* dev = nullptr;
  const Status s = PSHARD_CUDA_STATUS(cudaHostGetDevicePointer(&dev, host, 0));
  if (!s.ok()) {
    (void)cudaHostUnregister(host);
    return s;
  }
  mapped_.push_back({begin, bytes, static_cast<uint8_t*>(dev)});
  return static_cast<uint8_t*>(dev);
}

const TransferEngine::Range* TransferEngine::find(const void* p, uint64_t bytes) const {
  const auto* b = static_cast<const uint8_t*>(p);
  for (const Range& r : ranges_)
    if (b >= r.begin && b + bytes <= r.begin + r.bytes)
      return &r;
  return nullptr;
}

Status TransferEngine::ensure_ring() {
  if (!ring_.empty())
    return Status::ok_status();
  for (int i = 0; i < options_.chunks; ++i) {
    void* p = nullptr;
    PSHARD_CUDA_RETURN_IF_ERROR(cudaMallocHost(&p, options_.chunk_bytes));
    ring_.push_back(static_cast<uint8_t*>(p));
    cudaEvent_t e = nullptr;
    PSHARD_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    ring_done_.push_back(e);
  }
  return Status::ok_status();
}

void TransferEngine::staged_copy(cudaStream_t stream, uint8_t* dst, const uint8_t* src,
                                 uint64_t bytes, StickyError& sticky) {
  for (uint64_t off = 0; off < bytes; off += options_.chunk_bytes) {
    const uint64_t n = std::min<uint64_t>(options_.chunk_bytes, bytes - off);
    const size_t slot = next_;
    next_ = (next_ + 1) % ring_.size();
    // The buffer's previous DMA must be done before the host overwrites it.
    sticky.note(PSHARD_CUDA_STATUS(cudaEventSynchronize(ring_done_[slot])));
    std::memcpy(ring_[slot], src + off, n);
    sticky.note(PSHARD_CUDA_STATUS(
        cudaMemcpyAsync(dst + off, ring_[slot], n, cudaMemcpyHostToDevice, stream)));
    sticky.note(PSHARD_CUDA_STATUS(cudaEventRecord(ring_done_[slot], stream)));
  }
}

void TransferEngine::copy_to_device(cudaStream_t stream, void* dst, const void* src, uint64_t bytes,
                                    StickyError& sticky) {
  std::lock_guard<std::mutex> lock(mu_);
  const Range* r = find(src, bytes);
  if (r != nullptr && !r->registered) {
    staged_copy(stream, static_cast<uint8_t*>(dst), static_cast<const uint8_t*>(src), bytes,
                sticky);
    return;
  }
  // Registered memory DMAs directly; other (pageable) memory is staged by the driver,
  // which has copied the source by the time cudaMemcpyAsync returns.
  sticky.note(PSHARD_CUDA_STATUS(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream)));
}

} // namespace pshard::cuda

namespace pshard::cuda {

TransferEngine::Bounce* TransferEngine::take_bounce(uint64_t bytes, StickyError& sticky) {
  {
    std::lock_guard<std::mutex> lock(bounce_mu_);
    for (size_t i = 0; i < bounce_free_.size(); ++i)
      if (bounce_free_[i]->capacity >= bytes) {
        Bounce* b = bounce_free_[i];
        bounce_free_.erase(bounce_free_.begin() + static_cast<std::ptrdiff_t>(i));
        return b;
      }
  }
  // Round up so a buffer serves the next, slightly larger crossing too.
  uint64_t capacity = 64 << 10;
  while (capacity < bytes)
    capacity *= 2;
  void* p = nullptr;
  const Status s = PSHARD_CUDA_STATUS(cudaMallocHost(&p, capacity));
  if (!s.ok()) {
    sticky.note(s);
    return nullptr;
  }
  auto* b = new Bounce{this, static_cast<uint8_t*>(p), capacity, nullptr, 0};
  std::lock_guard<std::mutex> lock(bounce_mu_);
  bounce_all_.push_back(b);
  return b;
}

void CUDART_CB TransferEngine::finish_bounce(void* arg) {
  // Runs on the driver's thread, in stream order: no CUDA calls allowed here.
  auto* b = static_cast<Bounce*>(arg);
  std::memcpy(b->dst, b->pinned, b->bytes);
  std::lock_guard<std::mutex> lock(b->engine->bounce_mu_);
  b->engine->bounce_free_.push_back(b);
}

void TransferEngine::copy_to_host(cudaStream_t stream, void* dst, const void* src, uint64_t bytes,
                                  StickyError& sticky) {
  cudaPointerAttributes attr{};
  const bool pinned =
      cudaPointerGetAttributes(&attr, dst) == cudaSuccess && attr.type == cudaMemoryTypeHost;
  (void)cudaGetLastError();
  if (pinned) {
    sticky.note(
        PSHARD_CUDA_STATUS(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream)));
    return;
  }
  Bounce* b = take_bounce(bytes, sticky);
  if (b == nullptr)
    return;
  b->dst = dst;
  b->bytes = bytes;
  sticky.note(
      PSHARD_CUDA_STATUS(cudaMemcpyAsync(b->pinned, src, bytes, cudaMemcpyDeviceToHost, stream)));
  const Status queued = PSHARD_CUDA_STATUS(cudaLaunchHostFunc(stream, finish_bounce, b));
  if (!queued.ok()) { // finish_bounce will never return it: the device has failed anyway
    sticky.note(queued);
    std::lock_guard<std::mutex> lock(bounce_mu_);
    bounce_free_.push_back(b);
  }
}

} // namespace pshard::cuda
