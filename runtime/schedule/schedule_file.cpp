// Loading a schedule artifact: the checks are ordered so that each kind of bad input gets
// the message that names it (too short, foreign file, other version, corrupt/truncated,
// inconsistent grid, another model).
#include "runtime/schedule/schedule_file.h"

#include "runtime/core/file_bytes.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

constexpr size_t kHeaderBytes = 12; // size prefix + root offset + identifier
// flatbuffers::Verifier handles up to 2 GiB; a schedule is a few MB at most.
constexpr size_t kMaxScheduleBytes = size_t{1} << 30;

std::string supported_versions() {
  return "this build reads schedule schema " + std::to_string(kScheduleSchemaMajor) + ".0 to " +
         version_string(kScheduleSchemaMajor, kScheduleSchemaMinor);
}

} // namespace

Result<ScheduleVersion> peek_schedule_version(std::span<const uint8_t> bytes) {
  // `bytes` is the whole size-prefixed file. Verify only the root table header and the
  // two version fields, so that a file of another major version (whose other tables this
  // build cannot verify) still gets a "version" error rather than "corrupt".
  if (bytes.size() < kHeaderBytes)
    return invalid_format("truncated pshard schedule: no root table offset");
  const std::span<const uint8_t> body = bytes.subspan(sizeof(flatbuffers::uoffset_t));
  flatbuffers::Verifier verifier(body.data(), body.size());
  if (!verifier.Verify<flatbuffers::uoffset_t>(0))
    return invalid_format("truncated pshard schedule: no root table offset");
  const auto* table = flatbuffers::GetRoot<flatbuffers::Table>(body.data());
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, sfb::Schedule::VT_SCHEMA_MAJOR, 4) ||
      !table->VerifyField<uint32_t>(verifier, sfb::Schedule::VT_SCHEMA_MINOR, 4))
    return invalid_format("truncated or corrupt pshard schedule (" +
                          std::to_string(bytes.size()) +
                          " bytes): the root table lies outside the file");
  return ScheduleVersion{table->GetField<uint32_t>(sfb::Schedule::VT_SCHEMA_MAJOR, 0),
                         table->GetField<uint32_t>(sfb::Schedule::VT_SCHEMA_MINOR, 0)};
}

Result<Schedule> Schedule::load_bytes(std::span<const uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes)
    return invalid_format("not a pshard schedule: " + std::to_string(bytes.size()) +
                          " bytes is too short (a schedule starts with a 12-byte header)");
  if (bytes.size() > kMaxScheduleBytes)
    return invalid_format("not a pshard schedule: " + std::to_string(bytes.size()) +
                          " bytes is far larger than any schedule");
  if (!flatbuffers::BufferHasIdentifier(bytes.data(), sfb::ScheduleIdentifier(),
                                        /*size_prefixed=*/true))
    return invalid_format("not a pshard schedule (identifier '" +
                          printable_identifier(bytes.subspan(8, 4)) + "', expected '" +
                          sfb::ScheduleIdentifier() + "'); make one with pshard-compile");
  const uint64_t declared = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(bytes.data());
  if (declared != bytes.size() - sizeof(flatbuffers::uoffset_t))
    return invalid_format("truncated or corrupt pshard schedule: its header says " +
                          std::to_string(declared + sizeof(flatbuffers::uoffset_t)) +
                          " bytes, the file has " + std::to_string(bytes.size()) +
                          "; copy it again or recompile it with pshard-compile");

  // The verifier reads scalars in place; copy first so they are aligned and owned.
  Schedule schedule;
  schedule.bytes_.assign(bytes.begin(), bytes.end());
  const std::span<const uint8_t> owned = schedule.bytes_;
  PSHARD_ASSIGN_OR_RETURN(ScheduleVersion version, peek_schedule_version(owned));
  if (version.major != kScheduleSchemaMajor)
    return Status(StatusCode::kVersionMismatch,
                  "schedule schema version " + version_string(version.major, version.minor) +
                      " is not supported: " + supported_versions() +
                      "; recompile the schedule with this build's pshard-compile");
  if (version.minor > kScheduleSchemaMinor)
    return Status(StatusCode::kVersionMismatch,
                  "schedule schema version " + version_string(version.major, version.minor) +
                      " is newer than this build: " + supported_versions() +
                      "; update pshard or recompile the schedule with this build");

  flatbuffers::Verifier verifier(owned.data(), owned.size());
  if (!sfb::VerifySizePrefixedScheduleBuffer(verifier))
    return invalid_format("truncated or corrupt pshard schedule (" + std::to_string(owned.size()) +
                          " bytes): FlatBuffers verification failed");
  PSHARD_RETURN_IF_ERROR(schedule.decode());
  return schedule;
}

Result<Schedule> Schedule::load_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  PSHARD_RETURN_IF_ERROR(read_whole_file(path, kMaxScheduleBytes, "schedule artifact", &bytes));
  Result<Schedule> schedule = load_bytes(bytes);
  if (!schedule.ok())
    return schedule.status().with_context("while loading '" + path + "'");
  return schedule;
}

const sfb::Schedule& Schedule::root() const {
  return *sfb::GetSizePrefixedSchedule(bytes_.data());
}

ModelFingerprint Schedule::model_fingerprint() const {
  const sfb::ModelInfo* model = root().model();
  return model ? ModelFingerprint{model->fingerprint_hi(), model->fingerprint_lo()}
               : ModelFingerprint{};
}

Status Schedule::check_model(const gguf::GgufFile& file) const {
  const ModelFingerprint expected = model_fingerprint();
  const ModelFingerprint actual = pshard::model_fingerprint(file);
  if (expected == actual)
    return Status::ok_status();
  const sfb::ModelInfo* model = root().model();
  const std::string planned = model && model->name() ? model->name()->str() : "?";
  return Status(StatusCode::kModelMismatch,
                "the schedule was compiled for another model: it expects model fingerprint " +
                    expected.hex() + " ('" + planned + "'), but '" + file.path() + "' has " +
                    actual.hex() + "; recompile with pshard-compile -m " + file.path());
}

Status Schedule::check_projector(const gguf::GgufFile& projector) const {
  const sfb::VisionPhase* v = vision();
  if (!v)
    return Status(StatusCode::kModelMismatch,
                  "the schedule has no vision plans; recompile with pshard-compile --mmproj " +
                      projector.path());
  const ModelFingerprint expected{v->fingerprint_hi(), v->fingerprint_lo()};
  const ModelFingerprint actual = pshard::model_fingerprint(projector);
  if (expected == actual)
    return Status::ok_status();
  return Status(StatusCode::kModelMismatch,
                "the schedule's vision plans were compiled for another projector: it expects "
                "fingerprint " +
                    expected.hex() + ", but '" + projector.path() + "' has " + actual.hex() +
                    "; recompile with pshard-compile --mmproj " + projector.path());
}

} // namespace pshard
