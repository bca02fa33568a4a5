// pshard-server: an OpenAI-compatible HTTP server over continuous batching, with
// llama-server's flags.
//
//   pshard-server -m model.gguf -np 4 --port 8080
//   pshard-server -m model.gguf -s model.pshard --vram 2G -c 4096 --api-key secret
//   curl localhost:8080/v1/chat/completions -d '{"messages":[{"role":"user","content":"Hi"}]}'
//
// Three parts with small interfaces: the HTTP layer (http_api.h), the engine side on the
// C API (serving_engine.h: the batch and its stepping thread), and the C API's scheduler
// and engine underneath. SIGINT/SIGTERM stop it (requests in flight finish); SIGHUP
// reads a new VRAM budget from --budget-file; POST /budget changes it too.
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
#include "tools/common/size_parse.h"
#include "tools/pshard-server/http_api.h"

#include <CLI/CLI.hpp>
#include <csignal>
#include <httplib.h>
#include <iostream>
#include <pthread.h>
#include <sys/socket.h>

namespace cli = pshard::cli;
using namespace pshard;
using namespace pshard::server;

namespace {

// SIGHUP: the first line of --budget-file, a size ("512M"), becomes the VRAM budget.
void reload_budget(ServingEngine& engine, const std::string& path) {
  if (path.empty()) {
    std::cerr << "pshard-server: SIGHUP ignored: no --budget-file to read a budget from\n";
    return;
  }
  Result<std::string> text = read_text_file(path, "--budget-file");
  if (!text.ok()) {
    std::cerr << "pshard-server: SIGHUP: " << text.status().to_string() << "\n";
    return;
  }
  const std::string line = text->substr(0, text->find_first_of("\r\n"));
  auto bytes = parse_size(line);
  Status st = bytes.ok() ? engine.set_vram_budget(*bytes) : bytes.status();
  if (st.ok())
    std::cerr << "pshard-server: VRAM budget now " << *bytes << " B (from " << path << ")\n";
  else
    std::cerr << "pshard-server: SIGHUP: " << st.to_string() << "\n";
}

int serve(const ServerOptions& o) {
  // Signals go to one thread that waits for them (blocked everywhere else).
  sigset_t signals;
  sigemptyset(&signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1})
    sigaddset(&signals, s);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto engine = ServingEngine::start(o);
  if (!engine.ok()) {
    std::cerr << "pshard-server: " << engine.status().to_string() << "\n";
    return 1;
  }
  httplib::Server svr;
  const int http_threads = o.http_threads > 0 ? o.http_threads : o.n_parallel + o.n_queue + 8;
  svr.new_task_queue = [http_threads] { return new httplib::ThreadPool(http_threads); };
  // Debian's cpp-httplib 0.11 is compiled with a listen backlog of 5: a burst of clients
  // connecting at once overflows it and the late ones are reset. Keep the socket it creates
  // so that the backlog can be raised once it listens (Linux lets listen() be called again).
  socket_t listen_socket = INVALID_SOCKET;
  svr.set_socket_options([&listen_socket](socket_t s) {
    httplib::default_socket_options(s);
    listen_socket = s;
  });
  HttpApi api(**engine, o);
  api.install(svr);
  int port = o.port;
  if (port == 0)
    port = svr.bind_to_any_port(o.host);
  else if (!svr.bind_to_port(o.host, port))
    port = -1;
  if (port < 0) {
    std::cerr << "pshard-server: cannot listen on " << o.host << ":" << o.port
              << " (in use, or not an address of this machine)\n";
    return 1;
  }
  if (listen_socket != INVALID_SOCKET && ::listen(listen_socket, SOMAXCONN) != 0)
    std::cerr << "pshard-server: warning: cannot raise the listen backlog to " << SOMAXCONN
              << "; bursts of more than 5 connections may be refused\n";
  std::thread signal_thread([&] {
    for (;;) {
      int sig = 0;
      sigwait(&signals, &sig);
      if (sig == SIGHUP) {
        reload_budget(**engine, o.budget_file);
        continue;
      }
      svr.stop(); // SIGINT, SIGTERM, or SIGUSR1 from below when listening ended
      return;
    }
  });
  std::cerr << "pshard-server: serving " << (*engine)->model_id() << " (" << (*engine)->backend()
            << ", " << o.n_parallel << " slots, context " << (*engine)->n_ctx()
            << ", chat template "
            << ((*engine)->chat_template().empty() ? "none" : (*engine)->chat_template())
            << ", tool calls " << (*engine)->tool_format().name << ") on http://" << o.host << ":"
            << port << "\n"
            << std::flush;
  const bool listened = svr.listen_after_bind();
  pthread_kill(signal_thread.native_handle(), SIGUSR1);
  signal_thread.join();
  std::cerr << "pshard-server: stopped\n";
  return listened ? 0 : 1;
}

} // namespace

int main(int argc, char** argv) {
  ServerOptions o;
  CLI::App app{"pshard-server: an OpenAI-compatible server with continuous batching"};
  app.add_option("-m,--model", o.model_path, "GGUF model file")->required();
  cli::add_hybrid_options(app, o.schedule_path, o.backend, o.vram, o.emu_pcie_gbps);
  app.add_option("--mmproj", o.mmproj_path,
                 "vision projector (llama.cpp's mmproj GGUF) of a Qwen-VL model (Qwen2-VL, "
                 "Qwen2.5-VL, Qwen3-VL, Qwen3.5): chat messages "
                 "may then hold image_url parts (base64 data URLs), encoded on the CPU");
  cli::add_image_token_options(app, o.image_min_tokens, o.image_max_tokens, "--mmproj");
  app.add_option("--max-images", o.max_images,
                 "images one request may hold, over all its messages (each costs its image "
                 "tokens of the context and its encoding time)")
      ->check(cli::between(1, 1024));
  app.add_option("-c,--ctx-size", o.ctx_size,
                 "positions per sequence, K suffix allowed (0: the model's, at most 4096)");
  app.add_option("--parallel", o.n_parallel, "sequences decoded together (-np)")
      ->check(cli::between(1, 1024));
  app.add_option("--queue", o.n_queue,
                 "requests that may wait for a free sequence; more are answered 503")
      ->check(cli::between(0, 1 << 20));
  app.add_option("-b,--batch-size", o.n_batch, "tokens one forward pass carries at most")
      ->check(cli::between(1, 1 << 20));
  app.add_option("-t,--threads", o.n_threads, "CPU threads (0: all)")
      ->check(cli::between(0, cli::kMaxThreads));
  app.add_flag("--no-mmap", o.no_mmap, "read the weights into RAM instead of mapping the file");
  app.add_flag("--no-prefix-cache", o.no_prefix_cache,
               "decode every prompt whole instead of reading the KV pages of a start that an "
               "earlier request's prompt or answer shared (a system prompt, a chat's earlier "
               "turns)");
  app.add_flag("--swa-full", o.swa_full,
               "sliding-window layers (Gemma 2/3, gpt-oss) keep every position's KV instead of "
               "giving back the pages before their window");
  app.add_option("--draft-max", o.draft_max,
                 "speculative decoding: each decoding request checks up to N tokens drafted "
                 "from its own text (or by --model-draft) in a pass, from the tokens the others "
                 "leave (same answers; 0: off)")
      ->check(cli::between(0, pshard::kMaxDraftTokens));
  cli::add_draft_model_options(app, o.draft_model_path, o.draft_p_min);
  cli::add_kv_type_options(app, o.cache_type_k, o.cache_type_v);
  cli::add_rope_options(app, o.rope);
  cli::add_override_kv_option(app, o.override_kv);
  cli::add_lora_options(app, o.lora, o.lora_scaled);
  app.add_option("--host", o.host, "address to listen on")->capture_default_str();
  app.add_option("--port", o.port, "port to listen on (0: any free one, printed)")
      ->check(cli::between(0, 65535))
      ->capture_default_str();
  app.add_option("--api-key", o.api_key,
                 "require 'Authorization: Bearer KEY' on every route but GET / and /health");
  app.add_option("-a,--alias", o.aliases,
                 "the model's name in the API (default: the file's stem); repeat or separate "
                 "with commas for more names requests may use, the first is the one answers give")
      ->delimiter(',');
  app.add_option("--chat-template", o.chat_template,
                 "a chat template by name instead of the model's (chatml, llama3, ...)");
  app.add_option("--threads-http", o.http_threads,
                 "HTTP worker threads (0: slots + queue + 8, so every waiting client is read)")
      ->check(cli::between(0, 1 << 16));
  app.add_option("--budget-file", o.budget_file,
                 "a file whose first line (a size, e.g. 512M) SIGHUP makes the VRAM budget");
  app.add_option("--pooling", o.pooling,
                 "how POST /v1/embeddings pools a text's rows: mean, cls or last (default: the "
                 "model's pooling_type)")
      ->check(CLI::IsMember({"mean", "cls", "last"}));
  cli::add_sampler_options(app, o.sampling, o.dry_breaker_args);
  app.add_option("-n,--n-predict", o.n_predict,
                 "tokens a request generates at most, and when it says nothing (-1: until "
                 "the context is full, or what the request asks)")
      ->check(cli::at_least(-1));
  app.add_option("--seed", o.seed,
                 "the seed of a request that gives none (-1: a random one each time)")
      ->check(cli::at_least(-1));
  app.add_option("--reasoning-format", o.reasoning_format,
                 "a thinking model's <think>...</think> in a chat answer: deepseek (auto, the "
                 "default) sends it as reasoning_content, none leaves it in content")
      ->check(CLI::IsMember({"none", "deepseek", "auto"}));
  constexpr FlagSpelling kLlamaFlags[] = {{"-np", "--parallel"},
                                          {"-ctk", "--cache-type-k"},
                                          {"-ctv", "--cache-type-v"},
                                          {"-md", "--model-draft"}};
  std::vector<LlamaCompatFlag> compat(kLlamaModelCompat.begin(), kLlamaModelCompat.end());
  compat.insert(compat.end(), kLlamaServerCompat.begin(), kLlamaServerCompat.end());
  std::vector<std::string> notes;
  auto absorbed = absorb_llama_flags(expand_llama_flags(argc, argv, kLlamaFlags), compat, &notes);
  if (!absorbed.ok()) {
    std::cerr << "pshard-server: " << absorbed.status().message() << "\n";
    return 2;
  }
  for (const std::string& note : notes)
    std::cerr << "pshard-server: " << note << "\n";
  const std::vector<std::string> args = std::move(*absorbed);
  std::vector<const char*> arg_ptrs;
  for (const std::string& a : args)
    arg_ptrs.push_back(a.c_str());
  CLI11_PARSE(app, static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  auto dry_breakers = cli::dry_breakers(o.dry_breaker_args);
  Status sampling = dry_breakers.ok() ? validate_sampler_params(o.sampling) : dry_breakers.status();
  if (!sampling.ok()) {
    std::cerr << "pshard-server: " << sampling.message() << "\n";
    return 2;
  }
  o.dry_breakers = std::move(*dry_breakers);
  return serve(o);
}
