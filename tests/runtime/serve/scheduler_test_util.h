// What the scheduler tests share: requests, an event collector, stepping to idle.
#pragma once

#include "runtime/serve/scheduler.h"

#include <gtest/gtest.h>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace pshard::testing {

inline RequestParams greedy_request(std::vector<TokenId> prompt, int32_t max_tokens) {
  RequestParams r;
  r.prompt = std::move(prompt);
  r.sampling.temperature = 0;
  r.max_tokens = max_tokens;
  return r;
}

// Every event of every request, from any thread.
class Collector {
public:
  struct Run {
    std::vector<TokenId> tokens;
    std::string text;
    std::vector<SequenceEvent> events;
    int finals = 0;
    FinishReason finish = FinishReason::kNone;
    Status error;
  };

  EventSink sink() {
    return [this](const SequenceEvent& e) {
      std::lock_guard lock(mutex_);
      Run& r = runs_[e.id];
      if (e.token != kNoToken)
        r.tokens.push_back(e.token);
      r.text += e.text;
      r.events.push_back(e);
      if (e.finish != FinishReason::kNone) {
        ++r.finals;
        r.finish = e.finish;
        r.error = e.error;
      }
      return true;
    };
  }
  Run run(RequestId id) const {
    std::lock_guard lock(mutex_);
    auto it = runs_.find(id);
    return it == runs_.end() ? Run{} : it->second;
  }
  size_t finished() const {
    std::lock_guard lock(mutex_);
    size_t n = 0;
    for (const auto& [id, r] : runs_)
      n += r.finals > 0;
    return n;
  }

private:
  mutable std::mutex mutex_;
  std::map<RequestId, Run> runs_;
};

// Steps until nothing is left to do; fails the test past `max_steps`.
inline int step_until_idle(Scheduler& s, int max_steps = 10000) {
  int steps = 0;
  while (s.wait_for_work(std::chrono::milliseconds(0))) {
    s.step();
    if (++steps > max_steps) {
      ADD_FAILURE() << "the scheduler did not go idle in " << max_steps << " steps";
      break;
    }
  }
  return steps;
}

inline RequestId submit_ok(Scheduler& s, RequestParams r, EventSink sink) {
  auto id = s.submit(std::move(r), std::move(sink));
  EXPECT_TRUE(id.ok()) << id.status().to_string();
  return id.ok() ? *id : -1;
}

} // namespace pshard::testing
