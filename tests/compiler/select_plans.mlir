// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-annotate-costs="profile=fixed tiers=1,16" --pshard-choose-resident-set="budgets=0,80000" --pshard-generate-candidates --pshard-search-placements --pshard-select-plans | FileCheck %s
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-annotate-costs="profile=fixed tiers=1,16 workload=1:1" --pshard-choose-resident-set="budgets=0,80000" --pshard-generate-candidates --pshard-search-placements --pshard-select-plans | FileCheck %s --check-prefix=DECODE
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-annotate-costs="profile=fixed tiers=1,16" --pshard-choose-resident-set="budgets=80000" --pshard-generate-candidates --pshard-search-placements --pshard-select-plans=keep-candidates=true | FileCheck %s --check-prefix=KEEP

// pshard-select-plans: every tier gets a resident set and the fastest plan on it; the
// sets go to the tiers so that the schedule's workload runs fastest, switches between
// different sets included; a choice is named by what it does.
// The model: embed, one layer (attention 2 x 1088 B of q8_0 plus a KV cache of 64 B x
// 256 positions, FFN 2 x 2176 B), head, on the hand-checkable `fixed` machine.

// With the default workload (a 1024-token prompt: 64 passes of tier 16, then 256 decode
// passes) at 80000 B: decode is fastest keeping the head resident and streaming the
// embedding (125 ns); tier 16 gains more by streaming the head too, through a slot the
// head's 2304 B would otherwise take (266 ns on its own set against 348 ns on decode's),
// and the switch back uploads only the head (181 ns at 12 GB/s): the tiers keep sets of
// their own. Budget 0 is CPU only.
// CHECK-LABEL: pshard.schedule @tiny_plans
// CHECK:         pshard.budget 0 context 256 {
// CHECK-NEXT:      pshard.resident_set 0 []
// CHECK-NEXT:      pshard.plan tier 1 set 0 cpu_only placements "CCCC" {{.*}} time_ns 506 {{.*}} selected {
// CHECK:           pshard.plan tier 16 set 0 cpu_only placements "CCCC" {{.*}} time_ns 3700 {{.*}} selected {
// CHECK:         pshard.budget 80000 context 256 {
// CHECK-NEXT:      pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
// CHECK-NEXT:      pshard.resident_set 1 ["attn[0]", "ffn[0]"]
// CHECK-NEXT:      pshard.plan tier 1 set 0 gpu_only placements "SRRR" {{.*}} time_ns 125 {{.*}} selected {
// CHECK-NEXT:      }
// CHECK-NEXT:      pshard.plan tier 16 set 1 gpu_only placements "SRRS" {{.*}} time_ns 266 {{.*}} selected {
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// A workload of one prompt token and one decode step never runs tier 16: it shares
// decode's set (348 ns), since one visit to its own set costs 266 + 181 ns of switching.
// DECODE-LABEL: pshard.schedule @tiny_plans
// DECODE:         pshard.budget 80000 context 256 {
// DECODE-NEXT:      pshard.resident_set 0 ["attn[0]", "ffn[0]", "head"]
// DECODE-NEXT:      pshard.plan tier 1 set 0 gpu_only placements "SRRR" {{.*}} selected {
// DECODE-NEXT:      }
// DECODE-NEXT:      pshard.plan tier 16 set 0 static placements "CRRR" {{.*}} time_ns 348 {{.*}} selected {
// keep-candidates keeps the candidate sets and plans, unselected, before the choice.
// KEEP-LABEL:  pshard.schedule @tiny_plans
// KEEP:          pshard.resident_set 6 []
// KEEP:          pshard.plan tier 1 set 0 static placements "CRRR" {{.*}} vram 0 {
// KEEP:          pshard.plan tier 16 set 6 gpu_only placements "SSSS" {{.*}} vram 0 {
// KEEP-NEXT:     }
// KEEP-NEXT:     pshard.resident_set 7 ["attn[0]", "ffn[0]", "head"]
// KEEP-NEXT:     pshard.resident_set 8 ["attn[0]", "ffn[0]"]
// KEEP-NEXT:     pshard.plan tier 1 set 7 gpu_only placements "SRRR" {{.*}} selected {
// KEEP:          pshard.plan tier 16 set 8 gpu_only placements "SRRS" {{.*}} selected {
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

