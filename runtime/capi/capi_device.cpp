// The device behind a context's backend. The emulated GPU's defaults come from the
// schedule: its memory is the planned machine's VRAM, its link the PCIe bandwidth the
// planner assumed (recovered from a plan's predicted copy time), so a plan runs on emu
// at the speeds it was planned for. The CUDA backend is a plugin loaded only here, when
// a context asks for it (runtime/backends/plugin/cuda_plugin.h).
#include "runtime/backends/emu/emu_device.h"
#include "runtime/backends/plugin/cuda_plugin.h"
#include "runtime/capi/capi_internal.h"

#include <algorithm>

namespace pshard::capi {
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

} // namespace

Result<std::unique_ptr<Device>> make_device(const pshard_context_params& p, const pshard_model& m) {
  switch (p.backend) {
  case PSHARD_BACKEND_CPU:
    return std::unique_ptr<Device>();
  case PSHARD_BACKEND_EMU: {
    EmuOptions o;
    uint64_t largest = 0;
    if (m.schedule)
      largest = m.schedule->budgets().back();
    const uint64_t machine_vram =
        m.schedule && m.schedule->root().machine() ? m.schedule->root().machine()->vram_bytes() : 0;
    o.memory_bytes = p.emu_memory_bytes > 0
                         ? p.emu_memory_bytes
                         : std::max({machine_vram, largest, p.vram_budget, uint64_t{1} << 20});
    o.link.bytes_per_s = p.emu_pcie_gbps > 0 ? p.emu_pcie_gbps * 1e9
                         : m.schedule        ? planned_link_bytes_per_s(*m.schedule)
                                             : kDefaultPcieBytesPerS;
    o.link.latency_s = p.emu_pcie_latency_us * 1e-6;
    o.compute_threads = p.emu_compute_threads;
    PSHARD_ASSIGN_OR_RETURN(auto d, EmuDevice::create(o));
    return std::unique_ptr<Device>(std::move(d));
  }
  case PSHARD_BACKEND_CUDA:
    return create_cuda_device();
  }
  return invalid_argument("unknown backend " + std::to_string(static_cast<int>(p.backend)) +
                          " (expected cpu, emu or cuda)");
}

} // namespace pshard::capi
