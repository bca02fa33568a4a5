#include "tools/pshard-profile/progress.h"

#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace pshard::profiling {

Progress::Progress(double total_units, bool enabled)
    : total_(std::max(total_units, 1e-9)), enabled_(enabled), tty_(::isatty(2) != 0),
      start_s_(now_seconds()) {}

void Progress::step(const std::string& label) {
  label_ = label;
  draw();
}

void Progress::advance(double units) {
  done_ = std::min(total_, done_ + units);
  draw();
}

void Progress::draw() {
  if (!enabled_)
    return;
  const double fraction = done_ / total_;
  const double elapsed = now_seconds() - start_s_;
  if (tty_) {
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(fraction * kWidth);
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '-');
    std::fprintf(stderr, "\r\033[K[%s] %3d%% %5.1fs  %.60s", bar.c_str(),
                 static_cast<int>(fraction * 100), elapsed, label_.c_str());
    std::fflush(stderr);
    return;
  }
  const int decile = static_cast<int>(fraction * 10);
  if (decile != last_decile_) {
    last_decile_ = decile;
    std::fprintf(stderr, "pshard-profile: %3d%% after %5.1f s  %s\n", decile * 10, elapsed,
                 label_.c_str());
  }
}

void Progress::finish() {
  done_ = total_;
  label_ = "done";
  draw();
  if (enabled_ && tty_)
    std::fprintf(stderr, "\n");
}

} // namespace pshard::profiling
