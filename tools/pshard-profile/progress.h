// A progress bar on stderr. On a terminal it redraws one line; otherwise (a log, a test)
// it prints a line every 10% so the output stays short.
//
//   Progress bar(total_units, /*enabled=*/!quiet);
//   bar.step("cpu matmul q4_0 16 MiB n=4 thr=2");  // before a measurement
//   bar.advance(1);                                // after it
//   bar.finish();
#pragma once

#include <string>

namespace pshard::profiling {

class Progress {
public:
  Progress(double total_units, bool enabled);
  void step(const std::string& label);
  void advance(double units);
  void finish();

private:
  void draw();

  double total_;
  double done_ = 0;
  bool enabled_;
  bool tty_;
  double start_s_;
  int last_decile_ = -1;
  std::string label_;
};

} // namespace pshard::profiling
