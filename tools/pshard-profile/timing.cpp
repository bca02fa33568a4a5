#include "tools/pshard-profile/timing.h"

#include <algorithm>
#include <chrono>

namespace pshard::profiling {

double now_seconds() {
  using Clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  const size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

Timing time_repeated(const std::function<void(int rep)>& fn, double budget_s, int min_reps,
                     int max_reps) {
  const double start = now_seconds();
  fn(0);
  std::vector<double> times;
  for (int rep = 1;; ++rep) {
    const double t0 = now_seconds();
    fn(rep);
    const double t1 = now_seconds();
    times.push_back(t1 - t0);
    const double elapsed = t1 - start;
    const int n = static_cast<int>(times.size());
    if (n >= max_reps || (n >= min_reps && elapsed >= budget_s) || elapsed >= 3 * budget_s)
      break;
  }
  return {median(times), static_cast<uint32_t>(times.size())};
}

// Times a Result-returning device call like time_repeated does, stopping at the first
// failure. A call returns the device seconds of one operation, which can be far less
// than the call takes (synchronizes, events, a cell's setup): the budget bounds both, so
// a cell of microsecond kernels stops when the wall clock has spent the budget, not
// after 500 calls of setup (on a GPU that made the suite several times its --budget).
Result<Timing> time_device(const std::function<Result<double>()>& call, double budget_s) {
  const double start = now_seconds();
  PSHARD_ASSIGN_OR_RETURN(double warmup, call());
  (void)warmup;
  std::vector<double> times;
  double spent = 0;
  for (;;) {
    PSHARD_ASSIGN_OR_RETURN(double s, call());
    times.push_back(s);
    spent += s;
    const double wall = now_seconds() - start;
    if (times.size() >= 3 && (spent >= budget_s || wall >= budget_s || times.size() >= 500))
      break;
    if (spent >= 3 * budget_s || wall >= 3 * budget_s)
      break;
  }
  return Timing{median(times), static_cast<uint32_t>(times.size())};
}

} // namespace pshard::profiling
