// Which passes may run as one device graph (Device::begin_graph / end_graph): those
// whose device work stays on the compute queue from the embedding to the head, so that
// nothing between the token ids' upload and the logits' download needs the host.
//
//   if (!graph_unfit_pass(ctx) && device.begin_graph(graph_key(ctx), n_tokens))
//     ...the pass's sub-layers, compute() ops only...; device.end_graph(true);
//
// A plan fits when every sub-layer is resident on the device: nothing streamed (copies
// and their events), no CPU sub-layer (the hidden state would cross), no MoE block
// placed expert by expert (routed on the host, experts copied per pass). A resident
// whole MoE block fits: it routes on the device and, stored as one tensor, needs no
// expert table, so the grouped dispatch (cuda_moe.cpp) uploads nothing during the pass.
// A pass of a fitting plan fits when it is one sequence (no batch page tables, no
// chosen logit rows), text only (no image rows, no M-RoPE positions, which are host
// memory), untraced (a trace times every sub-layer with events) and at most
// kGraphMaxTokens tokens: the decode tiers, where launches cost more than the kernels.
#pragma once

#include "runtime/executor/pass_runner.h"

#include <cstdint>
#include <span>

namespace pshard {

// Passes of more tokens run as they come: their kernels are long enough that launch
// overhead does not matter, and prefill GEMMs go through cuBLASLt.
inline constexpr int64_t kGraphMaxTokens = 8;

// Why no pass of `plan` can be a graph, or null when its passes may be.
const char* graph_unfit_plan(const PlanRuntime& plan, std::span<const SubLayer> sublayers);
// Why this pass cannot be a graph (graph_unfit_plan's reasons included), or null.
const char* graph_unfit_pass(const PassContext& ctx);
// Names the plan and the pass's shape (token count, logits or not, the arena): what
// makes two passes launch the same kernels in the same order.
uint64_t graph_key(const PassContext& ctx);

} // namespace pshard
