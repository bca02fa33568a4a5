// Deterministic random tensors for the generated models and projectors: each tensor's
// values come from the seed and its name alone (SplitMix64), so a seed names a file.
//
//   PSHARD_RETURN_IF_ERROR(add_random_matrix(w, "blk.0.attn_q.weight", TensorType::kQ8_0,
//                                            {64, 64}, seed));
//   PSHARD_RETURN_IF_ERROR(add_random_vector(w, "blk.0.attn_norm.weight", 64, 1.0f, 0.1f, seed));
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_writer.h"
#include "runtime/tensor/tensor_type.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

// Uniform values of standard deviation ~ 1/sqrt(row length), quantized row by row.
// Fails when a row is not a whole number of the type's blocks, naming `cls` for the fix.
Status add_random_matrix(gguf::GgufWriter& w, const std::string& name, TensorType type,
                         std::vector<int64_t> dims, uint64_t seed, const std::string& cls = "");

// An F32 vector: center + spread * uniform(-1, 1).
Status add_random_vector(gguf::GgufWriter& w, const std::string& name, int64_t n, float center,
                         float spread, uint64_t seed);
// The same values in an F32 tensor of any shape (gpt-oss's per-expert bias rows).
Status add_random_vector(gguf::GgufWriter& w, const std::string& name, std::vector<int64_t> dims,
                         float center, float spread, uint64_t seed);

} // namespace pshard
