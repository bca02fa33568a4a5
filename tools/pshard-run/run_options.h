// pshard-run's options, with llama.cpp's flag names where they exist.
#pragma once

#include "pshard/pshard.h"
#include "runtime/generate/draft_model.h"
#include "runtime/model/hparam_overrides.h"
#include "runtime/sampler/sampler.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pshard {

struct RunOptions {
  std::string model_path;
  std::string prompt;
  std::string prompt_file;
  int32_t n_predict = 128;
  int32_t n_threads = 0;
  std::string ctx_size = "0"; // a size: K/M suffixes allowed
  int64_t n_batch = 256;
  SamplerParams sampling; // logit_bias filled from logit_bias_args by run()
  std::vector<std::string> logit_bias_args; // -l TOKEN(+|-)BIAS, llama.cpp's form
  std::vector<pshard_logit_bias> logit_bias; // the same, for the C API
  std::vector<std::string> dry_breaker_args; // --dry-sequence-breaker, as typed
  // The same unescaped (run() fills them): nullopt for the defaults, empty for "none";
  // and as C strings for the C API.
  std::optional<std::vector<std::string>> dry_breakers;
  std::vector<const char*> dry_breaker_cstrs;
  // sampling.order as the C API takes it (run() fills it; nullopt: the default order).
  std::optional<std::string> sampler_names;
  int64_t seed = -1; // -1: a random seed, reported in the output
  bool ignore_eos = false;
  bool parse_special = true; // --no-parse-special: "<s>" etc. in the prompt stay text
  bool no_mmap = false; // --no-mmap: weights read into huge-page RAM
  bool json = false;
  int32_t top_logprobs = 0;
  // Speculative decoding (runtime/generate/prompt_lookup.h, draft_model.h); 0: off, or
  // kDefaultDraftMax with a draft model.
  int32_t draft_max = 0;
  std::string draft_model_path; // -md: drafts from this model instead of the context
  float draft_p_min = kDefaultDraftPMin; // --draft-p-min
  bool swa_full = false;
  int32_t lookup_ngram_min = 2;
  int32_t lookup_ngram_max = 4;
  bool draft_fixed = false; // --draft-fixed: check every drafted token (no adaptation)
  // Structured output (runtime/grammar/output_constraint.h): GBNF or a JSON Schema, given
  // inline (--grammar, -j) or read from a file (--grammar-file, --json-schema-file).
  std::string grammar;
  std::string grammar_file;
  std::string json_schema;
  std::string json_schema_file;
  // The hybrid runtime.
  std::string schedule_path;    // -s: a *.pshard artifact; empty: everything on the CPU
  std::string backend = "auto"; // auto: emu with a schedule (cuda once built), else cpu
  std::string vram;             // a size; empty: the schedule's largest budget
  double emu_pcie_gbps = 0;     // 0: the link the schedule was planned with
  std::string trace_path;       // Chrome/Perfetto trace of every pass
  RopeFlags rope;               // --rope-scaling, --rope-scale, --yarn-*: the file's rope keys
  std::vector<std::string> override_kv; // --override-kv KEY=TYPE:VALUE
  std::vector<std::string> lora, lora_scaled; // --lora FNAME, --lora-scaled FNAME SCALE
  std::string prompt_cache;     // --prompt-cache FILE: the prompt's state kept between runs
  bool prompt_cache_ro = false; // --prompt-cache-ro: read it, never write it
  bool prompt_cache_all = false; // --prompt-cache-all: the answer saved too
  std::string cache_type_k;     // -ctk: f32, f16, q8_0; empty: the schedule's, or f16
  std::string cache_type_v;     // -ctv
  // --conversation (-cnv): chat on stdin/stdout (conversation.h).
  bool conversation = false;
  std::string system_prompt; // --system (-sys)
  std::string chat_template; // --chat-template NAME; empty: the model's own
  // Vision-language models (llama-mtmd-cli's flags; image_run.h).
  std::string mmproj_path; // --mmproj: the projector file
  std::vector<std::string> image_paths; // --image, once per image, in prompt order
  // --image-min-tokens / --image-max-tokens (0, 0: the longer side capped at image_size).
  int64_t image_min_tokens = 0, image_max_tokens = 0;
  // --embedding: the prompt's embedding instead of text (embedding_run.h).
  bool embedding = false;
  std::string pooling;     // --pooling mean|cls|last|none; empty: the model's
  int32_t embd_normalize = 2; // 2: unit Euclidean length; -1: none (llama.cpp's values)
  int32_t dimensions = 0;  // --dimensions: keep the first N values (Matryoshka); 0: all
  std::string embd_separator = "\n"; // --embd-separator: the prompt's texts; "": one text
};

} // namespace pshard
