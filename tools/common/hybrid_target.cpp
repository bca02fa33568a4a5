#include "tools/common/hybrid_target.h"

#include "runtime/backends/device_factory.h"
#include "tools/common/size_parse.h"

namespace pshard {

Result<OpenedHybrid> open_hybrid(const Model& model, const HybridTarget& t, HybridParams hp) {
  OpenedHybrid h;
  PSHARD_ASSIGN_OR_RETURN(Schedule schedule, Schedule::load_file(t.schedule_path));
  h.schedule = std::make_unique<Schedule>(std::move(schedule));
  h.vram_budget = h.schedule->budgets().back(); // default: the largest compiled budget
  if (!t.vram.empty()) {
    PSHARD_ASSIGN_OR_RETURN(h.vram_budget, parse_size(t.vram));
  }
  h.backend = t.backend == "auto" ? "emu" : t.backend;
  DeviceOptions d;
  PSHARD_ASSIGN_OR_RETURN(d.backend, parse_device_backend(h.backend));
  d.vram_budget = h.vram_budget;
  d.emu_pcie_gbps = t.emu_pcie_gbps;
  PSHARD_ASSIGN_OR_RETURN(h.device, make_device(d, h.schedule.get()));
  hp.vram_budget = h.vram_budget;
  PSHARD_ASSIGN_OR_RETURN(h.session,
                          HybridSession::create(model, h.schedule.get(), h.device.get(), hp));
  return h;
}

} // namespace pshard
