#include "runtime/backends/cuda/cuda_moe_staging.h"

#include "runtime/backends/cuda/cuda_status.h"

#include <cstring>

namespace pshard::cuda {

Result<std::unique_ptr<MoeHostStaging>> MoeHostStaging::create(int64_t table_capacity,
                                                               int64_t route_capacity) {
  std::unique_ptr<MoeHostStaging> s(new MoeHostStaging());
  s->table_capacity_ = table_capacity;
  s->route_capacity_ = route_capacity;
  void* p = nullptr;
  PSHARD_CUDA_RETURN_IF_ERROR(
      cudaHostAlloc(&p, static_cast<size_t>(table_capacity) * sizeof(void*), cudaHostAllocDefault));
  s->tables_ = static_cast<const uint8_t**>(p);
  PSHARD_CUDA_RETURN_IF_ERROR(
      cudaHostAlloc(&p, static_cast<size_t>(2 * route_capacity) * 8, cudaHostAllocDefault));
  s->routes_ = static_cast<uint8_t*>(p);
  s->table_done_.assign(static_cast<size_t>(table_capacity), nullptr);
  return s;
}

MoeHostStaging::~MoeHostStaging() {
  for (cudaEvent_t e : table_done_)
    if (e)
      (void)cudaEventDestroy(e);
  for (cudaEvent_t e : route_done_)
    if (e)
      (void)cudaEventDestroy(e);
  if (tables_)
    (void)cudaFreeHost(const_cast<uint8_t**>(tables_));
  if (routes_)
    (void)cudaFreeHost(routes_);
}

Status MoeHostStaging::wait(cudaEvent_t& e) {
  if (e)
    PSHARD_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(e));
  return Status::ok_status();
}

Status MoeHostStaging::recorded(cudaEvent_t& e, cudaStream_t s) {
  if (!e)
    PSHARD_CUDA_RETURN_IF_ERROR(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaEventRecord(e, s));
  return Status::ok_status();
}

Status MoeHostStaging::upload_table(int64_t slot, std::span<const uint8_t* const> table,
                                    const uint8_t** device_slot, cudaStream_t s, bool capturing) {
  const size_t at = static_cast<size_t>(slot) * table.size();
  if (at + table.size() > static_cast<size_t>(table_capacity_))
    return internal_error("MoE expert table slot " + std::to_string(slot) + " past the staging");
  // Under capture nothing runs yet and the cache hands out only slots no graph uses;
  // events recorded in a capture would become graph nodes, so none is touched.
  // Events sit at slot starts; a new table size moves the slot boundaries, so every
  // event inside this slot's range is waited on, not only its own.
  cudaEvent_t& done = table_done_[at];
  if (!capturing)
    for (size_t i = at; i < at + table.size(); ++i)
      PSHARD_RETURN_IF_ERROR(wait(table_done_[i]));
  std::memcpy(tables_ + at, table.data(), table.size() * sizeof(void*));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(
      device_slot, tables_ + at, table.size() * sizeof(void*), cudaMemcpyHostToDevice, s));
  if (!capturing)
    PSHARD_RETURN_IF_ERROR(recorded(done, s));
  return Status::ok_status();
}

Status MoeHostStaging::upload_routes(const int32_t* experts, const float* weights, int64_t n,
                                     int32_t* device_experts, float* device_weights,
                                     cudaStream_t s) {
  if (n > route_capacity_)
    return internal_error("MoE host routes: " + std::to_string(n) + " routes, staging holds " +
                          std::to_string(route_capacity_));
  const int half = next_half_;
  next_half_ ^= 1;
  PSHARD_RETURN_IF_ERROR(wait(route_done_[half]));
  uint8_t* base = routes_ + static_cast<size_t>(half * route_capacity_) * 8;
  auto* e = reinterpret_cast<int32_t*>(base);
  auto* w = reinterpret_cast<float*>(base + static_cast<size_t>(route_capacity_) * 4);
  const size_t bytes = static_cast<size_t>(n) * 4;
  std::memcpy(e, experts, bytes);
  std::memcpy(w, weights, bytes);
  PSHARD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_experts, e, bytes, cudaMemcpyHostToDevice, s));
  PSHARD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device_weights, w, bytes, cudaMemcpyHostToDevice, s));
  return recorded(route_done_[half], s);
}

} // namespace pshard::cuda
