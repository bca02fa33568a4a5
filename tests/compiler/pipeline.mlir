// RUN: pshard-opt %s --pshard-plan="profile=fixed tiers=1,16 budgets=0,80K" | FileCheck %s
// RUN: pshard-opt %s --pshard-plan="profile=fixed tiers=1,16 budgets=0,80K strategy=static" | FileCheck %s --check-prefix=STATIC
// RUN: pshard-opt %s --pshard-plan="profile=%profiles/desktop-rtx4090-24gb.pshprof tiers=1" | FileCheck %s --check-prefix=LADDER
// The two pshard-compile paths write the same artifact, byte for byte: a dense and a MoE
// model, budgets from CPU only to full residency, two context ranges, a forced strategy.
// RUN: pshard-mkmodel -o %t.dense.gguf --n-layer 4 --n-embd 128 --n-head 4 --n-head-kv 2 --n-ff 384 --vocab 512 --type q8_0 --sparse
// RUN: pshard-compile -q -m %t.dense.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 --budgets 0,1M,2M,6M --tiers 1,4,64 --contexts 128,512 -o %t.dense.direct.pshard
// RUN: pshard-compile -q -m %t.dense.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 --budgets 0,1M,2M,6M --tiers 1,4,64 --contexts 128,512 -o %t.dense.mlir.pshard --pipeline mlir
// RUN: cmp %t.dense.direct.pshard %t.dense.mlir.pshard
// RUN: pshard-compile -q -m %t.dense.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 --budgets 1M,6M --tiers 1,64 -c 512 --strategy dynamic -o %t.dynamic.direct.pshard
// RUN: pshard-compile -q -m %t.dense.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 --budgets 1M,6M --tiers 1,64 -c 512 --strategy dynamic -o %t.dynamic.mlir.pshard --pipeline mlir
// RUN: cmp %t.dynamic.direct.pshard %t.dynamic.mlir.pshard
// RUN: pshard-mkmodel -o %t.moe.gguf --arch qwen3moe --n-layer 3 --n-embd 128 --n-head 4 --n-head-kv 2 --head-dim 32 --n-ff 64 --n-expert 16 --n-expert-used 4 --vocab 512 --type q4_0 --sparse
// RUN: pshard-compile -q -m %t.moe.gguf --profile %profiles/desktop-rtx5090-32gb.pshprof --tiers 1,16,256 --workload 300:40 -o %t.moe.direct.pshard
// RUN: pshard-compile -q -m %t.moe.gguf --profile %profiles/desktop-rtx5090-32gb.pshprof --tiers 1,16,256 --workload 300:40 -o %t.moe.mlir.pshard --pipeline mlir
// RUN: cmp %t.moe.direct.pshard %t.moe.mlir.pshard
// Expert-level MoE plans (resident experts, the rest copied or on the CPU) come out of
// both paths alike, and so do whole-block ones (--whole-moe).
// RUN: pshard-mkmodel -o %t.moe32.gguf --arch qwen3moe --n-layer 4 --n-embd 512 --n-head 8 --n-head-kv 2 --head-dim 64 --n-ff 512 --n-expert 32 --n-expert-used 4 --vocab 512 --type q4_0 --sparse
// RUN: pshard-compile -q -m %t.moe32.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 -c 512 --budgets 3M,6M,10M --tiers 1,16 -o %t.split.direct.pshard
// RUN: pshard-compile -q -m %t.moe32.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 -c 512 --budgets 3M,6M,10M --tiers 1,16 -o %t.split.mlir.pshard --pipeline mlir
// RUN: cmp %t.split.direct.pshard %t.split.mlir.pshard
// RUN: pshard-inspect %t.split.direct.pshard | FileCheck %s --check-prefix=SPLIT
// RUN: pshard-compile -q -m %t.moe32.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 -c 512 --budgets 3M,6M,10M --tiers 1,16 --whole-moe -o %t.whole.direct.pshard
// RUN: pshard-compile -q -m %t.moe32.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --kernel-workspace 0 -c 512 --budgets 3M,6M,10M --tiers 1,16 --whole-moe -o %t.whole.mlir.pshard --pipeline mlir
// RUN: cmp %t.whole.direct.pshard %t.whole.mlir.pshard
// SPLIT: experts
// SPLIT: 10.0 MiB {{.*}} -{{$}}
// SPLIT-NEXT: 16 {{.*}} 4/16/0{{$}}

// The pshard-plan pipeline (Passes.cpp): costs, resident sets, candidates, search,
// selection and layout in one go — one selected, laid-out plan per (budget, context
// range, tier), on the resident set the selection gave its tier.

// 80 KiB holds the whole model: every sub-layer resident and on the GPU, in one arena
// that grows with the tier's activations and never exceeds the budget. Budget 0 runs on
// the CPU.
// CHECK-LABEL: pshard.schedule @tiny_plans for @tiny machine "fixed"
// CHECK:         pshard.budget 0 context 256 {
// CHECK-NEXT:      pshard.resident_set 0 []
// CHECK-NEXT:      pshard.plan tier 1 set 0 cpu_only placements "CCCC" {{.*}} vram 0 selected {
// CHECK-NEXT:      }
// CHECK-NEXT:      pshard.plan tier 16 set 0 cpu_only placements "CCCC" {{.*}} vram 0 selected {
// CHECK-NEXT:      }
// CHECK-NEXT:    }
// CHECK-NEXT:    pshard.budget 81920 context 256 {
// CHECK-NEXT:      pshard.resident_set 0 ["embed", "attn[0]", "ffn[0]", "head"]
// CHECK-NEXT:      pshard.plan tier 1 set 0 gpu_only placements "RRRR" {{.*}} vram 31744 selected {
// CHECK:             pshard.buffer workspace at 29696 size 2048
// CHECK:           pshard.plan tier 16 set 0 gpu_only placements "RRRR" {{.*}} vram 81664 selected {
// CHECK:             pshard.buffer workspace at 48896 size 32768
// Both tiers keep the same set: nothing to switch.
// CHECK-NOT:       pshard.switch
// A forced strategy keeps its name and skips the search.
// STATIC-LABEL: pshard.schedule @tiny_plans
// STATIC:         pshard.plan tier 1 set 0 static placements "RRRR" {{.*}} selected
// STATIC-NOT:     search
// STATIC-NOT:     gpu_only
// Without budgets, a ladder in 64 MiB steps up to full residency (at most 90% of the
// profiled GPU's 24 GB): this 16 KB model and the kernel scratch fit the first rung.
// LADDER-LABEL: pshard.schedule @tiny_plans for @tiny machine "desktop-rtx4090-24gb"
// LADDER:         pshard.budget 67108864 context 256
// LADDER-NOT:     pshard.budget
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
