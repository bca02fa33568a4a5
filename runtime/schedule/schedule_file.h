// A schedule artifact (*.pshard, schemas/schedule.fbs) loaded with full verification,
// and the runtime's lookup of the plan for a pass.
//
// Byte layout — a size-prefixed FlatBuffer (as profiles are, so that a file cut anywhere,
// even inside trailing padding, is told apart from a whole one):
//
//   offset 0   uint32   bytes that follow (file size − 4)
//   offset 4   uint32   offset of the root table `Schedule` (from offset 4)
//   offset 8   char[4]  file identifier "PSHS"
//   offset 12… tables, vectors, strings (FlatBuffers wire format)
//
//   The root table's fields 0 and 1 are schema_major and schema_minor in every version,
//   so a reader can name a file's version before it verifies the rest.
//
// Loading checks, in order: size, identifier, size prefix, version (this build reads major
// ScheduleVersionMajor::Current and minors up to ScheduleVersionMinor::Current), the
// whole buffer with flatbuffers::Verifier, then the grid's shape (one plan per budget ×
// context range × tier, one placement per sub-layer, buffers inside the arena, arena ≤
// budget, switches between plans that exist). Each failure is a Status naming the problem
// and, where it can, what would fix it. Files of 1.0 and 1.1 read as one context range.
//
//   PSHARD_ASSIGN_OR_RETURN(Schedule s, Schedule::load_file("model.pshard"));
//   PSHARD_RETURN_IF_ERROR(s.check_model(*gguf));      // refuses another model
//   PSHARD_ASSIGN_OR_RETURN(PlanIndex at,
//       s.select(/*n_tokens=*/1, /*vram=*/2ull << 30, /*positions=*/n_past + 1));
//   const SchedulePlan& plan = s.plan(at);
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/schedule/model_fingerprint.h"
#include "schemas/schedule_generated.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {

inline constexpr uint32_t kScheduleSchemaMajor =
    static_cast<uint32_t>(fb::schedule::ScheduleVersionMajor::Current);
inline constexpr uint32_t kScheduleSchemaMinor =
    static_cast<uint32_t>(fb::schedule::ScheduleVersionMinor::Current);
inline constexpr const char* kScheduleIdentifier = "PSHS";

// Decoded plan: what the executor reads on every pass, without FlatBuffers accessors.
struct SchedulePlan {
  uint64_t budget_bytes = 0;
  int64_t tier = 0;
  int64_t context = 0;       // the range's upper bound: resident KV caches hold as many
  int64_t context_start = 1; // positions; the smallest context of the range
  int64_t sequences = 1;     // resident KV caches hold `context` positions for each of
                             // this many sequences (CompileOptions.parallel, 1.3)
  std::string strategy;
  std::vector<fb::schedule::Placement> placements; // per sub-layer
  std::vector<int32_t> stream_order;
  int32_t prefetch_depth = 0;
  int32_t stream_slot_count = 0;
  uint64_t stream_slot_bytes = 0;
  struct Buffer {
    fb::schedule::BufferKind kind;
    int32_t sublayer, index;
    uint64_t offset, size;
  };
  std::vector<Buffer> vram_layout;
  // 1.5: MoE blocks placed expert by expert (absent: every block whole). The sub-layer
  // is gpu_streamed (router, norms, shared expert); `resident` experts live in Expert
  // buffers, `copied` ones are copied when routed to, all others run on the host.
  struct Experts {
    int32_t sublayer = -1;
    std::vector<int32_t> resident, copied; // ascending
    uint64_t resident_bytes = 0, expected_copy_bytes = 0;
    double expected_cpu_experts = 0;
  };
  std::vector<Experts> experts;
  const Experts* experts_of(size_t sublayer) const; // null: placed whole
  uint64_t arena_bytes = 0;
  int32_t cpu_threads = 1;
  double predicted_ms_per_pass = 0;          // at `context` positions
  double predicted_ms_at_context_start = 0;  // at `context_start`
  double predicted_tokens_per_s = 0;
  // The prediction for a pass whose last token sees `positions` cached positions
  // (between the range's two predictions, linearly; clamped to the range).
  double predicted_ms_at(int64_t positions) const;
};

// What a switch between two plans of one budget moves (BudgetPlans.switches).
struct ScheduleSwitch {
  size_t from_context = 0, from_tier = 0, to_context = 0, to_tier = 0; // indices
  uint64_t upload_bytes = 0, evict_bytes = 0;
  uint64_t kv_upload_bytes_per_position = 0, kv_download_bytes_per_position = 0;
  // Of those, the ring caches' (1.6): they move at most Schedule::kv_ring_positions().
  uint64_t kv_ring_upload_bytes_per_position = 0, kv_ring_download_bytes_per_position = 0;
  // 1.7: the recurrent layers' states moved, whole, per sequence (0 in older files, which
  // do not say).
  uint64_t state_upload_bytes = 0, state_download_bytes = 0;
  int64_t priced_positions = 0;
  double predicted_ms = 0;
  // The KV bytes moved with `positions` cached positions and rings of `ring` rows.
  uint64_t kv_upload_bytes(int64_t positions, int64_t ring) const;
  uint64_t kv_download_bytes(int64_t positions, int64_t ring) const;
};

// The PCIe pricing switches were planned with (CompileOptions.link_*): latency + bytes ×
// rate per direction. All zero in 1.0/1.1 files.
struct ScheduleLink {
  uint64_t h2d_latency_ns = 0, h2d_ns_per_mib = 0, d2h_latency_ns = 0, d2h_ns_per_mib = 0;
  double h2d_ms(uint64_t bytes) const;
  double d2h_ms(uint64_t bytes) const;
};

struct PlanIndex {
  size_t budget = 0;
  size_t tier = 0;
  size_t context = 0; // index into Schedule::contexts()
};

class Schedule {
public:
  static Result<Schedule> load_file(const std::string& path);
  // Verifies and copies `bytes`.
  static Result<Schedule> load_bytes(std::span<const uint8_t> bytes);

  // The verified FlatBuffer (valid as long as this Schedule lives).
  const fb::schedule::Schedule& root() const;
  std::span<const uint8_t> bytes() const { return bytes_; }

  ModelFingerprint model_fingerprint() const;
  // kModelMismatch naming both fingerprints when `file` is not the model planned for.
  Status check_model(const gguf::GgufFile& file) const;
  // A VLM's vision phase (schema 1.4, pshard-compile --mmproj); null in files without
  // one, older ones included.
  const fb::schedule::VisionPhase* vision() const { return root().vision(); }
  // kModelMismatch when `projector` is not the projector file planned for, or the
  // schedule has no vision plans.
  Status check_projector(const gguf::GgufFile& projector) const;

  const std::vector<uint64_t>& budgets() const { return budgets_; }
  const std::vector<int64_t>& tiers() const { return tiers_; }
  // Upper bounds of the context ranges, ascending; the last is the compiled context.
  const std::vector<int64_t>& contexts() const { return contexts_; }
  const SchedulePlan& plan(PlanIndex at) const {
    return plans_[(at.budget * contexts_.size() + at.context) * tiers_.size() + at.tier];
  }
  // The CPU-only plan of a (context, tier): the grid's budget-0 plan, or the artifact's
  // cpu_only row; null in 1.0/1.1 files without a budget 0.
  const SchedulePlan* cpu_only_plan(size_t context, size_t tier) const;
  // The recorded switch between two plans of a budget; null when it moves nothing.
  const ScheduleSwitch* find_switch(size_t budget, PlanIndex from, PlanIndex to) const;
  const std::vector<ScheduleSwitch>& switches(size_t budget) const { return switches_[budget]; }
  const ScheduleLink& link() const { return link_; }
  // The rows of a sliding-window layer's cache (kv_ring.h); 0: whole caches.
  int64_t kv_ring_positions() const { return kv_ring_; }
  // The runtime's lookup: the smallest tier holding n_tokens (the largest tier when none
  // does — the pass is then split into chunks of that tier), the smallest context range
  // holding `positions` (the last when none does), the largest budget ≤ vram_available.
  // kOutOfMemory naming the smallest budget when none fits.
  Result<PlanIndex> select(int64_t n_tokens, uint64_t vram_available, int64_t positions = 0) const;
  // The context range holding `positions` (the last when none does).
  size_t context_index(int64_t positions) const;

private:
  Schedule() = default;
  Status decode();
  Status decode_budget(size_t b, const fb::schedule::BudgetPlans& row, uint64_t budget,
                       std::vector<SchedulePlan>* out, std::vector<ScheduleSwitch>* switches) const;

  std::vector<uint8_t> bytes_;
  std::vector<uint64_t> budgets_;
  std::vector<int64_t> tiers_;
  std::vector<int64_t> contexts_;
  std::vector<SchedulePlan> plans_;    // [budget][context][tier]
  std::vector<SchedulePlan> cpu_only_; // [context][tier]; empty when absent
  std::vector<std::vector<ScheduleSwitch>> switches_; // per budget
  ScheduleLink link_;
  int64_t kv_ring_ = 0;
};

// Reads the version fields of a whole (size-prefixed) file without verifying anything else.
struct ScheduleVersion {
  uint32_t major = 0, minor = 0;
};
Result<ScheduleVersion> peek_schedule_version(std::span<const uint8_t> bytes);

} // namespace pshard
