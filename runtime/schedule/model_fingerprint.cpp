#include "runtime/schedule/model_fingerprint.h"

#include <cstdio>
#include <type_traits>

namespace pshard {
namespace {

// Two lanes with different offsets and primes (FNV's 64-bit prime and a large odd
// constant from splitmix64), so the 128 bits are not one 64-bit hash repeated.
constexpr uint64_t kSeedA = 0xcbf29ce484222325ull;
constexpr uint64_t kSeedB = 0x84222325cbf29ce4ull ^ 0x9e3779b97f4a7c15ull;
constexpr uint64_t kPrimeA = 0x00000100000001b3ull;
constexpr uint64_t kPrimeB = 0xbf58476d1ce4e5b9ull;

uint64_t avalanche(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

// Tags keep value types apart: u32 5 and i64 5 hash differently.
enum Tag : uint64_t { kKey = 0x4b, kValue = 0x56, kTensor = 0x54, kHeader = 0x48, kShard = 0x53 };

void hash_value(Hasher128& h, const gguf::Value& value) {
  h.u64(kValue);
  h.u64(static_cast<uint64_t>(value.type()));
  std::visit(
      [&h](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          h.str(v);
        } else if constexpr (std::is_same_v<T, gguf::Array>) {
          h.u64(static_cast<uint64_t>(v.element_type));
          h.u64(v.items.size());
          for (const auto& item : v.items)
            hash_value(h, item);
        } else if constexpr (std::is_same_v<T, float>) {
          uint32_t bits;
          static_assert(sizeof bits == sizeof v);
          __builtin_memcpy(&bits, &v, sizeof bits);
          h.u64(bits);
        } else if constexpr (std::is_same_v<T, double>) {
          uint64_t bits;
          __builtin_memcpy(&bits, &v, sizeof bits);
          h.u64(bits);
        } else if constexpr (std::is_same_v<T, bool>) {
          h.u64(v ? 1 : 0);
        } else {
          h.u64(static_cast<uint64_t>(v)); // integers (sign-extended: distinct by tag)
        }
      },
      value.v);
}

// One file's header. An unsplit model's fingerprint is this of its only file, exactly
// as before split models were read, so existing schedules stay valid.
void hash_shard(Hasher128& h, const gguf::GgufFile& file, const gguf::GgufShard& shard) {
  h.u64(kHeader);
  h.u64(shard.version);
  h.u64(shard.alignment);
  h.u64(shard.data_offset);
  h.u64(shard.metadata.size());
  for (const auto& kv : shard.metadata) {
    h.u64(kKey);
    h.str(kv.key);
    hash_value(h, kv.value);
  }
  h.u64(shard.n_tensors);
  for (size_t i = shard.first_tensor; i < shard.first_tensor + shard.n_tensors; ++i) {
    const gguf::TensorInfo& t = file.tensors()[i];
    h.u64(kTensor);
    h.str(t.name);
    h.u64(t.dims.size());
    for (int64_t d : t.dims)
      h.u64(static_cast<uint64_t>(d));
    h.u64(static_cast<uint64_t>(t.type));
    h.u64(t.offset);
    h.u64(t.n_bytes);
  }
}

} // namespace

std::string ModelFingerprint::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                static_cast<unsigned long long>(lo));
  return buf;
}

Hasher128::Hasher128() : a_(kSeedA), b_(kSeedB) {}

void Hasher128::bytes(std::span<const uint8_t> data) {
  uint64_t a = a_, b = b_;
  for (uint8_t byte : data) {
    a = (a ^ byte) * kPrimeA;
    b = (b ^ byte) * kPrimeB;
    b ^= b >> 29; // the second lane mixes harder so that it is not a rescaled first lane
  }
  a_ = a;
  b_ = b;
  length_ += data.size();
}

void Hasher128::u64(uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; ++i)
    le[i] = static_cast<uint8_t>(v >> (8 * i));
  bytes(le);
}

void Hasher128::str(std::string_view s) {
  u64(s.size());
  bytes({reinterpret_cast<const uint8_t*>(s.data()), s.size()});
}

ModelFingerprint Hasher128::finish() const {
  const uint64_t a = avalanche(a_ ^ length_);
  const uint64_t b = avalanche(b_ + 0x9e3779b97f4a7c15ull * (length_ + 1));
  return {avalanche(a ^ (b << 1)), avalanche(b ^ (a >> 1) ^ kPrimeB)};
}

ModelFingerprint model_fingerprint(const gguf::GgufFile& file) {
  Hasher128 h;
  const auto& shards = file.shards();
  for (size_t i = 0; i < shards.size(); ++i) {
    if (i > 0) {
      h.u64(kShard);
      h.u64(i);
    }
    hash_shard(h, file, shards[i]);
  }
  return h.finish();
}

} // namespace pshard
