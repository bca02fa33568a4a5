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
// tier, one placement per sub-layer, buffers inside the arena, arena ≤ budget). Each
// failure is a Status naming the problem and, where it can, what would fix it.
//
//   PSHARD_ASSIGN_OR_RETURN(Schedule s, Schedule::load_file("model.pshard"));
//   PSHARD_RETURN_IF_ERROR(s.check_model(*gguf));      // refuses another model
//   PSHARD_ASSIGN_OR_RETURN(PlanIndex at, s.select(/*n_tokens=*/1, /*vram=*/2ull << 30));
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
  uint64_t arena_bytes = 0;
  int32_t cpu_threads = 1;
  double predicted_ms_per_pass = 0;
  double predicted_tokens_per_s = 0;
};

struct PlanIndex {
  size_t budget = 0;
  size_t tier = 0;
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

  const std::vector<uint64_t>& budgets() const { return budgets_; }
  const std::vector<int64_t>& tiers() const { return tiers_; }
  const SchedulePlan& plan(PlanIndex at) const { return plans_[at.budget * tiers_.size() + at.tier]; }
  // The runtime's lookup: the smallest tier holding n_tokens (the largest tier when none
  // does — the pass is then split into chunks of that tier), the largest budget ≤
  // vram_available. kOutOfMemory naming the smallest budget when none fits.
  Result<PlanIndex> select(int64_t n_tokens, uint64_t vram_available) const;

private:
  Schedule() = default;
  Status decode();

  std::vector<uint8_t> bytes_;
  std::vector<uint64_t> budgets_;
  std::vector<int64_t> tiers_;
  std::vector<SchedulePlan> plans_; // budget-major
};

// Reads the version fields of a whole (size-prefixed) file without verifying anything else.
struct ScheduleVersion {
  uint32_t major = 0, minor = 0;
};
Result<ScheduleVersion> peek_schedule_version(std::span<const uint8_t> bytes);

} // namespace pshard
