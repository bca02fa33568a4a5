#include "runtime/device/expert_groups.h"

namespace pshard {

void moe_expert_ffn(Ops& ops, const MoeDispatch& moe, int64_t e, int64_t m) {
  ops.matmul(moe.gate.expert(e), moe.expert_in, m, moe.gate_buf);
  ops.matmul(moe.up.expert(e), moe.expert_in, m, moe.up_buf);
  ops.silu_mul(moe.gate_buf, moe.up_buf, moe.gate_buf, m * moe.n_ff);
  ops.matmul(moe.down.expert(e), moe.gate_buf, m, moe.expert_out);
}

int64_t expert_group_rows(std::span<const ExpertRowGroup> groups) {
  int64_t rows = 0;
  for (const ExpertRowGroup& g : groups)
    rows += g.rows;
  return rows;
}

} // namespace pshard
