// The model fingerprint: a 128-bit hash of everything in a GGUF file that decides what
// a schedule means — every metadata key/value (types included, nested arrays included)
// and every tensor info (name, dims, type, offset) plus the alignment and version.
// A split model's covers every shard's header, in order, so a changed, swapped or
// re-split shard changes it. Tensor data is never read, so fingerprinting a 100 GB
// file costs only its header.
//
// The compiler stores it in a schedule artifact; the runtime recomputes it from the
// GGUF it is given and refuses the artifact when they differ (another model, another
// quantization, a re-export with different tensor offsets).
//
//   PSHARD_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly));
//   ModelFingerprint fp = model_fingerprint(*file);
//   std::cout << fp.hex();    // 32 hex digits, hi then lo
//
// The hash is our own (no dependency): two independent 64-bit lanes, each an FNV-1a
// style multiply-xor over the bytes with a different seed and prime, finished by a
// murmur-style avalanche, and cross-mixed at the end. Fields are length-prefixed and
// type-tagged before hashing so that different field splits never collide trivially.
#pragma once

#include "runtime/gguf/gguf_file.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace pshard {

struct ModelFingerprint {
  uint64_t hi = 0;
  uint64_t lo = 0;

  bool operator==(const ModelFingerprint&) const = default;
  bool is_zero() const { return hi == 0 && lo == 0; }
  std::string hex() const; // 32 lowercase hex digits
};

// Incremental 128-bit hasher (exposed for tests and for hashing other inputs the same way).
class Hasher128 {
public:
  Hasher128();
  void bytes(std::span<const uint8_t> data);
  void u64(uint64_t v);
  void str(std::string_view s); // length-prefixed
  ModelFingerprint finish() const;

private:
  uint64_t a_, b_;
  uint64_t length_ = 0;
};

ModelFingerprint model_fingerprint(const gguf::GgufFile& file);

} // namespace pshard
