// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-layout-vram | FileCheck %s

// pshard-layout-vram: every buffer of a selected plan at a 256-byte-aligned offset in
// one arena: resident tensors and KV caches first (a buffer two plans of a budget hold at
// one offset in both), then streaming slots, activations and workspace; and the
// switches between the budget's plans.
// The model of these tests: embed, one layer (attention 2 x 1088 B of q8_0 plus a KV
// cache of 64 B x 256 positions, FFN 2 x 2176 B), head. Resident, with 256-byte
// alignment: attn[0] 18944 B, ffn[0] 4608 B, embed and head 2304 B each; activations
// and workspace of tier 1 take 3584 B, so the smallest GPU plan needs 22528 B.

// attn[0]'s two tensors (1088 B each, at 0 and 1280), its KV cache (256 x 64 B), two
// slots for the streamed FFN and head, then tier 1's activations and workspace: an
// arena of 31232 B within the 40000 B budget. Busy times come from the simulation; a
// schedule without costs at the range's start predicts the same there.
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.plan tier 1 set 0 search placements "CRSS" order [2, 3] prefetch 2 slots 2 x 4352 threads 8 time_ns 630 start_time_ns 630 busy_ns [10, 80, 600] vram 31232 selected {
// CHECK-NEXT:      pshard.buffer weights of "attn[0]" index 0 at 0 size 1088
// CHECK-NEXT:      pshard.buffer weights of "attn[0]" index 1 at 1280 size 1088
// CHECK-NEXT:      pshard.buffer kv_cache of "attn[0]" at 2560 size 16384
// CHECK-NEXT:      pshard.buffer stream_slot index 0 at 18944 size 4352
// CHECK-NEXT:      pshard.buffer stream_slot index 1 at 23296 size 4352
// CHECK-NEXT:      pshard.buffer activations at 27648 size 1536
// CHECK-NEXT:      pshard.buffer workspace at 29184 size 2048
// CHECK-NEXT:    }
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
    pshard.plan tier 1 set 0 search placements "CRSS" order [2, 3] prefetch 2 slots 2 x 4352 threads 8 time_ns 630 start_time_ns 0 busy_ns [0, 0, 0] vram 0 selected {
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
// A plan whose buffers do not fit its budget is refused: attn[0] (18944 B), a 4352 B
// slot and 3584 B of activations and workspace exceed 22528 B.
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 256 h2d_hidden_ns 10 d2h_hidden_ns 10 d2h_logits_ns 20 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 10 cpu_loaded_ns 10 gpu_ns 5 copy_ns 200 copy_loaded_ns 200 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 400 cpu_loaded_ns 400 gpu_ns 50 copy_ns 1500 copy_loaded_ns 1500 stream_bytes 2176 slot_bytes 2176
    pshard.cost "ffn[0]" cpu_ns 100 cpu_loaded_ns 100 gpu_ns 20 copy_ns 400 copy_loaded_ns 400 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 50 cpu_loaded_ns 50 gpu_ns 10 copy_ns 200 copy_loaded_ns 200 stream_bytes 2176 slot_bytes 2176
  }
  // expected-error @+1 {{cannot be laid out: plan for budget 22528, tier 1 needs an arena of 26880 B}}
  pshard.budget 22528 context 256 {
    pshard.resident_set 0 ["attn[0]"]
    pshard.plan tier 1 set 0 dynamic placements "CRSC" order [2] prefetch 1 slots 1 x 4352 threads 8 time_ns 770 start_time_ns 0 busy_ns [0, 0, 0] vram 0 selected {
    }
  }
}

// -----

// Two tiers on two resident sets of one budget (as pshard-select-plans chose them for
// the default workload): tier 16's set is tier 1's without the head, so the layout keeps
// the common buffers at the same offsets and puts tier 16's slot where the head was.
// The switches: to tier 16 drops the head (no copy), back to tier 1 uploads its 2176 B
// (181 ns at 12 GB/s).
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.plan tier 1 set 0 gpu_only placements "SRRR" {{.*}} time_ns 125 start_time_ns 60 {{.*}} vram 29696 selected {
// CHECK-NEXT:      pshard.buffer weights of "attn[0]" index 0 at 0 size 1088
// CHECK-NEXT:      pshard.buffer weights of "attn[0]" index 1 at 1280 size 1088
// CHECK-NEXT:      pshard.buffer kv_cache of "attn[0]" at 2560 size 16384
// CHECK-NEXT:      pshard.buffer weights of "ffn[0]" index 0 at 18944 size 2176
// CHECK-NEXT:      pshard.buffer weights of "ffn[0]" index 1 at 21248 size 2176
// CHECK-NEXT:      pshard.buffer weights of "head" index 0 at 23552 size 2176
// CHECK-NEXT:      pshard.buffer stream_slot index 0 at 25856 size 256
// CHECK:         pshard.plan tier 16 set 1 gpu_only placements "SRRS" {{.*}} vram 79360 selected {
// CHECK-NEXT:      pshard.buffer weights of "attn[0]" index 0 at 0 size 1088
// CHECK-NEXT:      pshard.buffer weights of "attn[0]" index 1 at 1280 size 1088
// CHECK-NEXT:      pshard.buffer kv_cache of "attn[0]" at 2560 size 16384
// CHECK-NEXT:      pshard.buffer weights of "ffn[0]" index 0 at 18944 size 2176
// CHECK-NEXT:      pshard.buffer weights of "ffn[0]" index 1 at 21248 size 2176
// CHECK-NEXT:      pshard.buffer stream_slot index 0 at 23552 size 2304
// CHECK:         pshard.switch tier 1 -> 16 context 256 -> 256 upload 0 evict 2176 kv_up 0 kv_down 0 positions 256 time_ns 0
// CHECK-NEXT:    pshard.switch tier 16 -> 1 context 256 -> 256 upload 2176 evict 0 kv_up 0 kv_down 0 positions 256 time_ns 181
pshard.model @tiny fingerprint "000102030405060708090a0b0c0d0e0f" size 16384 context 256 kv f16 hparams {arch = "llama", head_dim = 16, n_embd = 32, n_ff = 64, n_head = 2, n_head_kv = 1, n_layer = 1, n_vocab = 64, name = "tiny"} {
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
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1, 16] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 1 h2d_hidden_ns 11 d2h_hidden_ns 11 d2h_logits_ns 21 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 3 cpu_loaded_ns 3 gpu_ns 1 copy_ns 3 copy_loaded_ns 3 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 46 cpu_loaded_ns 46 gpu_ns 9 copy_ns 192 copy_loaded_ns 192 stream_bytes 2240 slot_bytes 2240
    pshard.cost "ffn[0]" cpu_ns 87 cpu_loaded_ns 87 gpu_ns 17 copy_ns 363 copy_loaded_ns 363 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 44 cpu_loaded_ns 44 gpu_ns 9 copy_ns 181 copy_loaded_ns 181 stream_bytes 2176 slot_bytes 2176
  }
  pshard.tier 16 context 1 h2d_hidden_ns 171 d2h_hidden_ns 171 d2h_logits_ns 21 h2d_tokens_ns 5 {
    pshard.cost "embed" cpu_ns 52 cpu_loaded_ns 52 gpu_ns 10 copy_ns 45 copy_loaded_ns 45 stream_bytes 544 slot_bytes 544
    pshard.cost "attn[0]" cpu_ns 349 cpu_loaded_ns 349 gpu_ns 13 copy_ns 272 copy_loaded_ns 272 stream_bytes 2240 slot_bytes 2240
    pshard.cost "ffn[0]" cpu_ns 655 cpu_loaded_ns 655 gpu_ns 17 copy_ns 363 copy_loaded_ns 363 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 44 cpu_loaded_ns 44 gpu_ns 9 copy_ns 181 copy_loaded_ns 181 stream_bytes 2176 slot_bytes 2176
  }
  pshard.tier 1 context 256 h2d_hidden_ns 11 d2h_hidden_ns 11 d2h_logits_ns 21 h2d_tokens_ns 0 {
    pshard.cost "embed" cpu_ns 3 cpu_loaded_ns 3 gpu_ns 1 copy_ns 3 copy_loaded_ns 3 stream_bytes 34 slot_bytes 34
    pshard.cost "attn[0]" cpu_ns 372 cpu_loaded_ns 372 gpu_ns 74 copy_ns 1552 copy_loaded_ns 1552 stream_bytes 18560 slot_bytes 18560
    pshard.cost "ffn[0]" cpu_ns 87 cpu_loaded_ns 87 gpu_ns 17 copy_ns 363 copy_loaded_ns 363 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 44 cpu_loaded_ns 44 gpu_ns 9 copy_ns 181 copy_loaded_ns 181 stream_bytes 2176 slot_bytes 2176
  }
  pshard.tier 16 context 256 h2d_hidden_ns 171 d2h_hidden_ns 171 d2h_logits_ns 21 h2d_tokens_ns 5 {
    pshard.cost "embed" cpu_ns 52 cpu_loaded_ns 52 gpu_ns 10 copy_ns 45 copy_loaded_ns 45 stream_bytes 544 slot_bytes 544
    pshard.cost "attn[0]" cpu_ns 2949 cpu_loaded_ns 2949 gpu_ns 78 copy_ns 1632 copy_loaded_ns 1632 stream_bytes 18560 slot_bytes 18560
    pshard.cost "ffn[0]" cpu_ns 655 cpu_loaded_ns 655 gpu_ns 17 copy_ns 363 copy_loaded_ns 363 stream_bytes 4352 slot_bytes 4352
    pshard.cost "head" cpu_ns 44 cpu_loaded_ns 44 gpu_ns 9 copy_ns 181 copy_loaded_ns 181 stream_bytes 2176 slot_bytes 2176
  }
  pshard.budget 80000 context 256 {
    pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
    pshard.resident_set 1 ["attn[0]", "ffn[0]"]
    pshard.plan tier 1 set 0 gpu_only placements "SRRR" order [0] prefetch 1 slots 1 x 256 threads 8 time_ns 125 start_time_ns 0 busy_ns [0, 0, 0] vram 0 selected {
    }
    pshard.plan tier 16 set 1 gpu_only placements "SRRS" order [0, 3] prefetch 1 slots 1 x 2304 threads 8 time_ns 266 start_time_ns 0 busy_ns [0, 0, 0] vram 0 selected {
    }
  }
}
