// The sessions behind pshard-run's image prompts: without a schedule, a CPU session and
// the image encoded on the host; with one (-s), a hybrid session on the chosen backend
// and the image encoded by the schedule's vision phase (runtime/executor/vision_phase.h)
// under the same budget — the language arena released first, so the two phases share
// the device memory in time and the peak is the larger phase's.
//
//   PSHARD_ASSIGN_OR_RETURN(ImageSession s, open_image_session(o));
//   PSHARD_ASSIGN_OR_RETURN(EncodedImage img, encode_image_file(o, s));
//   ImagePromptDecoder d(*s.decoder, std::move(img.embeddings), image_pos);
#pragma once

#include "runtime/device/device.h"
#include "runtime/executor/hybrid_session.h"
#include "runtime/executor/vision_phase.h"
#include "runtime/model/model.h"
#include "tools/common/json_writer.h"
#include "tools/pshard-run/run_options.h"

#include <memory>
#include <optional>
#include <ostream>

namespace pshard {

struct ImageSession {
  std::unique_ptr<Model> model;
  std::unique_ptr<Schedule> schedule; // -s; null: the CPU session
  std::unique_ptr<Device> device;     // null on the cpu backend
  std::unique_ptr<CpuSession> cpu;
  std::unique_ptr<HybridSession> hybrid;
  MultimodalDecoder* decoder = nullptr; // cpu or hybrid
  std::unique_ptr<ThreadPool> pool;     // the vision encoder's
  std::string backend;                  // as resolved
};

Result<ImageSession> open_image_session(const RunOptions& o);

struct EncodedImage {
  ImageEmbeddings embeddings;
  int64_t width = 0, height = 0, input_width = 0, input_height = 0;
  int64_t position = 0; // of the first image token in the prompt
  double ms = 0;
  std::optional<VisionPhaseStats> phase; // with a schedule
};

Result<EncodedImage> encode_image_file(const RunOptions& o, ImageSession& s);

// The vision phase and the language plans after generation (--stats style, to `err`),
// and as JSON keys inside an object the caller opened.
void write_image_session_stats(std::ostream& err, const ImageSession& s, const EncodedImage& img);
void write_image_session_json(JsonWriter& j, const ImageSession& s, const EncodedImage& img);
// The device's measured high-water mark (emu), else the larger phase's arena.
uint64_t image_session_peak_bytes(const ImageSession& s, const EncodedImage& img);

} // namespace pshard
