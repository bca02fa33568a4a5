// The device half of the vision phase (vision_phase.h): runs `plan` for `pass` on
// in.device — allocating the plan's arena (the device must hold none), uploading the
// resident sub-layers, streaming the others through the slots in stream_order, running
// CPU-placed ones on the host — and frees the arena before returning. in.device's memory
// must be host-addressable (emu): the device sub-layers run the CPU math on it.
#pragma once

#include "runtime/executor/vision_phase.h"

namespace pshard {

Status run_vision_plan_on_device(const VisionPhaseInputs& in, const fb::schedule::VisionPlan& plan,
                                 VisionPass& pass, VisionPhaseStats& stats);

} // namespace pshard
