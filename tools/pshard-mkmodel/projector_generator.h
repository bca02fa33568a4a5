// Synthetic vision projector files (llama.cpp's mmproj GGUF layout) for the Qwen2-VL
// family (Qwen2-VL, Qwen2.5-VL, Qwen3-VL), with deterministic random weights: the tensors are
// exactly the runtime's projector layout (runtime/vision/projector_layout.h) and the metadata every
// key its reader needs, so tests and benchmarks can run vision models of any shape.
//
//   ProjectorSpec p;
//   p.hp.type = ProjectorType::kQwen25Vl; p.hp.n_layer = 4; p.hp.projection_dim = 96;
//   PSHARD_RETURN_IF_ERROR(write_projector(p, "mmproj.gguf"));
#pragma once

#include "runtime/core/status.h"
#include "runtime/tensor/tensor_type.h"
#include "runtime/vision/projector_hparams.h"

#include <cstdint>
#include <string>

namespace pshard {

// A small tower: 64 wide, 4 heads, FFN 128, 4 blocks, 14-pixel patches, a 448-pixel cap,
// 56-pixel windows with full attention every 2nd block (Qwen2.5-VL: 112 and every 8th).
ProjectorHParams small_projector_hparams();

struct ProjectorSpec {
  // The activation follows the type (qwen2.5vl: SiLU, qwen2vl: quick GELU, qwen3vl: GELU
  // tanh), and only a qwen2.5vl_merger projector has windows whatever n_wa_pattern says.
  // qwen3vl: the position table is (image_size / patch_size)² entries, and hp.deepstack
  // names the DeepStack blocks.
  ProjectorHParams hp = small_projector_hparams();
  TensorType type_matrices = TensorType::kF32; // matrices; the patch kernel F16 or F32 too
  uint64_t seed = 7;
  bool sparse = false;
};

Status write_projector(const ProjectorSpec& spec, const std::string& path);

} // namespace pshard
