// A machine profile (*.pshprof, schemas/profile.fbs) loaded with full verification.
//
// Byte layout — a size-prefixed FlatBuffer (FinishSizePrefixed / flatc --size-prefixed):
//
//   offset 0    uint32   N, the number of bytes after this field (file size - 4)
//   offset 4    uint32   offset of the root table `Profile`, from offset 4
//   offset 8    char[4]  file identifier "PSHP"
//   offset 12…  tables, vectors, strings (FlatBuffers wire format)
//
//   The size prefix is what makes every truncation detectable: a plain FlatBuffer cut
//   inside its trailing alignment padding still verifies. The root table's fields 0 and 1
//   are schema_major and schema_minor in every version, so a reader can name a file's
//   version before it verifies the rest.
//
// Loading checks, in order: size prefix, identifier, version (this build reads major
// ProfileVersionMajor::Current and minors up to ProfileVersionMinor::Current), then the
// whole buffer with flatbuffers::Verifier. Each failure is a Status naming the problem.
//
//   PSHARD_ASSIGN_OR_RETURN(Profile profile, Profile::load_file("machine.pshprof"));
//   std::cout << profile.data().machine->cpu->model << " " << profile.fingerprint_hex();
//
//   fb::ProfileT measured = ...;                 // filled by pshard-profile
//   PSHARD_ASSIGN_OR_RETURN(Profile out, Profile::from_object(std::move(measured)));
//   PSHARD_RETURN_IF_ERROR(write_profile_file(out, "machine.pshprof"));
#pragma once

#include "runtime/core/status.h"
#include "schemas/profile_generated.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace pshard {

// flatbuffers::Verifier handles up to 2 GiB; a profile is a few hundred KB at most.
inline constexpr size_t kMaxProfileBytes = size_t{1} << 30;

// The schema version this build writes and the newest it reads.
inline constexpr uint32_t kProfileSchemaMajor =
    static_cast<uint32_t>(fb::ProfileVersionMajor::Current);
inline constexpr uint32_t kProfileSchemaMinor =
    static_cast<uint32_t>(fb::ProfileVersionMinor::Current);

class Profile {
public:
  // Reads and verifies a file. Errors carry the path.
  static Result<Profile> load_file(const std::string& path);
  // Verifies and copies `bytes`.
  static Result<Profile> load_bytes(std::span<const uint8_t> bytes);
  // Serializes `object` with the current schema version (overwriting its version
  // fields), then loads the result, so what you get is exactly what a reader sees.
  static Result<Profile> from_object(fb::ProfileT object);

  // The unpacked tables (FlatBuffers object API).
  const fb::ProfileT& data() const { return *object_; }
  // The serialized file.
  std::span<const uint8_t> bytes() const { return bytes_; }

  // 64-bit FNV-1a of the serialized bytes: the compiler stores it in a schedule
  // artifact so that the runtime can tell which profile a plan was made from.
  uint64_t fingerprint() const { return fingerprint_; }
  std::string fingerprint_hex() const;

  bool has_gpu() const { return object_->gpu != nullptr; }

private:
  Profile() = default;

  std::vector<uint8_t> bytes_;
  std::shared_ptr<const fb::ProfileT> object_;
  uint64_t fingerprint_ = 0;
};

// FNV-1a, 64 bits: small, dependency-free and stable across platforms.
uint64_t fnv1a64(std::span<const uint8_t> bytes);

// Writes the profile atomically: a temporary file beside `path`, then rename, so a
// crash or a full disk never leaves a half-written profile under the final name.
Status write_profile_file(const Profile& profile, const std::string& path);

// Writes any text atomically in the same way (the JSON view).
Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes);

} // namespace pshard
