// RUN: pshard-opt %s --split-input-file | pshard-opt --split-input-file | FileCheck %s

// Round trip of the pshard ops: what is printed parses back to the same document.

// A dense model: embed, one (attn, ffn) layer, head; byte counts print as plain numbers.
// CHECK-LABEL: pshard.model @dense fingerprint "000102030405060708090a0b0c0d0e0f" size 16384 context 256 kv f16
// CHECK-SAME:    hparams {arch = "llama", head_dim = 16, n_embd = 32,
// CHECK:         pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
// CHECK-NEXT:      pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
// CHECK:         pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 64 weights {f32 = 128, q8_0 = 2176}
// CHECK:           pshard.matmul q8_0 32 x 32 bytes 1088 count 2 of 2
// CHECK:         pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 4352} flops 8192 bytes 4352 {
// CHECK:         pshard.head "head" weights {q8_0 = 2176} flops 4096 bytes 2176 {
// CHECK:           pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1 last_token
pshard.model @dense fingerprint "000102030405060708090a0b0c0d0e0f" size 16384 context 256 kv f16 hparams {arch = "llama", name = "dense", n_vocab = 64, n_embd = 32, n_layer = 1, n_ff = 64, n_head = 2, n_head_kv = 1, head_dim = 16} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 64 weights {q8_0 = 2176, f32 = 128} flops 36864 bytes 18752 {
    pshard.tensor "blk.0.attn_norm.weight" f32 [32] offset 6272 bytes 128
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 6400 bytes 1088
    pshard.tensor "blk.0.attn_output.weight" q8_0 [32, 32] offset 7488 bytes 1088
    pshard.matmul q8_0 32 x 32 bytes 1088 count 2 of 2
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 4352} flops 8192 bytes 4352 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 8576 bytes 2176
    pshard.tensor "blk.0.ffn_down.weight" q8_0 [64, 32] offset 10752 bytes 2176
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1
    pshard.matmul q8_0 32 x 64 bytes 2176 count 1 of 1
  }
  pshard.head "head" weights {q8_0 = 2176} flops 4096 bytes 2176 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 12928 bytes 2176
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1 last_token
  }
}

// -----

// A mixture-of-experts layer, and a tied output: the head lists the embedding's tensor.
// CHECK-LABEL: pshard.model @moe
// CHECK:         pshard.moe "moe[0]" layer 0 experts 2 of 8 expert_bytes 4352 shared_bytes 1024 weights {f32 = 1024, q8_0 = 34816}
// CHECK:           pshard.matmul q8_0 64 x 32 bytes 2176 count 2 of 8 gate_up
// CHECK-NEXT:      pshard.matmul q8_0 32 x 64 bytes 2176 count 2 of 8{{$}}
// CHECK:         pshard.head "head"
// CHECK-NEXT:      pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
pshard.model @moe fingerprint "000102030405060708090a0b0c0d0e0f" size 65536 context 256 kv f32 hparams {n_layer = 1} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 6272 bytes 1088
    pshard.matmul q8_0 32 x 32 bytes 1088 count 1 of 1
  }
  pshard.moe "moe[0]" layer 0 experts 2 of 8 expert_bytes 4352 shared_bytes 1024 weights {f32 = 1024, q8_0 = 34816} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_gate_inp.weight" f32 [32, 8] offset 7360 bytes 1024
    pshard.tensor "blk.0.ffn_up_exps.weight" q8_0 [32, 64, 8] offset 8384 bytes 17408
    pshard.tensor "blk.0.ffn_down_exps.weight" q8_0 [64, 32, 8] offset 25792 bytes 17408
    pshard.matmul f32 8 x 32 bytes 1024 count 1 of 1
    pshard.matmul q8_0 64 x 32 bytes 2176 count 2 of 8 gate_up
    pshard.matmul q8_0 32 x 64 bytes 2176 count 2 of 8
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1 last_token
  }
}

// -----

// A schedule: per-(context, tier) costs, a budget with its resident set, a laid-out plan,
// a switch and a trade.
// CHECK-LABEL: pshard.schedule @s_plans for @s machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
// CHECK-NEXT:    pshard.tier 1 context 256 h2d_hidden_ns 11 d2h_hidden_ns 11 d2h_logits_ns 21 h2d_tokens_ns 0 {
// CHECK-NEXT:      pshard.cost "embed" cpu_ns 3 cpu_loaded_ns 3 gpu_ns 1 copy_ns 3 copy_loaded_ns 3 stream_bytes 34 slot_bytes 34
// CHECK:           pshard.cost "attn[0]" {{.*}} copy_needs_input
// CHECK:         pshard.budget 65536 context 256 {
// CHECK-NEXT:       pshard.resident_set 0 ["attn[0]"]
// CHECK-NEXT:      pshard.plan tier 1 set 0 dynamic placements "CRSC" order [2] prefetch 1 slots 1 x 1280 threads 8 time_ns 600 start_time_ns 0 busy_ns [100, 200, 300] vram 1280 selected {
// CHECK-NEXT:        pshard.buffer weights of "attn[0]" index 0 at 0 size 1088
// CHECK-NEXT:        pshard.buffer stream_slot index 0 at 1088 size 192
// CHECK-NEXT:      }
// CHECK-NEXT:      pshard.switch tier 1 -> 1 context 256 -> 256 upload 1088 evict 0 kv_up 64 kv_down 64 positions 0 time_ns 90
// CHECK-NEXT:      pshard.trade tier 1 auto_ns 600 forced static forced_ns 550 own_ns 540 workload_ns 9000 own_workload_ns 9100
pshard.model @s fingerprint "000102030405060708090a0b0c0d0e0f" size 16384 context 256 kv f16 hparams {n_layer = 1} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 64 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 6272 bytes 1088
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 8576 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 12928 bytes 2176
  }
}
pshard.schedule @s_plans for @s machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 256 h2d_hidden_ns 11 d2h_hidden_ns 11 d2h_logits_ns 21 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 3 cpu_loaded_ns 3 gpu_ns 1 copy_ns 3 copy_loaded_ns 3 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 372 cpu_loaded_ns 372 gpu_ns 74 copy_ns 1552 copy_loaded_ns 1552 stream_bytes 1088 slot_bytes 1088 copy_needs_input
    pshard.cost "ffn[0]" cpu_ns 87 cpu_loaded_ns 87 gpu_ns 17 copy_ns 363 copy_loaded_ns 363 stream_bytes 2176 slot_bytes 2176
    pshard.cost "head" cpu_ns 44 cpu_loaded_ns 44 gpu_ns 9 copy_ns 181 copy_loaded_ns 181 stream_bytes 2176 slot_bytes 2176
  }
  pshard.budget 65536 context 256 {
    pshard.resident_set 0 ["attn[0]"]
    pshard.plan tier 1 set 0 dynamic placements "CRSC" order [2] prefetch 1 slots 1 x 1280 threads 8 time_ns 600 start_time_ns 0 busy_ns [100, 200, 300] vram 1280 selected {
      pshard.buffer weights of "attn[0]" index 0 at 0 size 1088
      pshard.buffer stream_slot index 0 at 1088 size 192
    }
    pshard.switch tier 1 -> 1 context 256 -> 256 upload 1088 evict 0 kv_up 64 kv_down 64 positions 0 time_ns 90
    pshard.trade tier 1 auto_ns 600 forced static forced_ns 550 own_ns 540 workload_ns 9000 own_workload_ns 9100
  }
}
