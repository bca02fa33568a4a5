#include "runtime/backends/device_factory.h"

#include "runtime/backends/emu/emu_device.h"
#include "runtime/backends/plugin/cuda_plugin.h"

#include <algorithm>
#include <string>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

constexpr double kDefaultPcieBytesPerS = 16e9;

// Bytes a plan streams per pass over the copy time the estimator predicted for them,
// from the plan streaming the most whose sub-layers copy all their weights (MoE and
// embedding copies depend on routing and tokens).
double planned_link_bytes_per_s(const Schedule& s) {
  const sfb::Schedule& root = s.root();
  double best_bytes = 0, rate = 0;
  for (const sfb::BudgetPlans* b : *root.grid())
    for (const sfb::Plan* p : *b->plans()) {
      if (!p->stream_order() || p->stream_order()->size() == 0 || p->copy_busy_ms() <= 0)
        continue;
      double bytes = 0;
      bool whole = true;
      for (int32_t i : *p->stream_order()) {
        const uint64_t w =
            root.sublayers()->Get(static_cast<flatbuffers::uoffset_t>(i))->weight_bytes();
        whole = whole && w <= p->stream_slot_bytes();
        bytes += static_cast<double>(w);
      }
      if (whole && bytes > best_bytes) {
        best_bytes = bytes;
        rate = bytes / (p->copy_busy_ms() * 1e-3);
      }
    }
  return rate > 0 ? rate : kDefaultPcieBytesPerS;
}

Result<std::unique_ptr<Device>> make_emu(const DeviceOptions& o, const Schedule* schedule) {
  EmuOptions e;
  const uint64_t largest = schedule ? schedule->budgets().back() : 0;
  const uint64_t machine_vram =
      schedule && schedule->root().machine() ? schedule->root().machine()->vram_bytes() : 0;
  e.memory_bytes = o.emu_memory_bytes > 0
                       ? o.emu_memory_bytes
                       : std::max({machine_vram, largest, o.vram_budget, uint64_t{1} << 20});
  e.link.bytes_per_s = o.emu_pcie_gbps > 0 ? o.emu_pcie_gbps * 1e9
                       : schedule          ? planned_link_bytes_per_s(*schedule)
                                           : kDefaultPcieBytesPerS;
  e.link.latency_s = o.emu_pcie_latency_us * 1e-6;
  e.compute_threads = o.emu_compute_threads;
  PSHARD_ASSIGN_OR_RETURN(auto d, EmuDevice::create(e));
  return std::unique_ptr<Device>(std::move(d));
}

} // namespace

Result<DeviceBackend> parse_device_backend(std::string_view name) {
  if (name == "cpu")
    return DeviceBackend::kCpu;
  if (name == "emu")
    return DeviceBackend::kEmu;
  if (name == "cuda")
    return DeviceBackend::kCuda;
  return invalid_argument("unknown backend '" + std::string(name) +
                          "' (expected cpu, emu or cuda)");
}

const char* device_backend_name(DeviceBackend backend) {
  switch (backend) {
  case DeviceBackend::kCpu:
    return "cpu";
  case DeviceBackend::kEmu:
    return "emu";
  case DeviceBackend::kCuda:
    return "cuda";
  }
  return "cpu";
}

Result<std::unique_ptr<Device>> make_device(const DeviceOptions& o, const Schedule* schedule) {
  switch (o.backend) {
  case DeviceBackend::kCpu:
    return std::unique_ptr<Device>();
  case DeviceBackend::kEmu:
    return make_emu(o, schedule);
  case DeviceBackend::kCuda: // the plugin, loaded only now (a missing one names the fix)
    return create_cuda_device();
  }
  return invalid_argument("unknown backend " + std::to_string(static_cast<int>(o.backend)) +
                          " (expected cpu, emu or cuda)");
}

} // namespace pshard
