// The vision phase: plan lookup, the host path, and the statistics; the device path is
// vision_device_phase.cpp.
#include "runtime/executor/vision_phase.h"

#include "runtime/executor/vision_device_phase.h"

#include <chrono>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

int64_t patches_of(const ProjectorHParams& hp, const VisionInput& in) {
  return (in.width / hp.patch_size) * (in.height / hp.patch_size);
}

std::string tier_name(const sfb::VisionPhase& v, size_t t) {
  if (v.tier_names() && t < v.tier_names()->size())
    return v.tier_names()->Get(static_cast<flatbuffers::uoffset_t>(t))->str();
  return std::to_string(v.tiers()->Get(static_cast<flatbuffers::uoffset_t>(t))) + " patches";
}

} // namespace

Result<size_t> select_vision_plan(const Schedule& schedule, uint64_t budget, int64_t patches) {
  const sfb::VisionPhase* v = schedule.vision();
  if (!v || !v->tiers() || v->tiers()->size() == 0 || !v->plans())
    return Status(StatusCode::kModelMismatch,
                  "the schedule has no vision plans; recompile it with pshard-compile --mmproj");
  const auto n_tiers = static_cast<size_t>(v->tiers()->size());
  size_t t = 0;
  while (t < n_tiers && v->tiers()->Get(static_cast<flatbuffers::uoffset_t>(t)) < patches)
    ++t;
  if (t == n_tiers)
    return invalid_argument(
        "the image has " + std::to_string(patches) + " patches, more than the schedule's " +
        "largest vision tier (" + tier_name(*v, n_tiers - 1) + ", " +
        std::to_string(v->tiers()->Get(static_cast<flatbuffers::uoffset_t>(n_tiers - 1))) +
        " patches); recompile with pshard-compile --image-sizes covering it, or use a "
        "smaller image");
  PSHARD_ASSIGN_OR_RETURN(PlanIndex at, schedule.select(1, budget));
  const size_t index = at.budget * n_tiers + t;
  if (index >= v->plans()->size())
    return invalid_format("the schedule's vision plans do not cover every budget and tier; "
                          "recompile it with pshard-compile --mmproj");
  return index;
}

Result<VisionPhaseResult> run_vision_phase(const VisionPhaseInputs& in) {
  const auto start = std::chrono::steady_clock::now();
  PSHARD_RETURN_IF_ERROR(in.schedule.check_projector(in.projector.file()));
  const ProjectorHParams& hp = in.projector.hparams();
  PSHARD_RETURN_IF_ERROR(check_vision_input(hp, in.input));
  const sfb::VisionPhase& v = *in.schedule.vision();
  if (!v.sublayers() || v.sublayers()->size() != vision_sublayers(hp).size())
    return invalid_format("the schedule's vision phase has a different number of sub-layers "
                          "than the projector; recompile it with pshard-compile --mmproj");
  VisionPhaseStats st;
  st.patches = patches_of(hp, in.input);
  // Budget 0 below a smallest budget above 0: the host runs the phase, as the language
  // plans then do (the tier is still checked).
  const bool cpu_only = in.budget == 0 && in.schedule.budgets().front() > 0;
  PSHARD_ASSIGN_OR_RETURN(size_t index,
                          select_vision_plan(in.schedule,
                                             cpu_only ? in.schedule.budgets().front() : in.budget,
                                             st.patches));
  const sfb::VisionPlan& plan = *v.plans()->Get(static_cast<flatbuffers::uoffset_t>(index));
  if (!plan.placements() || plan.placements()->size() != v.sublayers()->size())
    return invalid_format("a vision plan of the schedule does not place every vision "
                          "sub-layer; recompile it with pshard-compile --mmproj");
  st.tier = plan.patches();
  st.tier_name = tier_name(v, index % v.tiers()->size());
  bool any_device = false;
  if (!cpu_only) {
    st.budget_bytes = plan.budget_bytes();
    st.strategy = plan.strategy() ? plan.strategy()->str() : "";
    st.predicted_ms = plan.predicted_ms();
    st.arena_bytes = plan.arena_bytes();
    for (sfb::Placement p : *plan.placements()) {
      st.resident += p == sfb::Placement::GpuResident;
      st.streamed += p == sfb::Placement::GpuStreamed;
      st.on_cpu += p == sfb::Placement::Cpu;
    }
    any_device = st.resident + st.streamed > 0;
  } else {
    st.strategy = "cpu-only";
    st.on_cpu = static_cast<int>(vision_sublayers(hp).size());
  }
  if (any_device && in.device && in.device->info().backend != "emu") {
    st.note = in.device->info().backend + " has no vision kernels yet: the vision phase ran "
                                          "on the host";
    any_device = false;
  }
  const int64_t tile = plan.attention_tile() > 0 ? plan.attention_tile() : kDefaultVisionTile;
  VisionPass pass(hp, in.projector.weights(), in.pool, in.input, tile);
  if (any_device && in.device) {
    PSHARD_RETURN_IF_ERROR(run_vision_plan_on_device(in, plan, pass, st));
  } else {
    st.attention_tile = tile;
    for (const VisionSubLayer& s : vision_sublayers(hp))
      run_vision_sublayer(s, pass, in.projector.weights());
  }
  st.measured_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return VisionPhaseResult{std::move(pass.out), st};
}

} // namespace pshard
