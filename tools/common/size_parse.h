// Sizes on pshard command lines: "512", "4K", "1.5G", "2GiB" (powers of 1024).
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <string_view>

namespace pshard {

Result<uint64_t> parse_size(std::string_view text);

} // namespace pshard
