// pshard-run: generate text with a GGUF model.
//
//   pshard-run -m stories260K.gguf -p "Once upon a time" -n 32 --temp 0
//   pshard-run -m model.gguf -f prompt.txt --json --top-logprobs 3
#include "tools/pshard-run/run_options.h"
#include "tools/pshard-run/run_report.h"

#include "runtime/generate/generator.h"
#include "tools/common/size_parse.h"

#include <CLI/CLI.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

namespace pshard {
namespace {

Result<std::string> read_prompt(const RunOptions& o) {
  if (o.prompt_file.empty())
    return o.prompt;
  std::ifstream in(o.prompt_file, std::ios::binary);
  if (!in)
    return io_error("cannot read prompt file '" + o.prompt_file + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status run(RunOptions o) {
  PSHARD_ASSIGN_OR_RETURN(uint64_t n_ctx, parse_size(o.ctx_size));
  PSHARD_ASSIGN_OR_RETURN(std::string prompt_text, read_prompt(o));
  PSHARD_ASSIGN_OR_RETURN(auto model, LlamaModel::load(o.model_path));
  PSHARD_ASSIGN_OR_RETURN(auto tokenizer, Tokenizer::from_gguf(model->file()));
  if (tokenizer->n_vocab() != model->hparams().n_vocab)
    return invalid_format("the tokenizer has " + std::to_string(tokenizer->n_vocab()) +
                          " tokens but the model's embedding has " +
                          std::to_string(model->hparams().n_vocab));
  PSHARD_ASSIGN_OR_RETURN(auto session,
                          LlamaSession::create(*model, {static_cast<int64_t>(n_ctx), o.n_threads,
                                                        o.n_batch}));
  o.sampling.seed = o.seed >= 0 ? static_cast<uint64_t>(o.seed) : std::random_device{}();
  PSHARD_ASSIGN_OR_RETURN(Sampler sampler, Sampler::create(o.sampling));

  std::vector<TokenId> prompt = tokenizer->encode(prompt_text, tokenizer->add_bos_by_default());
  GenerateParams gp;
  gp.n_predict = o.n_predict;
  gp.ignore_eos = o.ignore_eos;
  gp.top_logprobs = o.top_logprobs;
  TokenCallback stream = nullptr;
  if (!o.json) {
    std::cout << prompt_text << std::flush;
    stream = [](const TokenEvent& e) {
      std::cout << e.text << std::flush;
      return true;
    };
  }
  PSHARD_ASSIGN_OR_RETURN(GenerateResult result,
                          generate(*session, *tokenizer, sampler, prompt, gp, stream));
  const RunReport report{*model, *session, result, o.sampling.seed};
  if (o.json)
    write_json_report(std::cout, report);
  else
    write_text_report(std::cout, std::cerr, report);
  return Status::ok_status();
}

} // namespace
} // namespace pshard

int main(int argc, char** argv) {
  pshard::RunOptions o;
  CLI::App app{"pshard-run: generate text with a GGUF model"};
  app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
  app.add_option("-p,--prompt", o.prompt, "prompt text");
  app.add_option("-f,--file", o.prompt_file, "read the prompt from a file")->excludes("-p");
  app.add_option("-n,--n-predict", o.n_predict, "tokens to generate (-1: until the context is full)");
  app.add_option("-t,--threads", o.n_threads, "CPU threads (0: all)")->check(CLI::NonNegativeNumber);
  app.add_option("-c,--ctx-size", o.ctx_size, "context length in tokens, K suffix allowed (0: model's, at most 4096)");
  app.add_option("-b,--batch-size", o.n_batch, "most tokens per forward pass")->check(CLI::PositiveNumber);
  app.add_option("--temp", o.sampling.temperature, "temperature (0: greedy)");
  app.add_option("--top-k", o.sampling.top_k, "top-k sampling (0: off)");
  app.add_option("--top-p", o.sampling.top_p, "top-p sampling (1: off)");
  app.add_option("--min-p", o.sampling.min_p, "min-p sampling (0: off)");
  app.add_option("--repeat-penalty", o.sampling.repeat_penalty, "repetition penalty (1: off)");
  app.add_option("--repeat-last-n", o.sampling.repeat_last_n, "tokens the penalty looks back over");
  app.add_option("-s,--seed", o.seed, "RNG seed (-1: random)");
  app.add_flag("--ignore-eos", o.ignore_eos, "keep generating past end-of-sequence");
  app.add_flag("--json", o.json, "print one JSON object instead of streaming text");
  app.add_option("--top-logprobs", o.top_logprobs, "with --json: the N most likely tokens per position")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  pshard::Status status = pshard::run(o);
  if (!status.ok()) {
    std::cerr << "pshard-run: " << status.to_string() << "\n";
    return 1;
  }
  return 0;
}
