// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-choose-resident-set="budgets=0,22528" | FileCheck %s --check-prefix=MIN
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-choose-resident-set="budgets=30000" | FileCheck %s --check-prefix=GREEDY
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-choose-resident-set="budgets=30000 strategy=layers" | FileCheck %s --check-prefix=LAYERS
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-choose-resident-set | FileCheck %s --check-prefix=LADDER
// RUN: not pshard-opt %s --split-input-file --pshard-choose-resident-set="budgets=20000" 2>&1 | FileCheck %s --check-prefix=SMALL

// pshard-choose-resident-set: one pshard.budget per (budget, context range) with the
// candidate resident sets its plans are built on.
// The model of these tests: embed, one layer (attention 2 x 1088 B of q8_0 plus a KV
// cache of 64 B x 256 positions, FFN 2 x 2176 B), head. Resident, with 256-byte
// alignment: attn[0] 18944 B, ffn[0] 4608 B, embed and head 2304 B each; activations
// and workspace of tier 1 take 3584 B, so the smallest GPU plan needs 22528 B.

// Budget 0 is CPU only; at the minimum budget exactly one attention block fits beside
// the scratch, and attention comes first. Leaving room for a streaming slot, the rest
// fills by benefit per byte instead; the empty set (everything streamed or on the CPU)
// is always a candidate.
// MIN-LABEL:  pshard.schedule @tiny_plans
// MIN:          pshard.budget 0 context 256 {
// MIN-NEXT:       pshard.resident_set 0 []
// MIN-NEXT:     }
// MIN-NEXT:     pshard.budget 22528 context 256 {
// MIN-NEXT:       pshard.resident_set 0 ["attn[0]"]
// MIN-NEXT:       pshard.resident_set 1 ["embed", "ffn[0]", "head"]
// MIN-NEXT:       pshard.resident_set 2 []
// MIN-NEXT:     }
// With room for more, the rest goes by predicted benefit per byte: the head (40 ns
// saved per 2304 B at tier 1) before the embedding (5 ns), after the FFN; smaller sets
// leave room for slots, and the layer-wise prefix joins them.
// GREEDY-LABEL: pshard.schedule @tiny_plans
// GREEDY:         pshard.budget 30000 context 256 {
// GREEDY-NEXT:      pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
// GREEDY-NEXT:      pshard.resident_set 1 ["attn[0]", "head"]
// GREEDY-NEXT:      pshard.resident_set 2 ["embed", "ffn[0]", "head"]
// GREEDY-NEXT:      pshard.resident_set 3 ["attn[0]", "ffn[0]"]
// GREEDY-NEXT:      pshard.resident_set 4 []
// GREEDY-NEXT:    }
// llama.cpp-style layer offload keeps whole layers only, in order: one set.
// LAYERS-LABEL: pshard.schedule @tiny_plans
// LAYERS:         pshard.budget 30000 context 256 {
// LAYERS-NEXT:      pshard.resident_set 0 ["attn[0]", "ffn[0]"]
// LAYERS-NEXT:    }
// Without budgets, the ladder runs in 64 MiB steps up to full residency (at most 90% of
// the machine's VRAM): here the first rung already holds everything.
// LADDER-LABEL: pshard.schedule @tiny_plans
// LADDER:         pshard.budget 67108864 context 256 {
// LADDER-NEXT:      pshard.resident_set 0 ["embed", "attn[0]", "ffn[0]", "head"]
// LADDER-NOT:     pshard.budget
// A budget above 0 but below the smallest plan is refused, naming the minimum.
// SMALL: error: 'pshard.schedule' op budget 20000 cannot hold the smallest plan: the minimum budget is 22528 bytes for this model at context 256
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
// Resident sets are chosen from costs: a schedule without them is refused.
// expected-error @+1 {{has no costs: run pshard-annotate-costs first}}
pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
}
