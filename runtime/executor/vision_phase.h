// A VLM's vision phase executed as the schedule planned it (schema 1.4 Schedule.vision):
// the VisionPlan of (the budget in force, the image's tier — the smallest tier holding
// its patches) places every vision sub-layer resident, streamed or on the CPU. On a
// device the phase allocates the arena alone — the plan's resident weights, its
// streaming slots (filled in stream_order, copies running ahead while earlier sub-layers
// compute), the activations and the tiled attention's workspace — and frees it before
// returning, so the language plans that follow reuse the memory: the phases share the
// arena in time, never in space (HybridSession::release_device frees the language
// arena first).
//
//   PSHARD_RETURN_IF_ERROR(session->release_device());
//   VisionPhaseInputs in{schedule, *projector, input, session->budget(), device, pool};
//   PSHARD_ASSIGN_OR_RETURN(VisionPhaseResult r, run_vision_phase(in));
//   r.stats.peak_device_bytes;   // the vision arena; then the language passes run
//
// Device sub-layers need device memory the host can address (the emu backend, which
// runs the CPU math on device buffers whose bytes it counts); on another device the
// phase runs on the host and says so in stats.note. Without a device (the cpu backend)
// the plan is looked up and reported, and runs on the host. The embeddings are
// bit-identical whatever the plan.
#pragma once

#include "runtime/device/device.h"
#include "runtime/schedule/schedule_file.h"
#include "runtime/vision/vision_encoder.h"

#include <string>

namespace pshard {

struct VisionPhaseStats {
  uint64_t budget_bytes = 0; // the compiled budget of the plan used
  std::string tier_name;     // "1080p"
  int64_t tier = 0;          // the tier's patches
  int64_t patches = 0;       // the image's
  std::string strategy;
  int64_t attention_tile = 0;                 // queries per tile the phase ran with
  int resident = 0, streamed = 0, on_cpu = 0; // sub-layers by placement
  double predicted_ms = 0, measured_ms = 0;
  uint64_t arena_bytes = 0;       // the plan's
  uint64_t peak_device_bytes = 0; // measured: the device arena the phase held
  uint64_t bytes_uploaded = 0;    // resident weights
  uint64_t bytes_streamed = 0;    // weights through the slots
  uint64_t bytes_crossed = 0;     // activations between host and device
  std::string note;               // why a planned device phase ran on the host
};

struct VisionPhaseResult {
  ImageEmbeddings embeddings;
  VisionPhaseStats stats;
};

struct VisionPhaseInputs {
  const Schedule& schedule;
  const Projector& projector;
  const VisionInput& input;
  uint64_t budget = 0;      // the VRAM budget in force (the largest compiled one ≤ it)
  Device* device = nullptr; // null: the host runs every sub-layer
  ThreadPool& pool;
};

// The plan's index in VisionPhase.plans for (budget, patches): kInvalidArgument for an
// image above the largest tier (naming it and --image-sizes), kOutOfMemory below the
// smallest budget, kModelMismatch without vision plans.
Result<size_t> select_vision_plan(const Schedule& schedule, uint64_t budget, int64_t patches);

// Checks the projector's fingerprint against the schedule, then runs the phase.
Result<VisionPhaseResult> run_vision_phase(const VisionPhaseInputs& in);

} // namespace pshard
