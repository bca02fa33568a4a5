// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-select-plans | FileCheck %s
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-select-plans=keep-candidates=true | FileCheck %s --check-prefix=KEEP

// pshard-select-plans: the fastest plan of each (budget, tier) is marked selected and
// the others dropped; a tie goes to the earlier plan (a fixed strategy before a search
// result); the choice is named by what it does.

// Tier 1: the search result (630 ns) beats Dynamic (770) and Static (1710). Tier 16:
// Static and the search tie at 900 ns, and Static comes first.
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.budget 40000 resident ["attn[0]"] {
// CHECK-NEXT:      pshard.plan tier 1 search placements "CRSS" {{.*}} time_ns 630 {{.*}} selected {
// CHECK-NEXT:      }
// CHECK-NEXT:      pshard.plan tier 16 static placements "CRCC" {{.*}} time_ns 900 {{.*}} selected {
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// keep-candidates keeps the rest, unselected.
// KEEP-LABEL:  pshard.schedule @tiny_plans
// KEEP:          pshard.plan tier 1 static placements "CRCC" {{.*}} vram 0 {
// KEEP:          pshard.plan tier 1 dynamic placements "CRSC" {{.*}} vram 0 {
// KEEP:          pshard.plan tier 1 search placements "CRSS" {{.*}} selected {
// KEEP:          pshard.plan tier 16 static placements "CRCC" {{.*}} selected {
// KEEP:          pshard.plan tier 16 search placements "CRSC" {{.*}} vram 0 {
// KEEP:          pshard.plan tier 16 dynamic placements "SRSS" {{.*}} vram 0 {
pshard.model @tiny fingerprint "000102030405060708090a0b0c0d0e0f" size 16384 context 256 kv f16 hparams {arch = "llama", name = "tiny", n_vocab = 64, n_embd = 32, n_layer = 1, n_ff = 64, n_head = 2, n_head_kv = 1, head_dim = 16} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 64 weights {q8_0 = 2176} flops 36864 bytes 18624 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 6272 bytes 1088
    pshard.tensor "blk.0.attn_output.weight" q8_0 [32, 32] offset 7360 bytes 1088
    pshard.matmul q8_0 32 x 32 bytes 1088 count 2 of 2
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 4352} flops 8192 bytes 4352 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 8448 bytes 2176
    pshard.tensor "blk.0.ffn_down.weight" q8_0 [64, 32] offset 10624 bytes 2176
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1
    pshard.matmul q8_0 32 x 64 bytes 2176 count 1 of 1
  }
  pshard.head "head" weights {q8_0 = 2176} flops 4096 bytes 2176 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 12800 bytes 2176
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1 last_token
  }
}
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1, 16] {
  pshard.budget 40000 resident ["attn[0]"] {
    pshard.plan tier 1 static placements "CRCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 1710 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 1 dynamic placements "CRSC" order [2] prefetch 1 slots 1 x 4352 threads 8 time_ns 770 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 1 search placements "CRSS" order [2, 3] prefetch 2 slots 2 x 4352 threads 8 time_ns 630 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 16 static placements "CRCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 900 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 16 search placements "CRSC" order [2] prefetch 1 slots 1 x 4352 threads 8 time_ns 900 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 16 dynamic placements "SRSS" order [0, 2, 3] prefetch 2 slots 2 x 4352 threads 8 time_ns 950 busy_ns [0, 0, 0] vram 0 {
    }
  }
}

// -----

// A plan that puts nothing on the CPU is named gpu_only whatever built it; CPU-only
// plans of budget 0 keep their name.
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.plan tier 1 cpu_only placements "CCCC" {{.*}} selected
// CHECK:         pshard.plan tier 1 gpu_only placements "SRSS" {{.*}} selected
pshard.model @tiny fingerprint "000102030405060708090a0b0c0d0e0f" size 16384 context 256 kv f16 hparams {arch = "llama", name = "tiny", n_vocab = 64, n_embd = 32, n_layer = 1, n_ff = 64, n_head = 2, n_head_kv = 1, head_dim = 16} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 4096 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 64 weights {q8_0 = 2176} flops 36864 bytes 18624 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 6272 bytes 1088
    pshard.tensor "blk.0.attn_output.weight" q8_0 [32, 32] offset 7360 bytes 1088
    pshard.matmul q8_0 32 x 32 bytes 1088 count 2 of 2
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 4352} flops 8192 bytes 4352 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 8448 bytes 2176
    pshard.tensor "blk.0.ffn_down.weight" q8_0 [64, 32] offset 10624 bytes 2176
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1
    pshard.matmul q8_0 32 x 64 bytes 2176 count 1 of 1
  }
  pshard.head "head" weights {q8_0 = 2176} flops 4096 bytes 2176 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 12800 bytes 2176
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1 last_token
  }
}
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] {
  pshard.budget 0 resident [] {
    pshard.plan tier 1 cpu_only placements "CCCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 560 busy_ns [0, 0, 0] vram 0 {
    }
  }
  pshard.budget 40000 resident ["attn[0]"] {
    pshard.plan tier 1 dynamic placements "SRSS" order [0, 2, 3] prefetch 2 slots 2 x 4352 threads 8 time_ns 500 busy_ns [0, 0, 0] vram 0 {
    }
  }
}
