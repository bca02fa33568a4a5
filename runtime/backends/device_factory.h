// The device behind a backend name, sized and linked for the schedule it will run: what
// the C API's contexts, the serving engine and pshard-bench's batched mode share.
//
//   DeviceOptions o;
//   o.backend = DeviceBackend::kEmu;
//   o.vram_budget = 512ull << 20;
//   PSHARD_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, make_device(o, &schedule));
//   // null for kCpu: everything runs on the host
//
// The emulated GPU's defaults come from the schedule: its memory is the planned machine's
// VRAM (at least the largest budget and the budget asked for), its link the PCIe
// bandwidth the planner assumed (recovered from a plan's predicted copy time), so a plan
// runs on emu at the speeds it was planned for.
#pragma once

#include "runtime/core/status.h"
#include "runtime/device/device.h"
#include "runtime/schedule/schedule_file.h"

#include <memory>
#include <string_view>

namespace pshard {

enum class DeviceBackend { kCpu, kEmu, kCuda };

// "cpu", "emu", "cuda"; anything else is an error naming the three.
Result<DeviceBackend> parse_device_backend(std::string_view name);
const char* device_backend_name(DeviceBackend backend);

struct DeviceOptions {
  DeviceBackend backend = DeviceBackend::kCpu;
  uint64_t vram_budget = 0; // the budget the device must hold
  double emu_pcie_gbps = 0; // 0: what the schedule was planned with (else 16 GB/s)
  double emu_pcie_latency_us = 10;
  uint64_t emu_memory_bytes = 0; // 0: from the schedule (see above)
  int emu_compute_threads = 1;
};

// Null for kCpu. `schedule` may be null.
Result<std::unique_ptr<Device>> make_device(const DeviceOptions& options, const Schedule* schedule);

} // namespace pshard
