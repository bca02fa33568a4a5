// Helpers of the executor tests: schedules compiled in-process by the planner (no
// files, no profile: a hand-made machine), reference runs on the plain CPU session, and
// greedy runs of a hybrid session that record every pass's logits.
#pragma once

#include "pshard/Planner/Planner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/backends/emu/emu_device.h"
#include "runtime/executor/hybrid_session.h"
#include "runtime/model/model.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace pshard::testing {

inline std::string shared_model(const std::string& name) {
  return std::string(PSHARD_SHARED_DIR) + "/models/" + name;
}

// A gtest name for a model parameter of invariance_model_path: "stories260K.gguf" ->
// "stories260K_gguf" (names take letters, digits and '_' only).
inline std::string model_param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)))
      c = '_';
  return n;
}

// The models the plan-invariance tests run: shared ones by file name, and "mk-*" ones
// generated once into the test temp dir — 6 layers, grouped-query attention, Q8_0 with
// an F16 attn_v; "moe" in the name adds 8 experts (top-2) and a tied output. A family
// name after "mk-" makes a model of that family ("mk-qwen2moe": routed + shared
// experts, unnormalised top-k; "mk-qwen3": per-head q/k norms and a head size that is
// not n_embd / n_head); "mk-llama-bias-yarn" has attention biases and YaRN RoPE;
// "mk-gemma3" / "mk-gemma2" local layers with 5- / 7-position windows (and Gemma 2's
// soft-caps), a tied output ("mk-gemma-embedding": 7-position windows centred on the query,
// attending both ways); "mk-phi3" fused q/k/v and gate/up and LongRoPE; "mk-granite"
// Granite's multipliers ("mk-granitemoe" with experts); "mk-mistral3" YaRN and an attention
// temperature stepping every 16; "mk-smollm3" layer 3 without RoPE; "mk-gpt-oss" sinks, biased
// experts with the clamped SwiGLU, 5-position windows on the even layers, heads of 32 (q twice
// n_embd), YaRN; "mk-bert" an encoder of 64 positions (attention both ways, embeddings only;
// "mk-nomic-bert" with RoPE and SwiGLU; "mk-modern-bert" ModernBERT's pre-LayerNorms, GeGLU
// and 8-position windows centred on the query); "mk-glm4moe" GLM-4.5's layer 0 dense, sigmoid
// routing chosen with a selection bias and scaled by 2.5, an ungated shared expert, RoPE over 16
// of 32 values, q/k/v biases and a NextN block the model does not run ("mk-glm4": GLM-4-0414's
// sandwich norms, fused gate/up and partial adjacent-pair RoPE); "mk-ernie4_5-moe" ERNIE 4.5's
// experts chosen with a correction and an ungated shared expert, layer 0 dense and then
// every second layer routing (1, 3, 5), heads of 32; "mk-dots1" GLM-4.5's routing after
// Qwen3's attention; "mk-bailingmoe2" Ling 2.0's group-limited routing (the best 2 of 4
// groups), fused q/k/v with q/k norms; "mk-deepseek2" DeepSeek's latent attention (queries
// through a low rank, heads of 32 + 32 rotated, a latent of 64), layer 0 dense, softmax
// routing with a selection bias, two shared experts ("mk-deepseek2-kv-b": its older files'
// form, each head's keys and values cached); "mk-llama4" Llama 4's chunks of 5 positions on
// the rotating layers, layer 3 unrotated, one expert of 8 weighing its input on the odd
// layers and a shared expert; "mk-qwen3next" Qwen3-Next's Gated DeltaNet in every layer but
// layer 3 (gated attention over 16 of 32 values rotated), 2 of 8 experts and a gated shared
// expert ("mk-qwen3next-ssm-in": its first conversions' one ssm_in; "mk-qwen35": Qwen3.5's
// dense form, b and a apart, v heads tiled); a "-noncausal"
// suffix makes the
// family's decoder attend both ways ("mk-qwen2-noncausal"). `prefix` keeps each test binary's files
// apart.
inline std::string invariance_model_path(const std::string& name, const std::string& prefix = "") {
  if (name.rfind("mk-", 0) != 0)
    return shared_model(name);
  const std::string path = ::testing::TempDir() + "/" + prefix + name + ".gguf";
  if (std::filesystem::exists(path))
    return path;
  ModelSpec spec;
  spec.name = name;
  spec.n_embd = 96;
  spec.n_layer = 6;
  spec.n_head = 6;
  spec.n_head_kv = 2;
  spec.n_ff = 160;
  spec.type = TensorType::kQ8_0;
  spec.overrides["attn_v"] = TensorType::kF16;
  std::string family = name.substr(3);
  // "-noncausal": the family's decoder attending both ways (gte-Qwen2's conversions).
  if (const size_t at = family.find("-noncausal"); at != std::string::npos) {
    spec.non_causal = true;
    family.resize(at);
  }
  if (family == "qwen3next-ssm-in") { // the first Qwen3-Next conversions: one ssm_in
    spec.ssm_in = true;
    family = "qwen3next";
  }
  if (family == "deepseek2-kv-b") { // DeepSeek's older files: one attn_kv_b
    spec.mla_kv_b = true;
    family = "deepseek2";
  }
  if (family.rfind("qwen", 0) == 0 || family.rfind("gemma", 0) == 0 || family == "phi3" ||
      family == "granite" || family == "granitemoe" || family == "mistral3" ||
      family == "smollm3" || family == "gpt-oss" || family == "bert" || family == "nomic-bert" ||
      family == "modern-bert" || family.rfind("glm4", 0) == 0 || family.rfind("ernie", 0) == 0 ||
      family == "dots1" || family == "bailingmoe2" || family == "deepseek2" || family == "llama4")
    spec.arch = family;
  if (family == "llama4") { // layer 3 unrotated, the others in chunks of 5; layers 1, 3, 5 route
    spec.n_expert = 8;
    spec.n_expert_used = 1;
    spec.moe_layer_step = 2;
    spec.attn_chunk = 5;
  }
  if (family == "qwen3next" || family == "qwen35") { // Gated DeltaNet but layer 3
    spec.head_dim = 32;
    spec.rope_dim = 16;
  }
  if (family == "qwen3next") { // three v heads per k head, grouped
    spec.n_expert = 8;
    spec.n_expert_used = 2;
    spec.n_ff_shexp = 320;
  }
  if (family == "deepseek2") { // every row a whole number of Q8_0 blocks
    spec.n_head_kv = 1;
    spec.head_dim = 64;
    spec.rope_dim = 32;
    spec.kv_lora_rank = 64;
    spec.q_lora_rank = 64;
    spec.n_dense_lead = 1;
    spec.n_ff_shexp = 320;
  }
  if (family.rfind("glm4", 0) == 0) {
    spec.head_dim = 32;
    spec.rope_dim = 16;
    spec.qkv_bias = true;
  }
  if (family == "bailingmoe2") { // group-limited routing: the best 2 of 4 groups of 2
    spec.head_dim = 32;
    spec.rope_dim = 16;
    spec.n_dense_lead = 1;
    spec.n_expert_groups = 4;
    spec.n_expert_groups_used = 2;
    spec.expert_weights_scale = 2.5f;
    spec.n_nextn = 1;
  }
  if (family == "dots1") { // q/k norms, layer 0 dense, sigmoid routing, a shared expert
    spec.head_dim = 32;
    spec.n_dense_lead = 1;
    spec.expert_weights_scale = 2.5f;
    spec.n_ff_shexp = 320;
  }
  if (family == "ernie4_5-moe") {
    spec.head_dim = 32;
    spec.n_dense_lead = 1;
    spec.moe_layer_step = 2;
    spec.n_ff_shexp = 320;
  }
  if (family == "glm4moe") {
    spec.n_dense_lead = 1;
    spec.n_ff_dense = 256;
    spec.expert_weights_scale = 2.5f;
    spec.n_nextn = 1;
  }
  if (family == "bert" || family == "nomic-bert" || family == "modern-bert") {
    spec.n_head_kv = spec.n_head; // every head its own keys; 64 positions
    spec.n_ctx = 64;
  }
  if (family == "modern-bert") // layers 0 and 3 global, the others 4 positions either side
    spec.sliding_window = 8;
  if (family == "mistral3") { // the temperature steps every 16 positions
    spec.rope_scaling = "yarn";
    spec.rope_scaling_factor = 4.0f;
    spec.rope_ctx_orig = 16;
    spec.attn_temperature_scale = 0.3f;
  }
  if (family == "phi3") { // LongRoPE's long factors: every session's context passes 32
    spec.rope_scaling = "longrope";
    spec.rope_scaling_factor = 8.0f;
    spec.rope_ctx_orig = 32;
  }
  if (family == "qwen3" || family == "qwen3moe" || family == "llama-bias-yarn" ||
      family.rfind("gemma", 0) == 0)
    spec.head_dim = 32;
  if (family.rfind("gemma", 0) == 0) { // windows short enough for the tests' prompts
    spec.sliding_window = family == "gemma3" ? 5 : 7;
    spec.tied_output = true;
  }
  if (family == "gpt-oss") {
    spec.head_dim = 32;
    spec.sliding_window = 5;
    spec.rope_scaling = "yarn";
    spec.rope_scaling_factor = 4.0f;
    spec.rope_ctx_orig = 16;
  }
  if (family == "llama-bias-yarn") {
    spec.qkv_bias = true;
    spec.rope_scaling = "yarn";
    spec.rope_scaling_factor = 4.0f;
    spec.n_ctx = 64;
  }
  if (name.find("moe") != std::string::npos || family == "gpt-oss" || family == "dots1" ||
      family == "deepseek2") {
    spec.n_expert = 8;
    spec.n_expert_used = 2;
    spec.tied_output = true;
  }
  const Status s = write_model(spec, path);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return path;
}

#define PSHARD_SKIP_IF_MISSING(path)                                                               \
  if (!std::filesystem::exists(path))                                                              \
  GTEST_SKIP() << "shared model " << (path) << " is not present"

#define ASSERT_OK(expr)                                                                            \
  do {                                                                                             \
    const ::pshard::Status s_ = (expr);                                                            \
    ASSERT_TRUE(s_.ok()) << s_.to_string();                                                        \
  } while (0)

// A machine whose GPU is much faster than its CPU and whose link is slow, so the
// planner's plans really place, stream and cross.
inline planner::FixedMachineParams test_machine() {
  planner::FixedMachineParams m;
  m.name = "executor-test";
  m.vram_bytes = 64ull << 20;
  m.threads = 2;
  m.cpu_flops = 2e9;
  m.cpu_bandwidth = 5e9;
  m.gpu_flops = 200e9;
  m.gpu_bandwidth = 100e9;
  m.h2d_bandwidth = 2e9;
  m.d2h_bandwidth = 2e9;
  m.copy_latency_s = 5e-6;
  return m;
}

struct Compiled {
  planner::ModelGraph graph;
  uint64_t minimum_budget = 0;
  Schedule schedule;
};

// Budgets from the minimum to past the whole model, so plans range from "one attention
// block resident" to "everything resident".
inline std::vector<uint64_t> budget_ladder(const planner::ModelGraph& g, uint64_t minimum) {
  const uint64_t w = g.total_weight_bytes();
  return {minimum, minimum + w / 4, minimum + w / 2, minimum + w + (w >> 1)};
}

// `contexts`: the context ranges planned apart (empty: one, n_ctx); `parallel`: the
// sequences the resident KV caches are sized for.
inline Result<Compiled> compile_schedule(const std::string& model_path, planner::Strategy strategy,
                                         std::vector<int64_t> tiers, int64_t n_ctx,
                                         std::vector<uint64_t> budgets = {},
                                         planner::FixedMachineParams machine = test_machine(),
                                         std::vector<int64_t> contexts = {},
                                         TensorType kv_type = kDefaultKvType,
                                         int64_t parallel = 1) {
  PSHARD_ASSIGN_OR_RETURN(auto file,
                          gguf::GgufFile::open(model_path, gguf::OpenMode::kMetadataOnly));
  PSHARD_ASSIGN_OR_RETURN(planner::ModelGraph graph, planner::build_model_graph(*file));
  planner::FixedMachineModel m(machine);
  planner::CompileOptions o;
  o.tiers = std::move(tiers);
  o.n_ctx = n_ctx;
  o.contexts = std::move(contexts);
  o.threads = machine.threads;
  o.strategy = strategy;
  o.kv_type = kv_type;
  o.parallel = parallel;
  const uint64_t minimum = planner::minimum_budget(graph, m, o);
  o.budgets = budgets.empty() ? budget_ladder(graph, minimum) : std::move(budgets);
  PSHARD_ASSIGN_OR_RETURN(planner::PlanGrid grid, planner::plan_grid(graph, m, o));
  PSHARD_ASSIGN_OR_RETURN(auto bytes, planner::serialize_schedule(graph, grid, "executor-test"));
  PSHARD_ASSIGN_OR_RETURN(Schedule s, Schedule::load_bytes(bytes));
  return Compiled{std::move(graph), minimum, std::move(s)};
}

inline EmuOptions fast_emu(uint64_t memory_bytes) {
  EmuOptions o;
  o.memory_bytes = memory_bytes;
  o.link.bytes_per_s = 50e9; // fast: the tests check results, not speed
  o.link.latency_s = 0;
  return o;
}

// An emulated GPU of exactly `budget` bytes (at least 1) when `emu`, else none (the cpu
// backend: plans looked up, run on the host).
inline std::unique_ptr<Device> emu_or_none(bool emu, uint64_t budget) {
  if (!emu)
    return nullptr;
  auto d = EmuDevice::create(fast_emu(std::max<uint64_t>(budget, 1)));
  EXPECT_TRUE(d.ok()) << d.status().to_string();
  return d.ok() ? std::move(d).value() : nullptr;
}

// A session's parameters for a test run: 2 threads, the budget, a forced tier (0: looked
// up per pass).
inline HybridParams forced_params(int64_t n_ctx, uint64_t budget, int64_t tier) {
  HybridParams params;
  params.n_ctx = n_ctx;
  params.n_threads = 2;
  params.vram_budget = budget;
  params.force_tier = tier;
  return params;
}

// Every sub-layer resident, nothing streamed: the plans whose passes may be graphs.
inline bool all_resident(const SchedulePlan& p) {
  for (fb::schedule::Placement s : p.placements)
    if (s != fb::schedule::Placement::GpuResident)
      return false;
  return p.stream_order.empty();
}

// The logits after the prompt and after each greedy token, and the tokens.
struct Trace {
  std::vector<std::vector<float>> logits;
  std::vector<TokenId> tokens;
};

inline TokenId argmax(std::span<const float> l) {
  return static_cast<TokenId>(std::max_element(l.begin(), l.end()) - l.begin());
}

inline Status greedy_trace(Decoder& d, const std::vector<TokenId>& prompt, int n, Trace* out) {
  PSHARD_ASSIGN_OR_RETURN(std::span<const float> l, d.decode(prompt));
  for (int i = 0;; ++i) {
    out->logits.emplace_back(l.begin(), l.end());
    const TokenId next = argmax(l);
    out->tokens.push_back(next);
    if (i + 1 == n)
      return Status::ok_status();
    PSHARD_ASSIGN_OR_RETURN(l, d.decode(std::span<const TokenId>(&next, 1)));
  }
}

// Bit-for-bit equality of two traces; the message names the first difference.
inline ::testing::AssertionResult same_trace(const Trace& want, const Trace& got) {
  if (want.tokens != got.tokens)
    return ::testing::AssertionFailure() << "tokens differ";
  for (size_t i = 0; i < want.logits.size(); ++i)
    if (want.logits[i].size() != got.logits[i].size() ||
        std::memcmp(want.logits[i].data(), got.logits[i].data(),
                    want.logits[i].size() * sizeof(float)) != 0)
      return ::testing::AssertionFailure() << "logits of step " << i << " differ";
  return ::testing::AssertionSuccess();
}

} // namespace pshard::testing
