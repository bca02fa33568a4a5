// The tensors of a Qwen-VL projector file, per vision sub-layer — the one description
// that the runtime binds (projector.cpp) and pshard-mkmodel writes, and that a planner
// can price: the vision tower is cut like the language model, into units a plan could
// place (resident, streamed, CPU) one by one:
//
//   v.patch          v.patch_embd.weight, v.patch_embd.weight.1   [p, p, 3, C] each
//                    (the two temporal halves of the 3D patch kernel)
//   v.attn[i]        v.blk.i.ln1.{weight,bias*}  [C]
//                    v.blk.i.attn_{q,k,v,out}.{weight [C, C], bias [C]}
//   v.ffn[i]         v.blk.i.ln2.{weight,bias*}  [C]
//                    v.blk.i.ffn_gate.{weight [C, F], bias [F]}   (qwen2.5vl only)
//                    v.blk.i.ffn_up.{weight [C, F], bias [F]}
//                    v.blk.i.ffn_down.{weight [F, C], bias [C]}
//   v.merger         v.post_ln.{weight,bias*} [C]
//                    mm.0.{weight [4C, 4C], bias [4C]}, mm.2.{weight [4C, P], bias [P]}
//   * LayerNorm biases: qwen2vl_merger only (qwen2.5vl_merger uses RMSNorm).
//
// qwen3vl_merger differs in three sub-layers:
//   v.patch          + v.patch_embd.bias [C], v.position_embd.weight [C, side²] (a table)
//   v.attn[i]        v.blk.i.attn_qkv.{weight [C, 3C], bias [3C]} for attn_{q,k,v}
//   v.ffn[i]         no ffn_gate; a DeepStack block adds its merger (over image tokens):
//                    v.deepstack.i.norm.{weight,bias} [4C],
//                    v.deepstack.i.fc1.{weight [4C, 4C], bias}, .fc2.{weight [4C, P], bias}
//
//   for (const VisionSubLayer& s : vision_sublayers(hp))
//     for (const VisionTensorSpec& t : vision_tensor_specs(hp, s)) ...
#pragma once

#include "runtime/vision/projector_hparams.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

enum class VisionSubLayerKind : uint8_t { kPatchEmbed, kAttention, kFfn, kMerger };

struct VisionSubLayer {
  VisionSubLayerKind kind = VisionSubLayerKind::kPatchEmbed;
  int64_t block = -1; // attention and FFN: the block index
  std::string name;   // "v.patch", "v.attn[3]", "v.ffn[3]", "v.merger"
};

struct VisionTensorSpec {
  std::string name;
  std::vector<int64_t> dims; // GGUF order: dims[0] is the row (input) length
  bool matrix = false;       // multiplied with activations; else a norm weight or bias
  bool bias = false;
  bool table = false;  // rows read, not multiplied (the position table)
  bool merged = false; // a matrix run over image tokens (4 patches), not patches
};

// v.patch, then per block v.attn[i], v.ffn[i], then v.merger.
std::vector<VisionSubLayer> vision_sublayers(const ProjectorHParams& hp);
std::vector<VisionTensorSpec> vision_tensor_specs(const ProjectorHParams& hp,
                                                  const VisionSubLayer& s);

} // namespace pshard
