// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-generate-candidates | FileCheck %s
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-generate-candidates=strategy=dynamic | FileCheck %s --check-prefix=FORCED

// pshard-generate-candidates: the fixed strategies as plans of every (resident set,
// tier) of each budget, each with the slot count that fits and its simulated time.
// The model of these tests: embed, one layer (attention 2 x 1088 B of q8_0 plus a KV
// cache of 64 B x 256 positions, FFN 2 x 2176 B), head. Resident, with 256-byte
// alignment: attn[0] 18944 B, ffn[0] 4608 B, embed and head 2304 B each; activations
// and workspace of tier 1 take 3584 B, so the smallest GPU plan needs 22528 B.

// Budget 0 gets a CPU-only plan. At the minimum budget no streaming slot fits beside
// attn[0], so all three strategies place the same. With 30000 B, GPU-only streams the
// embedding through one slot; Static and Dynamic keep it on the CPU (its copy costs
// more than running it there).
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.budget 0 context 256 {
// CHECK-NEXT:       pshard.resident_set 0 []
// CHECK-NEXT:      pshard.plan tier 1 set 0 cpu_only placements "CCCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 560
// CHECK:         pshard.budget 22528 context 256 {
// CHECK-NEXT:       pshard.resident_set 0 ["attn[0]"]
// CHECK-NEXT:      pshard.plan tier 1 set 0 static placements "CRCC"
// CHECK:           pshard.plan tier 1 set 0 dynamic placements "CRCC"
// CHECK:           pshard.plan tier 1 set 0 gpu_only placements "CRCC"
// CHECK:         pshard.budget 30000 context 256 {
// CHECK-NEXT:       pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
// CHECK-NEXT:      pshard.plan tier 1 set 0 static placements "CRRR" order [] {{.*}} time_ns 120
// CHECK:           pshard.plan tier 1 set 0 dynamic placements "CRRR"
// CHECK:           pshard.plan tier 1 set 0 gpu_only placements "SRRR" order [0] prefetch 1 slots 1 x 256 {{.*}} time_ns 305
// A forced strategy builds only itself (budget 0 stays CPU only).
// FORCED-LABEL: pshard.schedule @tiny_plans
// FORCED-NOT:     static
// FORCED-NOT:     gpu_only
// FORCED:         pshard.plan tier 1 set 0 dynamic placements "CRRR"
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
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 256 h2d_hidden_ns 10 d2h_hidden_ns 10 d2h_logits_ns 20 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 10 cpu_loaded_ns 10 gpu_ns 5 copy_ns 200 copy_loaded_ns 200 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 400 cpu_loaded_ns 400 gpu_ns 50 copy_ns 1500 copy_loaded_ns 1500 stream_bytes 2176 slot_bytes 2176
    pshard.cost "ffn[0]" cpu_ns 100 cpu_loaded_ns 100 gpu_ns 20 copy_ns 400 copy_loaded_ns 400 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 50 cpu_loaded_ns 50 gpu_ns 10 copy_ns 200 copy_loaded_ns 200 stream_bytes 2176 slot_bytes 2176
  }
  pshard.budget 0 context 256 {
    pshard.resident_set 0 []
  }
  pshard.budget 22528 context 256 {
    pshard.resident_set 0 ["attn[0]"]
  }
  pshard.budget 30000 context 256 {
    pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
  }
}

// -----

// When crossing PCIe is dear and the FFN slow on the CPU, Dynamic streams the FFN
// (its 400 ns copy hides behind the embedding and attention) and keeps the head on the
// CPU; GPU-only streams everything through two slots.
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.budget 40000 context 256 {
// CHECK-NEXT:       pshard.resident_set 0 ["attn[0]"]
// CHECK-NEXT:      pshard.plan tier 1 set 0 static placements "CRCC" {{.*}} time_ns 1710
// CHECK-NEXT:      }
// CHECK-NEXT:      pshard.plan tier 1 set 0 dynamic placements "CRSC" order [2] prefetch 1 slots 1 x 4352 {{.*}} time_ns 770
// CHECK-NEXT:      }
// CHECK-NEXT:      pshard.plan tier 1 set 0 gpu_only placements "SRSS" order [0, 2, 3] prefetch 2 slots 2 x 4352 {{.*}} time_ns 830
// FORCED-LABEL: pshard.schedule @tiny_plans
// FORCED:         pshard.plan tier 1 set 0 dynamic placements "CRSC"
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
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 256 h2d_hidden_ns 300 d2h_hidden_ns 300 d2h_logits_ns 20 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 10 cpu_loaded_ns 10 gpu_ns 5 copy_ns 200 copy_loaded_ns 200 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 400 cpu_loaded_ns 400 gpu_ns 50 copy_ns 1500 copy_loaded_ns 1500 stream_bytes 2176 slot_bytes 2176
    pshard.cost "ffn[0]" cpu_ns 1000 cpu_loaded_ns 1000 gpu_ns 20 copy_ns 400 copy_loaded_ns 400 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 50 cpu_loaded_ns 50 gpu_ns 10 copy_ns 200 copy_loaded_ns 200 stream_bytes 2176 slot_bytes 2176
  }
  pshard.budget 40000 context 256 {
    pshard.resident_set 0 ["attn[0]"]
  }
}

// -----

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
// Candidates are generated once: a budget that has plans is refused.
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 256 h2d_hidden_ns 10 d2h_hidden_ns 10 d2h_logits_ns 20 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 10 cpu_loaded_ns 10 gpu_ns 5 copy_ns 200 copy_loaded_ns 200 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 400 cpu_loaded_ns 400 gpu_ns 50 copy_ns 1500 copy_loaded_ns 1500 stream_bytes 2176 slot_bytes 2176
    pshard.cost "ffn[0]" cpu_ns 100 cpu_loaded_ns 100 gpu_ns 20 copy_ns 400 copy_loaded_ns 400 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 50 cpu_loaded_ns 50 gpu_ns 10 copy_ns 200 copy_loaded_ns 200 stream_bytes 2176 slot_bytes 2176
  }
  // expected-error @+1 {{already has plans; candidates are generated once}}
  pshard.budget 22528 context 256 {
    pshard.resident_set 0 ["attn[0]"]
    pshard.plan tier 1 set 0 static placements "CRCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 230 start_time_ns 0 busy_ns [0, 0, 0] vram 0 {
    }
  }
}
