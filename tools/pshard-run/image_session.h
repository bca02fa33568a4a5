// The sessions behind pshard-run's image prompts: without a schedule, a CPU session and
// the image encoded on the host; with one (-s), a hybrid session on the chosen backend
// and the image encoded by the schedule's vision phase (runtime/executor/vision_phase.h)
// under the same budget — the language arena released first, so the two phases share
// the device memory in time and the peak is the largest phase's. Images are encoded one
// after another, each by its own vision phase.
//
//   PSHARD_ASSIGN_OR_RETURN(ImageSession s, open_image_session(o));
//   PSHARD_ASSIGN_OR_RETURN(std::vector<EncodedImage> imgs, encode_image_files(o, s));
//   ImagePromptDecoder d(*s.decoder, std::move(embeddings), image_pos);
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
#include <span>
#include <vector>

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

// o.image_paths in order.
Result<std::vector<EncodedImage>> encode_image_files(const RunOptions& o, ImageSession& s);

// Each image's line (grid, tokens, encoding time) and vision phase, the language plans
// after generation and the peak (--stats style, to `err`); and as JSON keys inside an
// object the caller opened: "images" (each with its "vision_phase" under a schedule),
// "language_phase" and "peak_device_bytes".
void write_image_session_stats(std::ostream& err, const ImageSession& s,
                               std::span<const EncodedImage> imgs);
void write_image_session_json(JsonWriter& j, const ImageSession& s,
                              std::span<const EncodedImage> imgs);
// The device's measured high-water mark (emu), else the largest phase's arena.
uint64_t image_session_peak_bytes(const ImageSession& s, std::span<const EncodedImage> imgs);

} // namespace pshard
