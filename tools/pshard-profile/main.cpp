// pshard-profile: measures this machine and writes its profile (schemas/profile.fbs).
//
//   pshard-profile -o machine.pshprof                 # about two minutes
//   pshard-profile -o machine.pshprof --json          # also machine.json beside it
//   pshard-profile -o quick.pshprof --quick --threads 1,2
//   pshard-profile --routing -m moe.gguf -f text.txt -o moe.routing.json   # MoE routing
#include "runtime/profile/profile.h"
#include "runtime/profile/profile_json.h"
#include "runtime/profile/profile_report.h"
#include "tools/common/size_parse.h"
#include "tools/pshard-profile/device_backends.h"
#include "tools/pshard-profile/routing_mode.h"
#include "tools/pshard-profile/suite.h"

#include "tools/common/cli_checks.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace cli = pshard::cli;

namespace {

int fail(const pshard::Status& status) {
  std::fprintf(stderr, "pshard-profile: %s\n", status.to_string().c_str());
  return 1;
}

// The argument as a shell would need it, so the recorded command can be rerun.
std::string shell_quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_of(" \t'\"\\$`*?;&|<>()") == std::string::npos)
    return arg;
  std::string out = "'";
  for (char c : arg)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string beside(const std::string& path, const std::string& extension) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash);
  return (has_ext ? path.substr(0, dot) : path) + extension;
}

} // namespace

int main(int argc, char** argv) {
  using namespace pshard;
  CLI::App app{"pshard-profile: measure this machine's CPU (and GPU, PCIe link) for the planner"};
  std::string output, json_path, backend = "auto", read_buffer, copy_rate;
  profiling::SuiteOptions options;
  bool quiet = false;
  app.add_option("-o,--output", output, "profile to write (*.pshprof)")->required();
  app.add_flag("--quick", options.quick, "small grid, about 10 s (for tests)");
  app.add_option("--threads", options.threads, "thread counts to measure, e.g. 1,2,4")
      ->delimiter(',')->check(cli::between(1, cli::kMaxThreads));
  auto* json_opt =
      app.add_option("--json", json_path, "also write the readable JSON (to FILE, or beside -o)")
          ->expected(0, 1);
  app.add_option("--backend", backend, "auto, cpu, emu or cuda")
      ->check(CLI::IsMember({"auto", "cpu", "emu", "cuda"}));
  app.add_option("--budget", options.budget_s, "seconds of measuring (default 100, quick 10)")
      ->check(cli::positive());
  app.add_option("--read-buffer", read_buffer, "read-bandwidth buffer, e.g. 512M (default 512M)");
  app.add_option("--copy-rate", copy_rate,
                 "cap of the emulated copy load without a GPU, bytes/s, e.g. 25G (default: none)");
  app.add_option("--max-tokens", options.max_tokens, "largest token tier (default 512, quick 64)")
      ->check(cli::between(1, 1 << 16));
  profiling::EmuSettings emu;
  app.add_option("--emu-pcie", emu.pcie_gbps, "with --backend emu: the emulated PCIe link, GB/s")
      ->check(cli::positive())
      ->capture_default_str();
  app.add_option("--emu-latency-us", emu.pcie_latency_us, "with --backend emu: latency per copy")
      ->check(cli::at_least(0))
      ->capture_default_str();
  app.add_option("--emu-threads", emu.compute_threads, "with --backend emu: its kernel threads")
      ->check(cli::between(1, cli::kMaxThreads))
      ->capture_default_str();
  app.add_option("--name", options.machine_name, "machine name recorded in the profile");
  app.add_option("--description", options.description, "free text recorded in the profile");
  app.add_flag("-q,--quiet", quiet, "no progress bar and no summary");
  bool routing = false;
  profiling::RoutingOptions ro;
  app.add_flag("--routing", routing,
               "instead of the machine: run a MoE model (-m) over a text (-f) and write each "
               "layer's expert frequencies to -o (JSON, for pshard-compile --routing)");
  app.add_option("-m,--model", ro.model_path, "with --routing: the MoE model (GGUF)");
  app.add_option("-f,--file", ro.text_path, "with --routing: the text to run");
  app.add_option("-c,--ctx-size", ro.n_ctx, "with --routing: tokens per window of the text")
      ->capture_default_str()->check(cli::between(2, 1 << 20));
  app.add_option("-n,--n-tokens", ro.max_tokens, "with --routing: at most this many tokens of "
                 "the text (0: all)")->capture_default_str()->check(cli::between(0, 1 << 30));
  CLI11_PARSE(app, argc, argv);
  if (routing) {
    ro.output = output;
    ro.threads = options.threads.empty() ? 0 : options.threads.back();
    std::ostringstream report;
    if (Status s = profiling::run_routing_profile(ro, report); !s.ok())
      return fail(s);
    if (!quiet)
      std::cout << report.str();
    return 0;
  }
  if (!ro.model_path.empty() || !ro.text_path.empty())
    return fail(invalid_argument("-m and -f are for --routing; without it pshard-profile "
                                 "measures the machine"));

  if (!read_buffer.empty()) {
    Result<uint64_t> bytes = parse_size(read_buffer);
    if (!bytes.ok())
      return fail(bytes.status());
    options.read_buffer_bytes = *bytes;
  }
  if (!copy_rate.empty()) {
    Result<uint64_t> rate = parse_size(copy_rate);
    if (!rate.ok())
      return fail(rate.status());
    options.copy_rate = static_cast<double>(*rate);
  }
  Result<profiling::DeviceChoice> device = profiling::choose_device(backend, emu);
  if (!device.ok())
    return fail(device.status());
  options.device = device->device.get();
  options.gpu_status = device->gpu_status;
  options.show_progress = !quiet;
  options.tool_version = PSHARD_VERSION;
  for (int i = 0; i < argc; ++i)
    options.command_line += (i ? " " : "") + shell_quoted(argv[i]);

  Result<fb::ProfileT> measured = profiling::run_suite(options);
  if (!measured.ok())
    return fail(measured.status());
  Result<Profile> profile = Profile::from_object(std::move(*measured));
  if (!profile.ok())
    return fail(profile.status());
  if (Status s = write_profile_file(*profile, output); !s.ok())
    return fail(s);
  if (json_opt->count() > 0) {
    if (json_path.empty())
      json_path = beside(output, ".json");
    Result<std::string> json = profile_to_json(*profile);
    if (!json.ok())
      return fail(json.status());
    const auto* bytes = reinterpret_cast<const uint8_t*>(json->data());
    if (Status s = write_file_atomically(json_path, {bytes, json->size()}); !s.ok())
      return fail(s);
  }
  if (!quiet) {
    std::cout << profile_report(*profile);
    std::cout << "\nwrote " << output << " (" << profile->bytes().size() << " bytes, fingerprint "
              << profile->fingerprint_hex() << ")"
              << (json_opt->count() > 0 ? ", " + json_path : std::string()) << "\n";
  }
  return 0;
}
