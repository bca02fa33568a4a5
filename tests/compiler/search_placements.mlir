// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-search-placements | FileCheck %s
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-search-placements=strategy=static | FileCheck %s --check-prefix=FORCED

// pshard-search-placements: local search from every candidate; a faster result joins
// them as a `search` plan after the tier's last candidate.
// The model of these tests: embed, one layer (attention 2 x 1088 B of q8_0 plus a KV
// cache of 64 B x 256 positions, FFN 2 x 2176 B), head. Resident, with 256-byte
// alignment: attn[0] 18944 B, ffn[0] 4608 B, embed and head 2304 B each; activations
// and workspace of tier 1 take 3584 B, so the smallest GPU plan needs 22528 B.

// Crossing PCIe costs 300 ns each way: moving the head to the GPU too (CRSS) saves
// the hidden state's trip back to the CPU, which Dynamic's greedy rule does not see.
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.plan tier 1 set 0 gpu_only placements "SRSS"
// CHECK-NEXT:      }
// CHECK-NEXT:      pshard.plan tier 1 set 0 search placements "CRSS" order [2, 3] prefetch 2 slots 2 x 4352 threads 8 time_ns 630
// A forced strategy is compared as it is: no search.
// FORCED-LABEL: pshard.schedule @tiny_plans
// FORCED-NOT:     search
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
    pshard.plan tier 1 set 0 static placements "CRCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 1710 start_time_ns 0 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 1 set 0 dynamic placements "CRSC" order [2] prefetch 1 slots 1 x 4352 threads 8 time_ns 770 start_time_ns 0 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 1 set 0 gpu_only placements "SRSS" order [0, 2, 3] prefetch 2 slots 2 x 4352 threads 8 time_ns 830 start_time_ns 0 busy_ns [0, 0, 0] vram 0 {
    }
  }
}

// -----

// When a fixed strategy is already best (everything but the embedding resident), the
// search adds nothing.
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK-NOT:     search
// FORCED-LABEL: pshard.schedule @tiny_plans
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
  pshard.budget 30000 context 256 {
    pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
    pshard.plan tier 1 set 0 static placements "CRRR" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 120 start_time_ns 0 busy_ns [0, 0, 0] vram 0 {
    }
    pshard.plan tier 1 set 0 gpu_only placements "SRRR" order [0] prefetch 1 slots 1 x 256 threads 8 time_ns 305 start_time_ns 0 busy_ns [0, 0, 0] vram 0 {
    }
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
// Placements are searched once.
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 256 h2d_hidden_ns 10 d2h_hidden_ns 10 d2h_logits_ns 20 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 10 cpu_loaded_ns 10 gpu_ns 5 copy_ns 200 copy_loaded_ns 200 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 400 cpu_loaded_ns 400 gpu_ns 50 copy_ns 1500 copy_loaded_ns 1500 stream_bytes 2176 slot_bytes 2176
    pshard.cost "ffn[0]" cpu_ns 100 cpu_loaded_ns 100 gpu_ns 20 copy_ns 400 copy_loaded_ns 400 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 50 cpu_loaded_ns 50 gpu_ns 10 copy_ns 200 copy_loaded_ns 200 stream_bytes 2176 slot_bytes 2176
  }
  pshard.budget 30000 context 256 {
    pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
    // expected-error @+1 {{is already a search result; placements are searched once}}
    pshard.plan tier 1 set 0 search placements "CRRR" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 120 start_time_ns 0 busy_ns [0, 0, 0] vram 0 {
    }
  }
}
