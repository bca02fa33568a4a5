// pshard-run: generate text with a GGUF model, on the CPU or across the CPU and a
// (real or emulated) GPU with a precompiled schedule. Built on the C API (pshard.h).
//
//   pshard-run -m stories260K.gguf -p "Once upon a time" -n 32 --temp 0
//   pshard-run -m model.gguf -s model.pshard --backend emu --vram 512M --trace trace.json
//   pshard-run -m model.gguf -f prompt.txt --json --top-logprobs 3
//   pshard-run -m chat-model.gguf -cnv -sys "Be brief."            # chat on stdin/stdout
//   pshard-run -m qwen2vl.gguf --mmproj mmproj.gguf --image cat.png -p "<__media__>What is it?"
#include "runtime/core/file_bytes.h"
#include "runtime/generate/prompt_lookup.h"
#include "tools/common/cli_checks.h"
#include "tools/common/cli_draft_options.h"
#include "tools/common/cli_hybrid_options.h"
#include "tools/common/cli_image_options.h"
#include "tools/common/cli_kv_options.h"
#include "tools/common/cli_lora_options.h"
#include "tools/common/cli_override_kv.h"
#include "tools/common/cli_rope_options.h"
#include "tools/common/cli_sampler_options.h"
#include "tools/common/llama_compat.h"
#include "tools/common/llama_flags.h"
#include "tools/pshard-run/conversation.h"
#include "tools/pshard-run/embedding_run.h"
#include "tools/pshard-run/image_run.h"
#include "tools/pshard-run/run_options.h"
#include "tools/pshard-run/run_report.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <unistd.h>

namespace cli = pshard::cli;

namespace pshard {
namespace {

Result<std::string> read_prompt(const RunOptions& o) {
  if (o.prompt_file.empty())
    return o.prompt;
  return read_text_file(o.prompt_file, "prompt file (-f)");
}

// llama.cpp's -l TOKEN(+|-)BIAS: "15043+1.5", "2-inf" (a ban).
Result<LogitBias> parse_logit_bias(const std::string& arg) {
  const size_t sign = arg.find_first_of("+-", 1);
  const auto bad = [&] {
    return invalid_argument("--logit-bias " + arg +
                            ": expected TOKEN_ID+BIAS or TOKEN_ID-BIAS (e.g. 15043+1.5, 2-inf)");
  };
  if (sign == std::string::npos)
    return bad();
  char* end = nullptr;
  const long long id = std::strtoll(arg.c_str(), &end, 10);
  if (end != arg.c_str() + sign || id < 0 || id > INT32_MAX)
    return bad();
  const std::string value = arg.substr(sign + 1);
  float bias = 0;
  if (value == "inf") {
    bias = std::numeric_limits<float>::infinity();
  } else {
    bias = std::strtof(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(bias))
      return bad();
  }
  return LogitBias{static_cast<TokenId>(id), arg[sign] == '-' ? -bias : bias};
}

Status run(RunOptions o) {
  for (const std::string& arg : o.logit_bias_args) {
    PSHARD_ASSIGN_OR_RETURN(LogitBias b, parse_logit_bias(arg));
    o.sampling.logit_bias.push_back(b);
    o.logit_bias.push_back({b.token, b.bias});
  }
  PSHARD_ASSIGN_OR_RETURN(o.dry_breakers, cli::dry_breakers(o.dry_breaker_args));
  if (o.dry_breakers)
    o.dry_breaker_cstrs = c_strings(*o.dry_breakers);
  PSHARD_RETURN_IF_ERROR(validate_sampler_params(o.sampling));
  o.sampler_names = sampler_order_names(o.sampling.order);
  if (!o.grammar_file.empty()) {
    PSHARD_ASSIGN_OR_RETURN(o.grammar, read_text_file(o.grammar_file, "grammar file"));
  }
  if (!o.json_schema_file.empty()) {
    PSHARD_ASSIGN_OR_RETURN(o.json_schema, read_text_file(o.json_schema_file, "JSON schema file"));
  }
  o.draft_max = cli::draft_max_with(o.draft_model_path, o.draft_max);
  if (o.conversation)
    return run_conversation(o, std::cin, std::cout, std::cerr, ::isatty(STDIN_FILENO) == 1);
  PSHARD_ASSIGN_OR_RETURN(std::string prompt_text, read_prompt(o));
  if (o.mmproj_path.empty() != o.image_paths.empty())
    return invalid_argument("--mmproj and --image go together: the projector file encodes the "
                            "images");
  if (!o.image_paths.empty())
    return run_image_prompt(o, prompt_text, std::cout, std::cerr);
  if (o.embedding)
    return run_embedding(o, prompt_text, std::cout);
  PSHARD_ASSIGN_OR_RETURN(RunResult result, run_generation(o, prompt_text));
  if (o.json)
    write_json_report(std::cout, result);
  else
    write_text_report(std::cout, std::cerr, result);
  return Status::ok_status();
}

} // namespace
} // namespace pshard

int main(int argc, char** argv) {
  pshard::RunOptions o;
  CLI::App app{"pshard-run: generate text with a GGUF model"};
  app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
  cli::add_hybrid_options(app, o.schedule_path, o.backend, o.vram, o.emu_pcie_gbps);
  app.add_option("--trace", o.trace_path, "write a Chrome/Perfetto trace of every pass");
  cli::add_kv_type_options(app, o.cache_type_k, o.cache_type_v);
  cli::add_rope_options(app, o.rope);
  cli::add_override_kv_option(app, o.override_kv);
  cli::add_lora_options(app, o.lora, o.lora_scaled);
  app.add_option("-p,--prompt", o.prompt, "prompt text");
  auto* cache = app.add_option("--prompt-cache", o.prompt_cache,
                               "keep the prompt's decoded state in this file between runs: a "
                               "prompt that starts as the saved one decodes only the rest");
  auto* read_only = app.add_flag("--prompt-cache-ro", o.prompt_cache_ro,
                                 "with --prompt-cache: read the file, never write it")
                        ->needs(cache);
  app.add_flag("--prompt-cache-all", o.prompt_cache_all,
               "with --prompt-cache: save the answer's state too, so a next prompt that goes "
               "on from it (the prompt, the answer, more) decodes only the more")
      ->needs(cache)
      ->excludes(read_only);
  app.add_option("-f,--file", o.prompt_file, "read the prompt from a file")->excludes("-p");
  app.add_option("-n,--n-predict", o.n_predict,
                 "tokens to generate (-1: until the context is full)")
      ->check(cli::at_least(-1));
  app.add_option("-t,--threads", o.n_threads, "CPU threads (0: all)")
      ->check(cli::between(0, cli::kMaxThreads));
  app.add_option("-c,--ctx-size", o.ctx_size,
                 "context length in tokens, K suffix allowed (0: model's, at most 4096)");
  app.add_option("-b,--batch-size", o.n_batch, "most tokens per forward pass (without a schedule)")
      ->check(cli::between(1, 1 << 20));
  cli::add_sampler_options(app, o.sampling, o.dry_breaker_args);
  app.add_option("-l,--logit-bias", o.logit_bias_args,
                 "TOKEN_ID+BIAS or TOKEN_ID-BIAS added to that token's logit; -inf bans it "
                 "(repeatable)");
  app.add_option("--seed", o.seed, "RNG seed (-1: random)")->check(cli::at_least(-1));
  app.add_flag("--ignore-eos", o.ignore_eos, "keep generating past end-of-sequence");
  app.add_flag("!--no-parse-special", o.parse_special,
               "tokenize control-token text in the prompt (\"<s>\", \"<|im_end|>\") as plain text");
  app.add_flag("--no-mmap", o.no_mmap,
               "read the weights into RAM on huge pages instead of using the file mapping "
               "(a copy in memory; faster decoding)");
  app.add_flag("--json", o.json, "print one JSON object instead of streaming text");
  app.add_option("--top-logprobs", o.top_logprobs,
                 "with --json: the N most likely tokens per position")
      ->check(cli::between(0, 1000));
  app.add_flag("--swa-full", o.swa_full,
               "whole KV caches for sliding-window layers (Gemma, gpt-oss) instead of rings of "
               "window + largest pass positions: more memory; with a schedule, one compiled "
               "with pshard-compile --swa-full");
  app.add_option("--draft-max", o.draft_max,
                 "prompt-lookup speculative decoding: check up to N tokens drafted from the "
                 "context in each decode pass, as many as pay (same tokens as without; 0: off)")
      ->check(cli::between(0, pshard::kMaxDraftTokens));
  cli::add_draft_model_options(app, o.draft_model_path, o.draft_p_min);
  app.add_flag("--draft-fixed", o.draft_fixed,
               "with --draft-max: check every drafted token, instead of as many as pay by the "
               "pass times and acceptance measured so far");
  app.add_option("--lookup-ngram-min", o.lookup_ngram_min,
                 "with --draft-max: the shortest context suffix looked up (default 2)")
      ->check(cli::between(1, 64));
  app.add_option("--lookup-ngram-max", o.lookup_ngram_max,
                 "with --draft-max: the longest, tried first (default 4)")
      ->check(cli::between(1, 64));
  auto* grammar = app.add_option("--grammar", o.grammar,
                                 "generate only text this GBNF grammar derives (start rule `root`)");
  auto* grammar_file =
      app.add_option("--grammar-file", o.grammar_file, "--grammar, read from a file")
          ->excludes(grammar);
  auto* schema = app.add_option("-j,--json-schema", o.json_schema,
                                "generate only JSON valid under this JSON Schema")
                     ->excludes(grammar)
                     ->excludes(grammar_file);
  app.add_option("--json-schema-file", o.json_schema_file, "--json-schema, read from a file")
      ->excludes(grammar)
      ->excludes(grammar_file)
      ->excludes(schema);
  app.add_flag("--conversation", o.conversation,
               "chat (-cnv): each line of stdin is a user message, answered with the model's "
               "chat template until EOF")
      ->excludes("-p")
      ->excludes("-f")
      ->excludes("--json")
      ->excludes("--prompt-cache");
  app.add_option("--system", o.system_prompt, "with --conversation: a system message (-sys)");
  app.add_option("--chat-template", o.chat_template,
                 "with --conversation: a template by name instead of the model's (chatml, "
                 "llama3, mistral-v7, ...; an unknown name lists them)");
  app.add_option("--mmproj", o.mmproj_path,
                 "vision projector file (mmproj GGUF) of a Qwen-VL model (Qwen2-VL, Qwen2.5-VL, "
                 "Qwen3-VL, Qwen3.5); with --image, or --conversation's /image PATH");
  app.add_option("--image", o.image_paths,
                 "an image (PNG, JPEG) for the prompt; once per image: the i-th at the "
                 "prompt's i-th \"<__media__>\" or <|vision_start|>...<|vision_end|>, or "
                 "all before a prompt that names no place; with --conversation, the first "
                 "message's")
      ->allow_extra_args(false)
      ->excludes("--prompt-cache");
  cli::add_image_token_options(app, o.image_min_tokens, o.image_max_tokens, "--mmproj");
  app.add_flag("--embedding,--embeddings", o.embedding,
               "print the prompt's embedding (final hidden states after the output norm, "
               "pooled) instead of generating: one vector per line, or JSON with --json")
      ->excludes("--conversation")
      ->excludes("--image")
      ->excludes("--prompt-cache");
  app.add_option("--pooling", o.pooling,
                 "with --embedding: mean, cls, last or none (every token's row); default: "
                 "the model's pooling_type")
      ->check(CLI::IsMember({"mean", "cls", "last", "none"}));
  app.add_option("--embd-normalize", o.embd_normalize,
                 "with --embedding: 2 (default) unit Euclidean length, -1 none");
  app.add_option("--embd-separator", o.embd_separator,
                 "with --embedding: the prompt holds one text per piece between these (default "
                 "a newline, as llama-embedding; \"\" embeds the whole prompt as one text)");
  app.add_option("--dimensions", o.dimensions,
                 "with --embedding: keep the first N values (Matryoshka models), before "
                 "normalizing; 0 (default): all")
      ->check(CLI::NonNegativeNumber);
  constexpr pshard::FlagSpelling kLlamaFlags[] = {{"-cnv", "--conversation"},
                                                  {"-sys", "--system"},
                                                  {"-ctk", "--cache-type-k"},
                                                  {"-ctv", "--cache-type-v"},
                                                  {"-md", "--model-draft"}};
  std::vector<std::string> notes;
  auto absorbed = pshard::absorb_llama_flags(pshard::expand_llama_flags(argc, argv, kLlamaFlags),
                                             pshard::kLlamaModelCompat, &notes);
  if (!absorbed.ok()) {
    std::cerr << "pshard-run: " << absorbed.status().message() << "\n";
    return 2;
  }
  for (const std::string& note : notes)
    std::cerr << "pshard-run: " << note << "\n";
  const std::vector<std::string> args = std::move(*absorbed);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args)
    arg_ptrs.push_back(a.c_str());
  CLI11_PARSE(app, static_cast<int>(arg_ptrs.size()), arg_ptrs.data());

  pshard::Status status = pshard::run(o);
  if (!status.ok()) {
    std::cerr << "pshard-run: " << status.to_string() << "\n";
    return 1;
  }
  return 0;
}
