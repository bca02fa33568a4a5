#include "runtime/device/expert_groups.h"

namespace pshard {

void moe_expert_ffn(Ops& ops, const MoeDispatch& moe, int64_t e, int64_t m) {
  const int64_t ff = moe.n_ff, d = moe.n_embd;
  ops.matmul(moe.gate.expert(e), moe.expert_in, m, moe.gate_buf);
  ops.matmul(moe.up.expert(e), moe.expert_in, m, moe.up_buf);
  if (moe.gate_bias) { // gpt-oss: every expert matrix has its own bias row
    ops.add_bias(moe.gate_buf, moe.gate_bias + e * ff, m, ff);
    ops.add_bias(moe.up_buf, moe.up_bias + e * ff, m, ff);
  }
  gated_activation(ops, moe.activation, moe.gate_buf, moe.up_buf, moe.gate_buf, m * ff);
  ops.matmul(moe.down.expert(e), moe.gate_buf, m, moe.expert_out);
  if (moe.down_bias)
    ops.add_bias(moe.expert_out, moe.down_bias + e * d, m, d);
}

int64_t expert_group_rows(std::span<const ExpertRowGroup> groups) {
  int64_t rows = 0;
  for (const ExpertRowGroup& g : groups)
    rows += g.rows;
  return rows;
}

} // namespace pshard
