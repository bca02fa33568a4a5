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

bool Device::begin_graph(uint64_t, int64_t) { return false; }

bool Device::end_graph(bool) { return false; }

Result<int64_t> Device::completion_time_ns(const DeviceEvent&) {
  return unsupported("the " + info().backend + " device does not time its events");
}

} // namespace pshard
