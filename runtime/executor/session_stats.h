// What a hybrid session measured: per pass, per plan used, and in total — the numbers
// pshard-run prints and the C API returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pshard {

// Where the routed experts of a pass's expert-level MoE blocks ran: distinct experts per
// block, summed over the blocks (a block placed whole counts nowhere).
struct ExpertUses {
  uint64_t resident = 0; // kept in VRAM by the plan
  uint64_t copied = 0;   // copied into the block's slot
  uint64_t host = 0;     // run on the CPU beside the device
  uint64_t total() const { return resident + copied + host; }
  ExpertUses& operator+=(const ExpertUses& o) {
    resident += o.resident;
    copied += o.copied;
    host += o.host;
    return *this;
  }
};

// "experts per pass 1.6 resident, 0.0 copied, 1.4 on the host (predicted 1.2 on the
// host)" over `passes` passes; empty when no expert-level block ran. When the host ran
// clearly more than the plan expected over enough passes (the text routes unlike the
// routing profile the plan was compiled with), it adds how to plan for this text.
std::string describe_expert_uses(const ExpertUses& uses, double predicted_host, int64_t passes);

// One forward pass (a decode step, or one chunk of a prompt).
struct PassStats {
  uint64_t budget_bytes = 0; // the compiled budget of the plan used (0: CPU only)
  int64_t tier = 0;          // the plan's tier (0: no artifact)
  int64_t context = 0;       // the plan's context range (its upper bound; 0: no artifact)
  int64_t n_tokens = 0;
  double predicted_ms = 0;     // the plan's prediction for this pass, at its context
  double measured_ms = 0;      // host wall time of the pass, device work included
  uint64_t bytes_streamed = 0; // weights copied into streaming slots
  uint64_t bytes_crossed = 0;  // activations and logits between host and device
  bool graph_replayed = false; // its device work ran as one recorded graph (pass_graph.h)
  ExpertUses experts;
  double predicted_host_experts = 0; // the plan's expectation of experts.host (routing profile)
};

// Every pass that used one plan.
struct PlanUse {
  uint64_t budget_bytes = 0;
  int64_t tier = 0;
  std::string strategy;
  double predicted_ms_per_pass = 0; // the mean of its passes' predictions
  int64_t context = 0;
  int64_t passes = 0;
  int64_t tokens = 0;
  double predicted_ms_total = 0;
  double measured_ms_total = 0;
  uint64_t bytes_streamed = 0;
  ExpertUses experts = {};           // all its passes
  double predicted_host_experts = 0; // all its passes
  double measured_ms_per_pass() const { return passes > 0 ? measured_ms_total / passes : 0; }
};

struct SessionStats {
  std::vector<PlanUse> plans; // in order of first use
  int64_t passes = 0;
  int64_t graph_passes = 0;    // passes whose device work ran as a recorded graph
  uint64_t bytes_streamed = 0; // weights into streaming slots, all passes
  uint64_t bytes_crossed = 0;
  uint64_t bytes_switched = 0; // uploads and KV moves of budget and plan switches
  int64_t budget_switches = 0;
  int64_t plan_switches = 0;      // residency moves on a tier or context change
  double switch_ms = 0;           // wall time of all switches
  double switch_predicted_ms = 0; // their bytes at the PCIe pricing the schedule was planned with
  uint64_t peak_device_bytes = 0; // the largest arena held at any moment
  PassStats last_pass;

  void add(const PassStats& pass, const std::string& strategy);
};

} // namespace pshard
