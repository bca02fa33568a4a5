// LoRA adapters (llama.cpp's --lora / --lora-scaled): a fine-tune's low-rank updates,
// W' = W + s·B·A for each weight matrix the adapter holds, merged into the model's
// weights at load, so every kernel, plan and backend runs them as the model's own.
// s = scale · alpha / rank, per matrix (scale alone when the adapter gives no alpha). The weights'
// pages of the file's mapping are written copy-on-write: the file on disk stays as it
// is, its fingerprint too (a schedule still matches: a merge changes no size). A
// quantized matrix is dequantized, updated and quantized again into its own type, so
// its rounding is that type's (llama.cpp adds B·(A·x) at run time instead: equal within
// that rounding; exact for F32 and F16 matrices up to float addition).
//
// The adapter file (convert_lora_to_gguf.py's): general.type "adapter", adapter.type
// "lora", adapter.lora.alpha, general.architecture the model's; for a matrix NAME of
// n_in × n_out, tensors NAME.lora_a (n_in × r) and NAME.lora_b (r × n_out).
//
//   LoraAdapter a{"style.gguf", 0.8f};
//   PSHARD_ASSIGN_OR_RETURN(auto model, Model::load(path, gguf::OpenMode::kMapData, {}, {&a, 1}));
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"

#include <span>
#include <string>

namespace pshard {

struct LoraAdapter {
  std::string path;
  float scale = 1.0f;
};

// Merges every adapter, in order, into `base`'s weights. Fails before changing anything
// when an adapter is no LoRA file, of another architecture, or names a matrix the model
// lacks or of another shape (each error names the file and tensor); the token embedding
// and 3-D (expert) tensors are refused as unsupported.
Status apply_lora_adapters(gguf::GgufFile& base, std::span<const LoraAdapter> adapters);

} // namespace pshard
