// The hybrid runtime's flags, spelled and checked the same in every tool that runs a
// schedule (pshard-run, pshard-server, pshard-bench's batched mode): -s, --backend,
// --vram, --emu-pcie. Header-only and CLI11-dependent: include it from the mains only.
//
//   cli::add_hybrid_options(app, o.schedule_path, o.backend, o.vram, o.emu_pcie_gbps);
#pragma once

#include "tools/common/cli_checks.h"

#include <CLI/CLI.hpp>

#include <string>

namespace pshard::cli {

inline void add_hybrid_options(CLI::App& app, std::string& schedule, std::string& backend,
                               std::string& vram, double& emu_pcie_gbps) {
  app.add_option("-s,--schedule", schedule,
                 "schedule artifact (*.pshard from pshard-compile); without it everything runs "
                 "on the CPU");
  app.add_option("--backend", backend,
                 "cpu, emu (emulated GPU), cuda, or auto (emu with a schedule, else cpu)")
      ->check(CLI::IsMember({"auto", "cpu", "emu", "cuda"}));
  app.add_option("--vram", vram, "VRAM budget, K/M/G suffixes (default: the schedule's largest)");
  app.add_option("--emu-pcie", emu_pcie_gbps,
                 "emulated PCIe bandwidth in GB/s (default: what the schedule was planned with)")
      ->check(positive());
}

} // namespace pshard::cli
