// Loading a profile: the checks are ordered so that each kind of bad input gets the
// message that names it (too short, foreign file, other version, corrupt/truncated).
#include "runtime/profile/profile.h"

#include "runtime/core/file_bytes.h"

namespace pshard {
namespace {

constexpr size_t kHeaderBytes = 12; // size prefix + root offset + identifier

std::string supported_versions() {
  return "this build reads profile schema " + std::to_string(kProfileSchemaMajor) + ".0 to " +
         version_string(kProfileSchemaMajor, kProfileSchemaMinor);
}

// Reads the two version fields after verifying only the root table header and those
// fields, so that a file of another major version (whose other tables this build
// cannot verify) still gets a "version" error rather than "corrupt".
Status check_version(std::span<const uint8_t> bytes) {
  flatbuffers::Verifier verifier(bytes.data(), bytes.size());
  if (!verifier.Verify<flatbuffers::uoffset_t>(sizeof(flatbuffers::uoffset_t)))
    return invalid_format("truncated pshard profile: no root table offset");
  // fb::Profile hides its flatbuffers::Table base; read the root as a plain Table.
  const auto* table = flatbuffers::GetSizePrefixedRoot<flatbuffers::Table>(bytes.data());
  if (!table->VerifyTableStart(verifier) ||
      !table->VerifyField<uint32_t>(verifier, fb::Profile::VT_SCHEMA_MAJOR, 4) ||
      !table->VerifyField<uint32_t>(verifier, fb::Profile::VT_SCHEMA_MINOR, 4))
    return invalid_format("truncated or corrupt pshard profile (" + std::to_string(bytes.size()) +
                          " bytes): the root table lies outside the file");
  const uint32_t major = table->GetField<uint32_t>(fb::Profile::VT_SCHEMA_MAJOR, 0);
  const uint32_t minor = table->GetField<uint32_t>(fb::Profile::VT_SCHEMA_MINOR, 0);
  if (major != kProfileSchemaMajor)
    return Status(StatusCode::kVersionMismatch,
                  "profile schema version " + version_string(major, minor) +
                      " is not supported: " + supported_versions() +
                      "; re-run pshard-profile with this build to make a compatible profile");
  if (minor > kProfileSchemaMinor)
    return Status(StatusCode::kVersionMismatch,
                  "profile schema version " + version_string(major, minor) +
                      " is newer than this build: " + supported_versions() +
                      "; update pshard or re-run pshard-profile with this build");
  return Status::ok_status();
}

} // namespace

uint64_t fnv1a64(std::span<const uint8_t> bytes) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (uint8_t b : bytes) {
    hash ^= b;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::string Profile::fingerprint_hex() const {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(fingerprint_));
  return text;
}

Result<Profile> Profile::load_bytes(std::span<const uint8_t> bytes) {
  if (bytes.size() < kHeaderBytes)
    return invalid_format("not a pshard profile: " + std::to_string(bytes.size()) +
                          " bytes is too short (a profile starts with a 12-byte header)");
  if (bytes.size() > kMaxProfileBytes)
    return invalid_format("not a pshard profile: " + std::to_string(bytes.size()) +
                          " bytes is far larger than any profile");
  if (!flatbuffers::BufferHasIdentifier(bytes.data(), fb::ProfileIdentifier(),
                                        /*size_prefixed=*/true))
    return invalid_format("not a pshard profile (identifier '" +
                          printable_identifier(bytes.subspan(8, 4)) + "', expected '" +
                          fb::ProfileIdentifier() + "')");
  const size_t declared = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(bytes.data()) +
                          sizeof(flatbuffers::uoffset_t);
  if (declared != bytes.size())
    return invalid_format(std::string(declared > bytes.size() ? "truncated pshard profile: "
                                                              : "corrupt pshard profile: ") +
                          "its header says " + std::to_string(declared) + " bytes, the data has " +
                          std::to_string(bytes.size()));

  // The verifier reads scalars in place; copy first so they are aligned and owned.
  Profile profile;
  profile.bytes_.assign(bytes.begin(), bytes.end());
  const std::span<const uint8_t> owned = profile.bytes_;
  PSHARD_RETURN_IF_ERROR(check_version(owned));

  flatbuffers::Verifier verifier(owned.data(), owned.size());
  if (!fb::VerifySizePrefixedProfileBuffer(verifier))
    return invalid_format("truncated or corrupt pshard profile (" + std::to_string(owned.size()) +
                          " bytes): FlatBuffers verification failed");

  profile.object_ =
      std::shared_ptr<const fb::ProfileT>(fb::UnPackSizePrefixedProfile(owned.data()));
  profile.fingerprint_ = fnv1a64(owned);
  return profile;
}

Result<Profile> Profile::from_object(fb::ProfileT object) {
  object.schema_major = kProfileSchemaMajor;
  object.schema_minor = kProfileSchemaMinor;
  flatbuffers::FlatBufferBuilder builder(64 * 1024);
  fb::FinishSizePrefixedProfileBuffer(builder, fb::Profile::Pack(builder, &object));
  return load_bytes(std::span<const uint8_t>(builder.GetBufferPointer(), builder.GetSize()));
}

} // namespace pshard
