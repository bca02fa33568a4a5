// Routed experts run over rows already gathered per expert: the one expert FFN every
// backend shares (moe_expert_ffn), and the groups a split MoE pass hands a device
// (Device::run_expert_groups) — the device's experts of one pass, in ascending expert
// order, each over the rows of the tokens routed to it.
//
//   std::vector<ExpertRowGroup> groups = {{3, 2}, {17, 1}};   // expert 3: rows 0-1, 17: row 2
//   device.run_expert_groups(on_device, groups, host_rows, host_out);
#pragma once

#include "runtime/device/ops.h"

#include <cstdint>
#include <span>

namespace pshard {

// Expert e's gated FFN (its biases and activation as moe says) on `m` gathered rows already in
// moe.expert_in, into moe.expert_out (m x n_embd), on whichever Ops holds the expert's weights.
void moe_expert_ffn(Ops& ops, const MoeDispatch& moe, int64_t e, int64_t m);

// One expert of a split pass and how many consecutive rows (tokens routed to it) it takes.
struct ExpertRowGroup {
  int32_t expert = 0;
  int64_t rows = 0;
};

// The rows all groups take together.
int64_t expert_group_rows(std::span<const ExpertRowGroup> groups);

} // namespace pshard
