// Model shapes and machines the planner tests share.
#pragma once

#include "pshard/Planner/MachineModel.h"
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

// A machine of fixed figures: 4 threads at 100 GFLOP/s and 30 GB/s, a GPU of `vram`
// bytes at 20 TFLOP/s and 500 GB/s, 10 GB/s each way over the link.
inline FixedMachineParams fixed_gpu(uint64_t vram) {
  FixedMachineParams m;
  m.vram_bytes = vram;
  m.threads = 4;
  m.cpu_flops = 100e9;
  m.cpu_bandwidth = 30e9;
  m.gpu_flops = 20e12;
  m.gpu_bandwidth = 500e9;
  m.h2d_bandwidth = 10e9;
  m.d2h_bandwidth = 10e9;
  return m;
}

} // namespace pshard::planner::testing
