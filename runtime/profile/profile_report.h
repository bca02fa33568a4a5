// A profile as readable text tables (what `pshard-inspect machine.pshprof` prints and
// pshard-profile shows at the end of a run). GFLOP/s and GB/s (10^9) for people; the
// file itself stores FLOP/s and bytes/s.
//
//   std::cout << profile_report(profile);
#pragma once

#include "runtime/profile/profile.h"

#include <string>

namespace pshard {

std::string profile_report(const Profile& profile);

// "512 B", "4 KiB", "1.5 MiB", "16 GiB"
std::string format_bytes(double bytes);

} // namespace pshard
