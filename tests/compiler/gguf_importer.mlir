// RUN: pshard-mkmodel -o %t.dense.gguf --n-layer 2 --n-embd 64 --n-head 4 --n-head-kv 2 --n-ff 128 --vocab 512 --type q8_0 --name "tiny dense"
// RUN: pshard-compile -m %t.dense.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --emit mlir -c 512 --kv-type f16 --tiers 1 --budgets 0 | FileCheck %s --check-prefix=DENSE
// RUN: pshard-mkmodel -o %t.moe.gguf --sparse --n-layer 1 --n-embd 64 --n-head 4 --n-ff 32 --n-expert 8 --n-expert-used 2 --vocab 512 --type q4_0 --tied-output --name moe
// RUN: pshard-compile -m %t.moe.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --emit mlir --tiers 1 --budgets 0 | FileCheck %s --check-prefix=MOE
// RUN: pshard-mkmodel -o %t.mix.gguf --n-layer 2 --n-embd 256 --n-head 4 --n-head-kv 2 --n-ff 512 --vocab 512 --type q4_k_m --name mix
// RUN: pshard-compile -m %t.mix.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --emit mlir --tiers 1 --budgets 0 | FileCheck %s --check-prefix=MIX
// RUN: pshard-mkmodel -o %t.gemma.gguf --arch gemma3 --n-layer 6 --n-embd 64 --n-head 4 --n-head-kv 2 --n-ff 128 --vocab 512 --type q8_0 --tied-output --sliding-window 5 --name gemma
// RUN: pshard-compile -m %t.gemma.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --emit mlir -c 512 --tiers 1 --budgets 0 | pshard-opt | FileCheck %s --check-prefix=GEMMA
// RUN: pshard-mkmodel -o %t.bert.gguf --arch bert --n-layer 2 --n-embd 64 --n-head 4 --n-ff 128 --vocab 512 --ctx 128 --type q8_0 --name bert
// RUN: pshard-compile -m %t.bert.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --emit mlir --tiers 1 --budgets 0 | pshard-opt | FileCheck %s --check-prefix=BERT
// RUN: not pshard-compile -m %t.missing.gguf --profile %profiles/laptop-rtx4060-8gb.pshprof --emit mlir 2>&1 | FileCheck %s --check-prefix=MISSING

// The GGUF importer (compiler/lib/Import), through pshard-compile --emit mlir: a
// pshard.model from the file's metadata and tensor table only, then the planning
// pipeline's schedule beside it.

// A dense file: the symbol comes from general.name, the context and KV type from the
// options, the tensors with their file offsets, and the matmul groups per sub-layer.
// DENSE-LABEL: pshard.model @tiny_dense fingerprint "{{[0-9a-f]+}}" size {{[0-9]+}} context 512 kv f16
// DENSE-SAME:    n_layer = 2
// DENSE:         pshard.embed "embed" row_bytes 68 weights {q8_0 = 34816}
// DENSE-NEXT:      pshard.tensor "token_embd.weight" q8_0 [64, 512] offset {{[0-9]+}} bytes 34816
// DENSE:         pshard.attn "attn[0]" layer 0 heads 4 x 16 kv_values 64 kv 128
// DENSE:           pshard.matmul q8_0 64 x 64 bytes 4352 count 1 of 1
// DENSE:         pshard.ffn "ffn[0]" layer 0
// DENSE:         pshard.attn "attn[1]" layer 1
// DENSE:         pshard.ffn "ffn[1]" layer 1
// DENSE:         pshard.head "head"
// DENSE:           pshard.matmul q8_0 512 x 64 bytes 34816 count 1 of 1 last_token
// DENSE:       pshard.schedule @tiny_dense_plans for @tiny_dense machine "laptop-rtx4060-8gb"
// DENSE:         pshard.plan tier 1 set 0 cpu_only placements "CCCCCC" {{.*}} selected

// A MoE file written as headers only (its data a hole): nothing but metadata is read.
// Its experts are one tensor per projection, two of eight used per token; with a tied
// output the head multiplies by the embedding's tensor.
// MOE-LABEL: pshard.model @moe
// MOE:         pshard.moe "moe[0]" layer 0 experts 2 of 8
// MOE:           pshard.matmul q4_0 32 x 64 bytes 1152 count 2 of 8
// MOE:         pshard.head "head"
// MOE:           pshard.tensor "token_embd.weight" q4_0

// A Q4_K_M mix (llama-quantize's recipe): every tensor keeps its own type and its real
// bytes (a 256-value row of Q4_K is 144 bytes, of Q6_K 210); attn_v and ffn_down of
// the last of two layers, and the output, are Q6_K.
// MIX-LABEL: pshard.model @mix
// MIX:         pshard.tensor "token_embd.weight" q4_k [256, 512] offset {{[0-9]+}} bytes 73728
// MIX:         pshard.attn "attn[0]" layer 0
// MIX:           pshard.tensor "blk.0.attn_v.weight" q4_k [256, 128]
// MIX:         pshard.attn "attn[1]" layer 1
// MIX:           pshard.tensor "blk.1.attn_v.weight" q6_k [256, 128] offset {{[0-9]+}} bytes 26880
// MIX:         pshard.head "head"
// MIX:           pshard.tensor "output.weight" q6_k [256, 512] offset {{[0-9]+}} bytes 107520

// Gemma 3: five local layers in six read only their 5-position window (the planner prices
// their attention over it); the sixth attends to the whole context. The window survives
// a print and parse.
// GEMMA-LABEL: pshard.model @gemma
// GEMMA:         pshard.attn "attn[0]" layer 0 heads 4 x 16 kv_values 64 kv {{[0-9]+}} window 5 weights
// GEMMA:           pshard.tensor "blk.0.post_attention_norm.weight" f32 [64]
// GEMMA:         pshard.ffn "ffn[0]" layer 0
// GEMMA:           pshard.tensor "blk.0.post_ffw_norm.weight" f32 [64]
// GEMMA:         pshard.attn "attn[4]" layer 4 heads 4 x 16 kv_values 64 kv {{[0-9]+}} window 5 weights
// GEMMA:         pshard.attn "attn[5]" layer 5 heads 4 x 16 kv_values 64 kv {{[0-9]+}} weights

// A BERT encoder: attn[0] also owns what finishes its embedding (the position and
// token-type tables, the embedding's LayerNorm), every block its LayerNorm's bias, and
// the head nothing (it embeds); the IR still prints and parses.
// BERT-LABEL: pshard.model @bert
// BERT:         pshard.attn "attn[0]" layer 0
// BERT-NEXT:      pshard.tensor "position_embd.weight" f32 [64, 128]
// BERT-NEXT:      pshard.tensor "token_types.weight" f32 [64, 2]
// BERT-NEXT:      pshard.tensor "token_embd_norm.weight" f32 [64]
// BERT-NEXT:      pshard.tensor "token_embd_norm.bias" f32 [64]
// BERT:           pshard.tensor "blk.0.attn_output_norm.bias" f32 [64]
// BERT:         pshard.attn "attn[1]" layer 1
// BERT-NOT:       position_embd
// BERT:         pshard.head "head" weights {} flops 0 bytes 0

// A file that is not there is an error naming it.
// MISSING: pshard-compile: {{.*}}cannot import '{{.*}}.missing.gguf'
