// Timing one operation: a warm-up run, then repetitions until both a minimum count and
// the time budget are reached, reporting the median (robust to a preempted run on a
// shared machine, which a mean is not).
//
//   Timing t = time_repeated([&](int rep) { matmul(...); }, /*budget_s=*/0.3);
//   double flops = work / t.seconds;
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace pshard::profiling {

struct Timing {
  double seconds = 0;       // median of the timed repetitions
  uint32_t repetitions = 0; // timed repetitions (the warm-up is not counted)
};

// Monotonic seconds.
double now_seconds();

double median(std::vector<double> values);

// fn(rep) runs the operation once; rep = 0 is the warm-up, then 1, 2, … so a caller can
// rotate through buffers. Stops after min_reps once the budget (warm-up included) is
// spent, at max_reps, or — for an operation much slower than the budget — after one
// timed run past three budgets.
Timing time_repeated(const std::function<void(int rep)>& fn, double budget_s, int min_reps = 3,
                     int max_reps = 500);

// As time_repeated, for a call that times itself and may fail (a device measurement):
// the warm-up's result is dropped, the first failure returned.
Result<Timing> time_device(const std::function<Result<double>()>& call, double budget_s);

} // namespace pshard::profiling
