// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-annotate-costs="profile=fixed tiers=1,16" | FileCheck %s --check-prefix=FIXED
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-annotate-costs | FileCheck %s --check-prefix=DEFAULT
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-annotate-costs="profile=%profiles/laptop-rtx4060-8gb.pshprof tiers=1" | FileCheck %s --check-prefix=LAPTOP
// RUN: pshard-opt %s --split-input-file --verify-diagnostics --pshard-annotate-costs="profile=fixed tiers=1 contexts=64 workload=512:64" | FileCheck %s --check-prefix=RANGES
// RUN: not pshard-opt %s --split-input-file --pshard-annotate-costs="profile=fixed contexts=512" 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: not pshard-opt %s --split-input-file --pshard-annotate-costs="profile=fixed workload=0:5" 2>&1 | FileCheck %s --check-prefix=WORKLOAD
// RUN: not pshard-opt %s --split-input-file --pshard-annotate-costs="profile=%t.missing" 2>&1 | FileCheck %s --check-prefix=MISSING

// pshard-annotate-costs: a schedule beside the model with per-(context, tier) roofline
// costs. `fixed` is FixedMachineParams: CPU 200 GFLOP/s and 50 GB/s, GPU 20 TFLOP/s and
// 250 GB/s, PCIe 12 GB/s, no overheads — so the numbers below can be checked by hand.

// One context range, the model's 256 positions: every tier at its start (1 position)
// and its end. The FFN (4352 weight bytes, 8192 FLOP per token) is memory-bound at tier
// 1 (4352 B / 50 GB/s = 87 ns) and compute-bound at tier 16 (16 x 8192 / 200 GFLOP/s =
// 655 ns); streaming it costs 4352 B / 12 GB/s = 363 ns at every tier. Attention reads
// its KV cache (64 B a position): 46 ns at one position, 372 ns at 256, and a streamed
// attention copies the cache with its weights (2176 + 64 x 256 = 18560 B). Switches
// are priced at the link's 12 GB/s: 87381 ns per MiB, no latency.
// FIXED-LABEL:  pshard.schedule @tiny_plans for @tiny machine "fixed" profile "0000000000000000" vram 8589934592 threads 8 tiers [1, 16] contexts [256] workload 1024 : 256 link [0, 87381, 0, 87381] {
// FIXED-NEXT:     pshard.tier 1 context 1
// FIXED-NEXT:       pshard.cost "embed"
// FIXED-NEXT:       pshard.cost "attn[0]" cpu_ns 46 {{.*}} stream_bytes 2240
// FIXED-NEXT:       pshard.cost "ffn[0]" cpu_ns 87 cpu_loaded_ns 87 gpu_ns 17 copy_ns 363 copy_loaded_ns 363 stream_bytes 4352 slot_bytes 4352
// FIXED-NEXT:       pshard.cost "head"
// FIXED:          pshard.tier 16 context 1
// FIXED:          pshard.tier 1 context 256
// FIXED-NEXT:       pshard.cost "embed"
// FIXED-NEXT:       pshard.cost "attn[0]" cpu_ns 372 {{.*}} stream_bytes 18560 slot_bytes 18560
// FIXED:          pshard.tier 16 context 256
// FIXED:            pshard.cost "ffn[0]" cpu_ns 655 {{.*}} copy_ns 363
// The default tiers and workload are pshard-compile's.
// DEFAULT-LABEL: pshard.schedule @tiny_plans for @tiny machine "fixed" {{.*}} tiers [1, 4, 16, 64, 256] contexts [256] workload 1024 : 256 link
// A shipped reference profile names its machine and fingerprint, and gives every
// sub-layer a cost.
// LAPTOP-LABEL:  pshard.schedule @tiny_plans for @tiny machine "laptop-rtx4060-8gb" profile "{{[0-9a-f]+}}" vram 8589934592
// LAPTOP-COUNT-4:  pshard.cost
// Context ranges: the one asked for and the model's, each with its start and end.
// RANGES-LABEL:  pshard.schedule @tiny_plans {{.*}} tiers [1] contexts [64, 256] workload 512 : 64
// RANGES-NEXT:     pshard.tier 1 context 1
// RANGES:          pshard.tier 1 context 64
// RANGES:          pshard.tier 1 context 65
// RANGES:          pshard.tier 1 context 256
// RANGES-NOT:      pshard.tier
// A range past the model's context, or a workload without a prompt, is refused.
// LONG: error: 'pshard.model' op the context range 512 is longer than the context planned for (256)
// WORKLOAD: error: 'pshard.model' op cannot read the workload '0:5'
// A profile that is not there is an error naming the file.
// MISSING: error: cannot load the machine profile: cannot open '{{.*}}.missing'
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

// -----

// Costs are annotated once: a model that already has its schedule is refused.
// expected-error @+1 {{already has a schedule @m_plans; costs are annotated once}}
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {n_vocab = 64, n_embd = 32, n_layer = 0, n_ff = 64, n_head = 2, n_head_kv = 1, head_dim = 16} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}
pshard.schedule @m_plans for @m machine "fixed" profile "0" vram 0 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 0, 0, 0] {
}
