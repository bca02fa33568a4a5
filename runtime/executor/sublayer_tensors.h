// The bridge between a schedule's sub-layer table (tensors by GGUF name, file offset
// and size) and the model's weights in the mapping: which bytes to upload for a
// sub-layer, how to pack them into a streaming slot, and how to turn the sub-layer's
// weight views (pointers into the mapping) into views of wherever the device holds
// those bytes.
//
//   PSHARD_ASSIGN_OR_RETURN(auto tables, bind_sublayer_tensors(schedule, model));
//   PSHARD_ASSIGN_OR_RETURN(SlotPacking pack, pack_slot(tables[i], plan.stream_slot_bytes));
//   PSHARD_ASSIGN_OR_RETURN(SubLayerWeights dev,
//       rebase_weights(model.sublayers()[i], host_weights, tables[i], device_bases));
#pragma once

#include "runtime/core/status.h"
#include "runtime/model/model.h"
#include "runtime/schedule/schedule_file.h"

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace pshard {

// One GGUF tensor of a sub-layer, where the model maps it.
struct TensorBytes {
  std::string name;
  const uint8_t* host = nullptr;
  uint64_t bytes = 0;
  TensorType type = TensorType::kF32;
  bool experts = false; // a 3-D expert tensor (ffn_*_exps)
  int64_t n_expert = 1;
};

// A sub-layer's tensors in the schedule's order (VramBuffer::index refers to it).
struct SubLayerTensors {
  std::vector<TensorBytes> tensors;
  uint64_t bytes() const;
};

// Checks that the schedule's sub-layers are the model's (names, kinds, and every
// tensor's file offset and size) and binds each tensor to its bytes in the mapping.
Result<std::vector<SubLayerTensors>> bind_sublayer_tensors(const Schedule& schedule,
                                                           const Model& model);

// Where each piece goes in a streaming slot: F32 tensors first so every float stays
// 4-byte aligned, then the rest, each piece at the widest alignment (256 down to 2
// bytes) for which everything still fits the slot. kOutOfMemory when it does not.
struct SlotPiece {
  const uint8_t* host = nullptr;
  uint64_t bytes = 0;
  uint64_t offset = 0; // in the slot
  int tensor = -1;     // index in SubLayerTensors
  int64_t expert = -1; // for a slice of an expert tensor
};
struct SlotPacking {
  std::vector<SlotPiece> pieces;
  uint64_t bytes = 0; // end of the last piece
};
Result<SlotPacking> pack_slot(const SubLayerTensors& t, uint64_t slot_bytes,
                              const std::string& sublayer_name);
// A MoE sub-layer's shared tensors (norm, router) and only the given experts' slices.
Result<SlotPacking> pack_experts(const SubLayerTensors& t, std::span<const int64_t> experts,
                                 uint64_t slot_bytes, const std::string& sublayer_name);

// `host` with every pointer into tensor j's bytes moved to device_base[j] + the same
// offset. For a MoE packed with pack_experts, `placed_experts` lists each expert's
// device address per expert tensor (gate, up, down order of MoeWeights) — null for
// experts not packed; empty otherwise. kUnsupported when a weight is not in the
// mapping (a norm vector the model converted to F32 on the host).
Result<SubLayerWeights> rebase_weights(const SubLayer& s, const SubLayerWeights& host,
                                       const SubLayerTensors& t,
                                       std::span<uint8_t* const> device_base);
// Device addresses of the experts in a pack_experts packing at `slot`.
void place_experts(const SubLayerTensors& t, const SlotPacking& pack, uint8_t* slot,
                   const MoeWeights& host, MoeWeights* device);

} // namespace pshard
