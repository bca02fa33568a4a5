// pshard-mkmodel: write a synthetic GGUF of any supported family and shape.
//
//   pshard-mkmodel -o llama-1b.gguf --n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8
//       --n-ff 8192 --type q4_0 --tokenizer-from ../shared/vocab/ggml-vocab-llama-spm.gguf
//   pshard-mkmodel -o qwen3-235b-shape.gguf --arch qwen3moe --sparse --n-embd 4096 ...
//   pshard-mkmodel -o qwen2vl.gguf --arch qwen2vl --mmproj-out mmproj.gguf --v-n-layer 4
#include "tools/common/cli_checks.h"
#include "tools/common/comma_list.h"
#include "tools/pshard-mkmodel/model_generator.h"
#include "tools/pshard-mkmodel/projector_generator.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

namespace cli = pshard::cli;

int main(int argc, char** argv) {
  pshard::ModelSpec spec;
  std::string out, type = "f32", overrides;
  CLI::App app{"pshard-mkmodel: write a GGUF model of any supported family with deterministic "
               "random weights"};
  const CLI::Validator count = cli::between(1, 1 << 20), size = cli::between(1, 1 << 24);
  app.add_option("-o,--output", out, "GGUF file to write (the language model)");
  app.add_option("--arch", spec.arch,
                 "architecture family: llama, qwen2, qwen2vl, qwen2moe, qwen3, qwen3moe, gemma2, "
                 "gemma3, gemma-embedding, phi3, granite, granitemoe, mistral3, smollm3, "
                 "gpt-oss, bert, nomic-bert")
      ->capture_default_str();
  app.add_option("--n-embd", spec.n_embd, "embedding width")->capture_default_str()->check(size);
  app.add_option("--n-layer", spec.n_layer, "transformer layers")->capture_default_str()->check(count);
  app.add_option("--n-head", spec.n_head, "attention heads")->capture_default_str()->check(count);
  app.add_option("--n-head-kv", spec.n_head_kv, "KV heads (0: same as --n-head)")
      ->capture_default_str()->check(cli::between(0, 1 << 20));
  app.add_option("--head-dim", spec.head_dim,
                 "head size, written as attention.key_length (0: n_embd / n_head)")
      ->capture_default_str()->check(cli::between(0, 1 << 16));
  app.add_option("--n-ff", spec.n_ff, "FFN width (per expert for MoE)")->capture_default_str()->check(size);
  app.add_option("--n-expert", spec.n_expert, "experts per MoE layer (0: dense)")
      ->capture_default_str()->check(cli::between(0, 1 << 16));
  app.add_option("--n-expert-used", spec.n_expert_used, "experts used per token")
      ->capture_default_str()->check(cli::between(0, 1 << 16));
  app.add_option("--n-ff-shexp", spec.n_ff_shexp,
                 "shared expert width (qwen2moe: 0 is 4 x --n-ff; glm4moe: a multiple of "
                 "--n-ff, 0 is one expert's)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 24));
  app.add_option("--n-dense-lead", spec.n_dense_lead,
                 "MoE: leading layers with a dense FFN (leading_dense_block_count)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 16));
  app.add_option("--moe-layer-step", spec.moe_layer_step,
                 "MoE: after the dense leads only every N-th layer routes, the others dense "
                 "(interleave_moe_layer_step)")
      ->capture_default_str()
      ->check(cli::between(1, 64));
  app.add_option("--expert-groups", spec.n_expert_groups,
                 "MoE: group-limited routing over this many groups of experts "
                 "(expert_group_count; 0: none)")
      ->capture_default_str()
      ->check(cli::between(0, 64));
  app.add_option("--expert-groups-used", spec.n_expert_groups_used,
                 "MoE: the groups a token's experts come from (expert_group_used_count)")
      ->capture_default_str()
      ->check(cli::between(0, 64));
  app.add_option("--n-ff-dense", spec.n_ff_dense,
                 "MoE: the dense layers' FFN width (0: 3 x --n-ff)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 24));
  app.add_option("--expert-weights-scale", spec.expert_weights_scale,
                 "MoE: the routed weights' factor (expert_weights_scale; GLM-4.5's 2.5)")
      ->capture_default_str()
      ->check(cli::positive());
  app.add_option("--nextn-layers", spec.n_nextn,
                 "blocks after the model's, as GLM-4.5's multi-token-prediction head "
                 "(nextn_predict_layers; not run)")
      ->capture_default_str()
      ->check(cli::between(0, 16));
  app.add_option("--rope-dim", spec.rope_dim,
                 "values of each head RoPE rotates (rope.dimension_count; 0: the head size; "
                 "GLM's converters write half)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 16));
  app.add_option("--kv-lora-rank", spec.kv_lora_rank,
                 "latent attention (deepseek2): the latent's width (0: twice the head size)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 16));
  app.add_option("--q-lora-rank", spec.q_lora_rank,
                 "latent attention: the queries' low rank (attn_q_a/attn_q_b; 0: one attn_q)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 16));
  app.add_option("--head-dim-v", spec.head_dim_v,
                 "latent attention: each head's value width (0: the head size less --rope-dim)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 16));
  app.add_flag("--mla-kv-b", spec.mla_kv_b,
               "latent attention in the older files' form: one attn_kv_b and no *_mla keys, as "
               "llama.cpp converted DeepSeek before 2025");
  app.add_option("--ssm-state", spec.ssm_state,
                 "Gated DeltaNet (qwen3next): a head's key and value width (ssm.state_size; 0: "
                 "the head size)")
      ->capture_default_str()
      ->check(cli::between(0, 4096));
  app.add_option("--ssm-groups", spec.ssm_groups,
                 "Gated DeltaNet: the k heads (ssm.group_count; 0: --n-head-kv's count)")
      ->capture_default_str()
      ->check(cli::between(0, 1024));
  app.add_option("--ssm-v-heads", spec.ssm_v_heads,
                 "Gated DeltaNet: the v heads (ssm.time_step_rank; 0: --n-head's count)")
      ->capture_default_str()
      ->check(cli::between(0, 1024));
  app.add_option("--ssm-conv", spec.ssm_conv, "Gated DeltaNet: the conv's taps (ssm.conv_kernel)")
      ->capture_default_str()
      ->check(cli::between(1, 8));
  app.add_option("--n-deepstack", spec.n_deepstack,
                 "qwen3vl: the first layers that add an image's DeepStack rows (match the "
                 "projector's --v-deepstack count)")
      ->check(cli::between(0, 1 << 16));
  app.add_option("--full-attention-interval", spec.full_attention_interval,
                 "Gated DeltaNet: every this-many-th layer attends, the others recur")
      ->capture_default_str()
      ->check(cli::between(1, 1024));
  app.add_flag("--ssm-in", spec.ssm_in,
               "Gated DeltaNet (qwen3next): one ssm_in for q, k, v and z grouped per k head, as "
               "the first conversions wrote it");
  app.add_flag("--qkv-bias", spec.qkv_bias, "llama: add attn_q/k/v biases (qwen2 families have them)");
  app.add_option("--vocab", spec.n_vocab, "vocabulary size (0: the tokenizer's, or 512)")
      ->capture_default_str()->check(cli::between(0, 1 << 24));
  app.add_option("--ctx", spec.n_ctx, "training context length in the metadata")
      ->capture_default_str()->check(size);
  app.add_option("--rope-freq-base", spec.rope_freq_base, "RoPE base frequency")
      ->capture_default_str()->check(cli::positive());
  app.add_option("--rope-scaling", spec.rope_scaling,
                 "RoPE scaling: none, linear, yarn, llama3, longrope (phi3: factor tensors)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "linear", "yarn", "llama3", "longrope"}));
  app.add_option("--rope-scaling-factor", spec.rope_scaling_factor, "RoPE scaling factor")
      ->capture_default_str()->check(cli::between(1, 1024));
  app.add_option("--rope-orig-ctx", spec.rope_ctx_orig,
                 "yarn/llama3: the original context (0: --ctx / factor)")
      ->capture_default_str()->check(cli::between(0, 1 << 24));
  app.add_option("--seed", spec.seed, "seed of the random weights")->capture_default_str();
  app.add_option("--type", type,
                 "weight type (" + pshard::supported_tensor_type_list() +
                     ") or llama-quantize mix (q4_k_m, q5_k_m, q3_k_m, q2_k, mxfp4_moe)")
      ->capture_default_str();
  app.add_option("--override", overrides,
                 "per-class types, e.g. ffn_down=f32,token_embd=q8_0");
  app.add_option("--tokenizer-from", spec.tokenizer_from, "copy the tokenizer of this GGUF");
  // Plain strings split here: CLI11 reads a list option's "[a],[b]" as its own bracketed
  // list syntax and strips the brackets Mistral's tokens have.
  std::string control_tokens, user_tokens;
  app.add_option("--control-tokens", control_tokens,
                 "extra control tokens at the end of the generated vocabulary, e.g. "
                 "'<|fim_prefix|>,<|fim_suffix|>'");
  app.add_option("--user-tokens", user_tokens,
                 "then user-defined tokens (their text is shown), e.g. '<think>,</think>'");
  app.add_option("--name", spec.name, "general.name")->capture_default_str();
  app.add_flag("--tied-output", spec.tied_output, "no output.weight: the head reuses token_embd");
  app.add_option(
         "--sliding-window", spec.sliding_window,
         "gemma2/gemma3/gpt-oss: write attention.sliding_window (the positions a local layer "
         "sees; 0: none)")
      ->check(cli::between(0, 1 << 24));
  app.add_option("--attn-softcap", spec.attn_softcap,
                 "gemma2: write attn_logit_softcapping (0: off)")
      ->check(cli::between(0, 1000));
  app.add_option("--attn-temperature-scale", spec.attn_temperature_scale,
                 "mistral3: write attention.temperature_scale (the queries' growth per original "
                 "context of positions)")
      ->check(cli::between(0, 100));
  app.add_option("--attn-chunk", spec.attn_chunk,
                 "llama4: write attention.chunk_size (positions of an attention chunk; without "
                 "it 8192, llama.cpp's)")
      ->check(cli::between(1, 1 << 20));
  app.add_option("--final-softcap", spec.final_softcap,
                 "gemma2/gemma3: write final_logit_softcapping (0: off)")
      ->check(cli::between(0, 1000));
  app.add_option("--pooling-type", spec.pooling_type,
                 "write {arch}.pooling_type, as an embedding model has: 0 none, 1 mean, 2 cls, "
                 "3 last (-1: not written)")
      ->check(cli::between(-1, 3));
  app.add_flag("--non-causal", spec.non_causal,
               "write attention.causal false: a decoder that attends both ways, as gte-Qwen2's "
               "conversions (embeddings only)");
  app.add_flag("--rerank", spec.rerank,
               "a reranker as llama.cpp converts Qwen3-Reranker: pooling_type rank, a two-row "
               "classification head (cls.output, labels yes and no) and its prompt "
               "(tokenizer.chat_template.rerank); for an encoder, as bge-reranker: a tanh "
               "pooler (cls) and one score (cls.output), the pair framed by its vocabulary");
  app.add_option("--dense-projection", spec.dense_projection,
                 "an embedding model's sentence-transformers Dense modules after pooling, as "
                 "llama.cpp converts EmbeddingGemma: dense_2 (n_embd -> N) and dense_3 (N -> "
                 "n_embd); 0: none")
      ->check(cli::between(0, 1 << 20));
  app.add_option("--token-types", spec.n_token_types,
                 "encoders: token types, the rows of token_types (BERT 2; XLM-RoBERTa models "
                 "such as bge-m3 and bge-reranker 1)")
      ->capture_default_str()
      ->check(cli::between(1, 16));
  app.add_flag("--sparse", spec.sparse, "write headers only, leaving the data as a file hole");
  app.add_option("--split-max-tensors", spec.split_max_tensors,
                 "write a split model (llama.cpp gguf-split's layout) of at most N tensors a "
                 "file: OUT-00001-of-0000K.gguf ... (OUT without .gguf)")
      ->check(cli::between(0, 1 << 24));
  pshard::ProjectorSpec proj;
  std::string mmproj_out, mmproj_type = "qwen2.5vl_merger", v_type = "f32";
  app.add_option("--mmproj-out", mmproj_out,
                 "also write a vision projector (llama.cpp's mmproj GGUF) whose embeddings "
                 "have the model's --n-embd");
  app.add_option("--mmproj-type", mmproj_type, "projector type")
      ->capture_default_str()
      ->check(CLI::IsMember({"qwen2.5vl_merger", "qwen2vl_merger", "qwen3vl_merger"}));
  app.add_option("--v-deepstack", proj.hp.deepstack,
                 "qwen3vl: the blocks that feed a DeepStack merger, comma-separated (e.g. 0,2)")
      ->delimiter(',');
  app.add_option("--v-n-embd", proj.hp.n_embd, "vision tower width")
      ->capture_default_str()
      ->check(size);
  app.add_option("--v-n-ff", proj.hp.n_ff, "vision FFN width")->capture_default_str()->check(size);
  app.add_option("--v-n-layer", proj.hp.n_layer, "vision blocks")
      ->capture_default_str()
      ->check(count);
  app.add_option("--v-n-head", proj.hp.n_head, "vision heads")->capture_default_str()->check(count);
  app.add_option("--v-patch-size", proj.hp.patch_size, "patch side in pixels")
      ->capture_default_str()
      ->check(cli::between(1, 1024));
  app.add_option("--v-image-size", proj.hp.image_size, "cap on an image's longer side")
      ->capture_default_str()
      ->check(cli::between(1, 1 << 16));
  app.add_option("--v-wa-pattern", proj.hp.n_wa_pattern,
                 "qwen2.5vl: every N-th block attends fully, the others in windows (0: all)")
      ->capture_default_str()
      ->check(cli::between(0, 1 << 16));
  app.add_option("--v-window-size", proj.hp.window_size, "attention window side in pixels")
      ->capture_default_str()
      ->check(cli::between(1, 1 << 16));
  app.add_option("--v-type", v_type, "projector matrix type (f32, f16)")
      ->capture_default_str()
      ->check(CLI::IsMember({"f32", "f16"}));
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const pshard::Status& s) {
    std::cerr << "pshard-mkmodel: " << s.to_string() << "\n";
    return 1;
  };
  if (out.empty() && mmproj_out.empty())
    return fail(pshard::invalid_argument("give -o FILE (a model), --mmproj-out FILE (a "
                                         "projector) or both"));
  if (!mmproj_out.empty()) {
    proj.hp.type = mmproj_type == "qwen2vl_merger"   ? pshard::ProjectorType::kQwen2Vl
                   : mmproj_type == "qwen3vl_merger" ? pshard::ProjectorType::kQwen3Vl
                                                     : pshard::ProjectorType::kQwen25Vl;
    proj.type_matrices = v_type == "f16" ? pshard::TensorType::kF16 : pshard::TensorType::kF32;
    proj.hp.projection_dim = spec.n_embd;
    proj.seed = spec.seed + 1;
    proj.sparse = spec.sparse;
    if (pshard::Status s = pshard::write_projector(proj, mmproj_out); !s.ok())
      return fail(s);
  }
  if (out.empty())
    return 0;
  spec.control_tokens = pshard::comma_list(control_tokens, /*keep_empty=*/true);
  spec.user_tokens = pshard::comma_list(user_tokens, /*keep_empty=*/true);
  if (pshard::Status s = pshard::parse_type_or_mix(type, &spec); !s.ok())
    return fail(s);
  if (pshard::Status s = pshard::parse_type_overrides(overrides, &spec); !s.ok())
    return fail(s);
  if (pshard::Status s = pshard::write_model(spec, out); !s.ok())
    return fail(s);
  return 0;
}
