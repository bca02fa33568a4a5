// Model shapes the planner tests share.
#pragma once

#include "runtime/model/hparams.h"

namespace pshard::planner::testing {

// A 1B-shaped Llama (16 layers, n_embd 2048, 32/8 heads, FFN 8192, 32000-token vocab).
inline ModelHParams llama1b_shape() {
  ModelHParams hp;
  hp.name = "1b-shape";
  hp.n_vocab = 32000;
  hp.n_embd = 2048;
  hp.n_layer = 16;
  hp.n_head = 32;
  hp.n_head_kv = 8;
  hp.head_dim = 64;
  hp.n_ff = 8192;
  return hp;
}

} // namespace pshard::planner::testing
