#include "runtime/device/device.h"

namespace pshard {

const char* queue_name(Queue q) {
  switch (q) {
  case Queue::kCompute:
    return "compute";
  case Queue::kCopy:
    return "copy";
  case Queue::kTransfer:
    return "transfer";
  }
  return "?";
}

Status Device::resize_arena(uint64_t) {
  return unsupported("the " + info().backend + " device cannot resize its arena in place");
}

Status Device::register_host_memory(const void*, uint64_t) { return Status::ok_status(); }

void Device::unregister_host_memory(const void*) {}

Result<uint8_t*> Device::map_host_memory(void*, uint64_t) {
  return unsupported("the " + info().backend + " device cannot map host memory");
}

void Device::set_workspace(uint8_t*, uint64_t) {}

void Device::run_expert_groups(const MoeDispatch& moe, std::span<const ExpertRowGroup> groups,
                               const float* host_in, float* host_out) {
  const int64_t d = moe.n_embd;
  int64_t row = 0;
  for (const ExpertRowGroup& g : groups) {
    const uint64_t bytes = static_cast<uint64_t>(g.rows * d) * sizeof(float);
    copy_to_device(Queue::kCompute, moe.expert_in, host_in + row * d, bytes);
    moe_expert_ffn(compute(), moe, g.expert, g.rows);
    copy_to_host(Queue::kCompute, host_out + row * d, moe.expert_out, bytes);
    row += g.rows;
  }
}

bool Device::begin_graph(uint64_t, int64_t) { return false; }

bool Device::end_graph(bool) { return false; }

Result<int64_t> Device::completion_time_ns(const DeviceEvent&) {
  return unsupported("the " + info().backend + " device does not time its events");
}

} // namespace pshard
