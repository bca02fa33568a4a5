// pshard-mkmodel: write a synthetic llama-family GGUF of any shape.
//
//   pshard-mkmodel -o llama-1b.gguf --n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8 \
//       --n-ff 8192 --type q4_0 --tokenizer-from ../shared/vocab/ggml-vocab-llama-spm.gguf
//   pshard-mkmodel -o qwen3-235b-shape.gguf --sparse --n-embd 4096 --n-layer 94 ...
#include "tools/pshard-mkmodel/model_generator.h"

#include <CLI/CLI.hpp>

#include <iostream>

int main(int argc, char** argv) {
  pshard::ModelSpec spec;
  std::string out, type = "f32", overrides;
  CLI::App app{"pshard-mkmodel: write a llama-family GGUF with deterministic random weights"};
  app.add_option("-o,--output", out, "GGUF file to write")->required();
  app.add_option("--n-embd", spec.n_embd, "embedding width")->capture_default_str();
  app.add_option("--n-layer", spec.n_layer, "transformer layers")->capture_default_str();
  app.add_option("--n-head", spec.n_head, "attention heads")->capture_default_str();
  app.add_option("--n-head-kv", spec.n_head_kv, "KV heads (0: same as --n-head)")->capture_default_str();
  app.add_option("--n-ff", spec.n_ff, "FFN width (per expert for MoE)")->capture_default_str();
  app.add_option("--n-expert", spec.n_expert, "experts per MoE layer (0: dense)")->capture_default_str();
  app.add_option("--n-expert-used", spec.n_expert_used, "experts used per token")->capture_default_str();
  app.add_option("--vocab", spec.n_vocab, "vocabulary size (0: the tokenizer's, or 512)")->capture_default_str();
  app.add_option("--ctx", spec.n_ctx, "training context length in the metadata")->capture_default_str();
  app.add_option("--rope-freq-base", spec.rope_freq_base, "RoPE base frequency")->capture_default_str();
  app.add_option("--seed", spec.seed, "seed of the random weights")->capture_default_str();
  app.add_option("--type", type,
                 "weight type (" + pshard::supported_tensor_type_list() +
                     ") or llama-quantize mix (q4_k_m, q5_k_m, q3_k_m, q2_k)")
      ->capture_default_str();
  app.add_option("--override", overrides,
                 "per-class types, e.g. ffn_down=f32,token_embd=q8_0");
  app.add_option("--tokenizer-from", spec.tokenizer_from, "copy the tokenizer of this GGUF");
  app.add_option("--name", spec.name, "general.name")->capture_default_str();
  app.add_flag("--tied-output", spec.tied_output, "no output.weight: the head reuses token_embd");
  app.add_flag("--sparse", spec.sparse, "write headers only, leaving the data as a file hole");
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const pshard::Status& s) {
    std::cerr << "pshard-mkmodel: " << s.to_string() << "\n";
    return 1;
  };
  if (pshard::Status s = pshard::parse_type_or_mix(type, &spec); !s.ok())
    return fail(s);
  if (pshard::Status s = pshard::parse_type_overrides(overrides, &spec); !s.ok())
    return fail(s);
  if (pshard::Status s = pshard::write_llama_model(spec, out); !s.ok())
    return fail(s);
  return 0;
}
