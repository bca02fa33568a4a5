#include "runtime/executor/timeline.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace pshard {
namespace {

const char* track_name(Track t) {
  switch (t) {
  case Track::kCpu:
    return "CPU";
  case Track::kCompute:
    return "device compute";
  case Track::kCopy:
    return "device copy (weights)";
  case Track::kTransfer:
    return "device transfer (activations)";
  }
  return "?";
}

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

} // namespace

void Timeline::add(Track track, std::string name, int64_t begin_ns, int64_t end_ns,
                   uint64_t bytes) {
  slices_.push_back({track, std::move(name), begin_ns, std::max(end_ns, begin_ns), bytes, pass_});
}

Status Timeline::write_json(const std::string& path) const {
  std::ofstream out(path, std::ios::binary);
  if (!out)
    return io_error("cannot write the trace to '" + path + "'");
  int64_t t0 = slices_.empty() ? 0 : slices_.front().begin_ns;
  for (const Slice& s : slices_)
    t0 = std::min(t0, s.begin_ns);
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (int t = 0; t < 4; ++t)
    out << "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << t
        << ",\"args\":{\"name\":\"" << track_name(static_cast<Track>(t)) << "\"}},\n"
        << "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":" << t
        << ",\"args\":{\"sort_index\":" << t << "}},\n";
  out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"pshard\"}}";
  char buf[64];
  for (const Slice& s : slices_) {
    out << ",\n{\"name\":\"" << escape(s.name)
        << "\",\"ph\":\"X\",\"pid\":1,\"tid\":" << static_cast<int>(s.track);
    std::snprintf(buf, sizeof buf, ",\"ts\":%.3f,\"dur\":%.3f", (s.begin_ns - t0) / 1e3,
                  (s.end_ns - s.begin_ns) / 1e3);
    out << buf << ",\"args\":{\"pass\":" << s.pass;
    if (s.bytes)
      out << ",\"bytes\":" << s.bytes;
    out << "}}";
  }
  out << "\n]}\n";
  if (!out)
    return io_error("failed writing the trace to '" + path + "'");
  return Status::ok_status();
}

} // namespace pshard
