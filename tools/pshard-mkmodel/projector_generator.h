// Synthetic vision projector files (llama.cpp's mmproj GGUF layout) for the Qwen2-VL
// family, with deterministic random weights: the tensors are exactly the runtime's
// projector layout (runtime/vision/projector_layout.h) and the metadata every key its
// reader needs, so tests and benchmarks can run vision models of any shape.
//
//   ProjectorSpec p;
//   p.type = ProjectorType::kQwen25Vl; p.n_embd = 64; p.n_layer = 4; p.projection_dim = 96;
//   PSHARD_RETURN_IF_ERROR(write_projector(p, "mmproj.gguf"));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tensor/tensor_type.h"
#include "runtime/vision/projector_hparams.h"

#include <cstdint>
#include <string>

namespace pshard {

struct ProjectorSpec {
  ProjectorType type = ProjectorType::kQwen25Vl;
  int64_t n_embd = 64; // the vision tower's width (C)
  int64_t n_ff = 128;
  int64_t n_layer = 4;
  int64_t n_head = 4;
  int64_t patch_size = 14;
  int64_t image_size = 448;                    // cap on an image's longer side
  int64_t projection_dim = 64;                 // the language model's n_embd
  int64_t n_wa_pattern = 2;                    // qwen2.5vl: every 2nd block attends fully (0: all)
  int64_t window_size = 56;                    // pixels per window side (Qwen2.5-VL: 112)
  TensorType type_matrices = TensorType::kF32; // matrices; the patch kernel F16 or F32 too
  uint64_t seed = 7;
  bool sparse = false;
};

Status write_projector(const ProjectorSpec& spec, const std::string& path);

} // namespace pshard
