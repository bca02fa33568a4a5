#include "tools/pshard-mkmodel/random_tensors.h"

#include "runtime/kernels/quantize.h"

#include <cmath>

namespace pshard {
namespace {

// SplitMix64: tiny, fast, and the same on every platform.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  float symmetric() {
    return static_cast<float>(static_cast<int64_t>(next() >> 11) - (1ll << 52)) * 0x1p-52f;
  }
};

uint64_t name_hash(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s)
    h = (h ^ c) * 0x100000001b3ull;
  return h;
}

} // namespace

Status add_random_matrix(gguf::GgufWriter& w, const std::string& name, TensorType type,
                         std::vector<int64_t> dims, uint64_t seed_base, const std::string& cls) {
  const int64_t cols = dims[0];
  if (cols % tensor_type_traits(type).block_values != 0)
    return invalid_argument("tensor '" + name + "' has rows of " + std::to_string(cols) +
                            " values, not a whole number of " + tensor_type_name(type) +
                            " blocks; choose another type for it, e.g. --override " +
                            (cls.empty() ? name : cls) + "=f32");
  const float scale = std::sqrt(3.0f / static_cast<float>(cols));
  const uint64_t seed = seed_base ^ name_hash(name);
  return w.add_tensor(name, type, dims, [=](std::span<uint8_t> out) {
    SplitMix64 rng{seed};
    const size_t row_bytes = tensor_bytes(type, cols).value();
    std::vector<float> row(static_cast<size_t>(cols));
    for (size_t off = 0; off + row_bytes <= out.size(); off += row_bytes) {
      for (auto& x : row)
        x = rng.symmetric() * scale;
      PSHARD_RETURN_IF_ERROR(quantize_row(type, row.data(), out.data() + off, cols));
    }
    return Status::ok_status();
  });
}

Status add_random_vector(gguf::GgufWriter& w, const std::string& name, int64_t n, float center,
                         float spread, uint64_t seed_base) {
  return add_random_vector(w, name, std::vector<int64_t>{n}, center, spread, seed_base);
}

Status add_random_vector(gguf::GgufWriter& w, const std::string& name, std::vector<int64_t> dims,
                         float center, float spread, uint64_t seed_base) {
  const uint64_t seed = seed_base ^ name_hash(name);
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return w.add_tensor(name, TensorType::kF32, std::move(dims), [=](std::span<uint8_t> out) {
    SplitMix64 rng{seed};
    auto* f = reinterpret_cast<float*>(out.data());
    for (int64_t i = 0; i < n; ++i)
      f[i] = center + spread * rng.symmetric();
    return Status::ok_status();
  });
}

} // namespace pshard
