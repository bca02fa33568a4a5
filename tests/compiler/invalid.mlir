// RUN: pshard-opt %s --split-input-file --verify-diagnostics

// The verifiers of the pshard dialect: each case breaks one rule and must be refused.

// The model must start with the embedding.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  // expected-error @+1 {{comes first but the model must start with 'pshard.embed'}}
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}

// -----

// Layers count up from 0: layer 1 cannot come first.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  // expected-error @+1 {{has layer 1 but layer 0 comes next}}
  pshard.attn "attn[1]" layer 1 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.1.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
}

// -----

// The FFN of a layer follows that layer's attention, not the other way round.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  // expected-error @+1 {{expected 'pshard.attn' of layer 0 or 'pshard.head' here}}
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}

// -----

// The head must close the model.
// expected-error @+1 {{must end with 'pshard.head'}}
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}

// -----

// Sub-layer names are the runtime's: the FFN of layer 0 is "ffn[0]".
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  // expected-error @+1 {{is named 'ffn[0]' but must be named 'embed'}}
  pshard.embed "ffn[0]" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}

// -----

// The weights summary must agree with the tensors it sums.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  // expected-error @+1 {{weights say 2000 bytes of q8_0 but its tensors hold 2176}}
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2000} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}

// -----

// A tensor's bytes follow from its type and dimensions (q8_0: 34 bytes per 32 values).
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2048} flops 0 bytes 34 {
    // expected-error @+1 {{has 2048 bytes but 2048 values of q8_0 are 2176}}
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2048
  }
}

// -----

// KV bytes per token are the KV values in the model's KV type (f32: 4 bytes each).
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  // expected-error @+1 {{has kv 64 bytes per token but 32 values of f32 are 128}}
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 64 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
}

// -----

// A router cannot pick more experts than there are.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
  // expected-error @+1 {{uses 9 experts of 8; it must use at least 1 and at most all of them}}
  pshard.moe "moe[0]" layer 0 experts 9 of 8 expert_bytes 2176 shared_bytes 0 weights {q8_0 = 17408} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up_exps.weight" q8_0 [32, 64, 8] offset 0 bytes 17408
  }
}

// -----

// Only routed experts are fused into a grouped gate+up kernel: a dense matrix is not.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
    // expected-error @+1 {{is marked gate_up but applies all 1 of its matrices}}
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1 gate_up
  }
}

// -----

// The embedding gathers rows and multiplies by nothing: it has no matmul group.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
    // expected-error @+1 {{'pshard.matmul' op expects parent op to be one of}}
    pshard.matmul q8_0 64 x 32 bytes 2176 count 1 of 1
  }
}

// -----

// Sizes are non-negative: a negative byte count does not parse as a count.
pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    // expected-error @+1 {{attribute 'offset' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset -1 bytes 2176
  }
}

// -----

pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}
// A plan places every sub-layer of its model exactly once: four letters for four.
pshard.schedule @p for @m machine "fixed" profile "0" vram 1048576 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.budget 65536 context 16 {
    pshard.resident_set 0 ["attn[0]"]
    // expected-error @+1 {{has 3 placements but the model has 4 sub-layers}}
    pshard.plan tier 1 set 0 static placements "CRC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 1 start_time_ns 0 busy_ns [1, 0, 0] vram 0 {
    }
  }
}

// -----

pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}
// A plan keeps exactly the sub-layers of the resident set it names resident.
pshard.schedule @p for @m machine "fixed" profile "0" vram 1048576 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.budget 65536 context 16 {
    pshard.resident_set 0 ["attn[0]"]
    // expected-error @+1 {{places 'ffn[0]' resident, unlike its resident set #0}}
    pshard.plan tier 1 set 0 static placements "CRRC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 1 start_time_ns 0 busy_ns [1, 0, 0] vram 0 {
    }
  }
}

// -----

pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}
// The copy order names exactly the streamed sub-layers.
pshard.schedule @p for @m machine "fixed" profile "0" vram 1048576 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.budget 65536 context 16 {
    pshard.resident_set 0 ["attn[0]"]
    // expected-error @+1 {{streams sub-layer #3, which is not placed S}}
    pshard.plan tier 1 set 0 dynamic placements "CRSC" order [3] prefetch 1 slots 1 x 2304 threads 8 time_ns 1 start_time_ns 0 busy_ns [1, 0, 0] vram 0 {
    }
  }
}

// -----

pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}
// Buffers of one arena never overlap.
pshard.schedule @p for @m machine "fixed" profile "0" vram 1048576 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.budget 65536 context 16 {
    pshard.resident_set 0 ["attn[0]"]
    // expected-error @+1 {{has overlapping buffers at [1024, 1088)}}
    pshard.plan tier 1 set 0 static placements "CRCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 1 start_time_ns 0 busy_ns [1, 0, 0] vram 4096 {
      pshard.buffer weights of "attn[0]" index 0 at 0 size 1088
      pshard.buffer kv_cache of "attn[0]" at 1024 size 2048
    }
  }
}

// -----

pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}
// The arena never exceeds the budget.
pshard.schedule @p for @m machine "fixed" profile "0" vram 1048576 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.budget 4096 context 16 {
    pshard.resident_set 0 ["attn[0]"]
    // expected-error @+1 {{needs 8192 bytes of VRAM, over its budget of 4096}}
    pshard.plan tier 1 set 0 static placements "CRCC" order [] prefetch 0 slots 0 x 0 threads 8 time_ns 1 start_time_ns 0 busy_ns [1, 0, 0] vram 8192 {
    }
  }
}

// -----

pshard.model @m fingerprint "000102030405060708090a0b0c0d0e0f" size 1 context 16 kv f32 hparams {} {
  pshard.embed "embed" row_bytes 34 weights {q8_0 = 2176} flops 0 bytes 34 {
    pshard.tensor "token_embd.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.attn "attn[0]" layer 0 heads 2 x 16 kv_values 32 kv 128 weights {q8_0 = 1088} flops 1 bytes 1 {
    pshard.tensor "blk.0.attn_q.weight" q8_0 [32, 32] offset 0 bytes 1088
  }
  pshard.ffn "ffn[0]" layer 0 weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "blk.0.ffn_up.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
  pshard.head "head" weights {q8_0 = 2176} flops 1 bytes 1 {
    pshard.tensor "output.weight" q8_0 [32, 64] offset 0 bytes 2176
  }
}
// A tier's costs list the model's sub-layers in model order.
pshard.schedule @p for @m machine "fixed" profile "0" vram 1048576 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 87381, 0, 87381] {
  pshard.tier 1 context 16 h2d_hidden_ns 1 d2h_hidden_ns 1 d2h_logits_ns 1 h2d_tokens_ns 1 {
    pshard.cost "embed" cpu_ns 1 cpu_loaded_ns 1 gpu_ns 1 copy_ns 1 copy_loaded_ns 1 stream_bytes 1 slot_bytes 1
    // expected-error @+1 {{is for 'ffn[0]' but the model's sub-layer #1 is 'attn[0]'}}
    pshard.cost "ffn[0]" cpu_ns 1 cpu_loaded_ns 1 gpu_ns 1 copy_ns 1 copy_loaded_ns 1 stream_bytes 1 slot_bytes 1
  }
}

// -----

// A schedule plans for a model of this module.
// expected-error @+1 {{plans for @nowhere, which is not a 'pshard.model'}}
pshard.schedule @p for @nowhere machine "fixed" profile "0" vram 0 threads 8 tiers [1] contexts [16] workload 1024 : 256 link [0, 87381, 0, 87381] {
}
