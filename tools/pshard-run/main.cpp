// pshard-run: generate text with a GGUF model, on the CPU or across the CPU and a
// (real or emulated) GPU with a precompiled schedule. Built on the C API (pshard.h).
//
//   pshard-run -m stories260K.gguf -p "Once upon a time" -n 32 --temp 0
//   pshard-run -m model.gguf -s model.pshard --backend emu --vram 512M --trace trace.json
//   pshard-run -m model.gguf -f prompt.txt --json --top-logprobs 3
#include "tools/pshard-run/run_options.h"
#include "tools/pshard-run/run_report.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
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

Status run(const RunOptions& o) {
  PSHARD_RETURN_IF_ERROR(validate_sampler_params(o.sampling));
  PSHARD_ASSIGN_OR_RETURN(std::string prompt_text, read_prompt(o));
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
  app.add_option("-s,--schedule", o.schedule_path,
                 "schedule artifact (*.pshard from pshard-compile); without it everything runs "
                 "on the CPU");
  app.add_option("--backend", o.backend,
                 "cpu, emu (emulated GPU), cuda, or auto (emu with a "
                 "schedule, else cpu)")
      ->check(CLI::IsMember({"auto", "cpu", "emu", "cuda"}));
  app.add_option("--vram", o.vram, "VRAM budget, K/M/G suffixes (default: the schedule's largest)");
  app.add_option("--emu-pcie", o.emu_pcie_gbps,
                 "emulated PCIe bandwidth in GB/s (default: what the schedule was planned with)")
      ->check(CLI::PositiveNumber);
  app.add_option("--trace", o.trace_path, "write a Chrome/Perfetto trace of every pass");
  app.add_option("-p,--prompt", o.prompt, "prompt text");
  app.add_option("-f,--file", o.prompt_file, "read the prompt from a file")->excludes("-p");
  app.add_option("-n,--n-predict", o.n_predict,
                 "tokens to generate (-1: until the context is full)");
  app.add_option("-t,--threads", o.n_threads, "CPU threads (0: all)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("-c,--ctx-size", o.ctx_size,
                 "context length in tokens, K suffix allowed (0: model's, at most 4096)");
  app.add_option("-b,--batch-size", o.n_batch, "most tokens per forward pass (without a schedule)")
      ->check(CLI::PositiveNumber);
  app.add_option("--temp", o.sampling.temperature, "temperature (0: greedy)");
  app.add_option("--top-k", o.sampling.top_k, "top-k sampling (0: off)");
  app.add_option("--top-p", o.sampling.top_p, "top-p sampling (1: off)");
  app.add_option("--min-p", o.sampling.min_p, "min-p sampling (0: off)");
  app.add_option("--repeat-penalty", o.sampling.repeat_penalty, "repetition penalty (1: off)");
  app.add_option("--repeat-last-n", o.sampling.repeat_last_n, "tokens the penalty looks back over");
  app.add_option("--seed", o.seed, "RNG seed (-1: random)");
  app.add_flag("--ignore-eos", o.ignore_eos, "keep generating past end-of-sequence");
  app.add_flag("!--no-parse-special", o.parse_special,
               "tokenize control-token text in the prompt (\"<s>\", \"<|im_end|>\") as plain text");
  app.add_flag("--no-mmap", o.no_mmap,
               "read the weights into RAM on huge pages instead of using the file mapping "
               "(a copy in memory; faster decoding)");
  app.add_flag("--json", o.json, "print one JSON object instead of streaming text");
  app.add_option("--top-logprobs", o.top_logprobs,
                 "with --json: the N most likely tokens per position")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);

  pshard::Status status = pshard::run(o);
  if (!status.ok()) {
    std::cerr << "pshard-run: " << status.to_string() << "\n";
    return 1;
  }
  return 0;
}
