// A schedule's plans on a device, opened as the tools' -s / --backend / --vram /
// --emu-pcie flags ask (cli_hybrid_options.h): the schedule loaded, the device made for
// it, the HybridSession created — what pshard-run's image prompts and pshard-bench's
// ppN/tgN tests share.
//
//   HybridTarget t{"model.pshard", "auto", "2G", 0};
//   HybridParams hp;  // n_ctx, threads, KV types; the budget is filled in from t
//   PSHARD_ASSIGN_OR_RETURN(OpenedHybrid h, open_hybrid(*model, t, hp));
//   h.session->decode(tokens);
#pragma once

#include "runtime/device/device.h"
#include "runtime/executor/hybrid_session.h"
#include "runtime/model/model.h"
#include "runtime/schedule/schedule_file.h"

#include <memory>
#include <string>

namespace pshard {

struct HybridTarget {
  std::string schedule_path;    // required by open_hybrid
  std::string backend = "auto"; // auto: emu
  std::string vram;             // empty: the schedule's largest budget
  double emu_pcie_gbps = 0;     // 0: what the schedule was planned with
};

// The session borrows the schedule and the device: keep them together.
struct OpenedHybrid {
  std::unique_ptr<Schedule> schedule;
  std::unique_ptr<Device> device;
  std::unique_ptr<HybridSession> session;
  std::string backend; // as resolved: "emu", "cuda" or "cpu"
  uint64_t vram_budget = 0;
};

// hp.vram_budget is replaced by t's budget; the rest of hp is used as given.
Result<OpenedHybrid> open_hybrid(const Model& model, const HybridTarget& t, HybridParams hp);

} // namespace pshard
