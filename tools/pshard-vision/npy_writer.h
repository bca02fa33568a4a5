// Writes float32 arrays as NumPy .npy files (format version 1.0: the magic "\x93NUMPY",
// version bytes 1 0, a little-endian u16 header length, an ASCII dict
// {'descr': '<f4', 'fortran_order': False, 'shape': (...), } padded with spaces to a
// multiple of 64 bytes and ended by '\n', then the values in C order), to a temporary
// name renamed into place.
//
//   PSHARD_RETURN_IF_ERROR(write_npy("embd.npy", values, {rows, cols}));
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

Status write_npy(const std::string& path, const std::vector<float>& values,
                 const std::vector<int64_t>& shape);

} // namespace pshard
