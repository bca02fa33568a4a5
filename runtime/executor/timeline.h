// A Chrome / Perfetto trace of a session: one track each for the CPU, the device's
// compute queue, its weight-copy queue and its activation-transfer queue; every
// sub-layer, copy and crossing is a slice. Open the file at ui.perfetto.dev or
// chrome://tracing to see copies running under CPU sub-layers.
//
//   Timeline t;
//   t.add(Track::kCpu, "ffn[3]", begin_ns, end_ns);
//   PSHARD_RETURN_IF_ERROR(t.write_json("trace.json"));
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

enum class Track : uint8_t { kCpu = 0, kCompute = 1, kCopy = 2, kTransfer = 3 };

struct Slice {
  Track track;
  std::string name;
  int64_t begin_ns; // steady_clock
  int64_t end_ns;
  uint64_t bytes = 0; // copies: bytes moved
  int64_t pass = 0;
};

class Timeline {
public:
  void add(Track track, std::string name, int64_t begin_ns, int64_t end_ns, uint64_t bytes = 0);
  void set_pass(int64_t pass) { pass_ = pass; }
  const std::vector<Slice>& slices() const { return slices_; }
  void clear() { slices_.clear(); }
  // Chrome trace event format (JSON), times relative to the first slice.
  Status write_json(const std::string& path) const;

private:
  std::vector<Slice> slices_;
  int64_t pass_ = 0;
};

} // namespace pshard
