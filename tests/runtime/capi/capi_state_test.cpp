// A context's sequence saved to a file and loaded into another context
// (pshard_context_state_save_file / _load_file): decoding on from the loaded state gives,
// bit for bit, what decoding on from the original gives — for plain attention, a sliding
// window's ring past its window, a recurrent layer's state, a Q8_0 cache, and under a
// schedule on the emulated GPU — and the sampler's penalties see the loaded tokens
// through pshard_generate_params.held. Files that do not fit (another model, context size
// or KV types; truncated, foreign, missing) are refused naming what differs, with the
// context unchanged.
#include "pshard/pshard.h"
#include "tests/runtime/capi/capi_test_util.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace {

using namespace pshard::capi_test;

struct Answer {
  std::vector<pshard_token> tokens;
  std::vector<float> top; // the chosen token's log-probability at each step
  bool operator==(const Answer&) const = default;
};

bool collect(const pshard_token_event* e, void* user) {
  auto* a = static_cast<Answer*>(user);
  if (e->token >= 0) {
    a->tokens.push_back(e->token);
    a->top.push_back(e->top_logprobs[0]);
  }
  return true;
}

struct Model {
  explicit Model(const std::string& path, const char* schedule = nullptr) {
    pshard_model_params mp = pshard_model_default_params();
    mp.schedule_path = schedule;
    EXPECT_EQ(pshard_model_load(path.c_str(), &mp, &m), PSHARD_OK) << pshard_last_error();
  }
  ~Model() { pshard_model_free(m); }
  pshard_model* m = nullptr;
};

struct Context {
  explicit Context(pshard_model* m, pshard_context_params cp = base_params()) {
    EXPECT_EQ(pshard_context_create(m, &cp, &c), PSHARD_OK) << pshard_last_error();
  }
  ~Context() { pshard_context_free(c); }
  static pshard_context_params base_params() {
    pshard_context_params cp = pshard_context_default_params();
    cp.n_threads = 1;
    cp.n_ctx = 128;
    return cp;
  }
  pshard_context* c = nullptr;
};

pshard_generate_params greedy(int n = 12) {
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = n;
  gp.temperature = 0;
  gp.ignore_eos = true;
  gp.top_logprobs = 1;
  return gp;
}

Answer generate(pshard_context* c, const std::vector<pshard_token>& feed,
                pshard_generate_params gp = greedy()) {
  Answer a;
  EXPECT_EQ(pshard_context_generate(c, feed.data(), feed.size(), &gp, collect, &a, nullptr),
            PSHARD_OK)
      << pshard_last_error();
  return a;
}

void decode(pshard_context* c, const std::vector<pshard_token>& tokens) {
  const float* logits = nullptr;
  ASSERT_EQ(pshard_context_decode(c, tokens.data(), tokens.size(), &logits), PSHARD_OK)
      << pshard_last_error();
}

std::vector<pshard_token> prompt(int n, int seed = 1, int vocab = 500) {
  std::vector<pshard_token> p{1};
  for (int i = 1; i < n; ++i)
    p.push_back(3 + (i * 37 + seed * 101) % (vocab - 3));
  return p;
}

std::string temp_path(const std::string& name) { return ::testing::TempDir() + "/" + name; }

std::string generated_model(const std::string& name, pshard::ModelSpec spec) {
  const std::string path = temp_path(name + ".gguf");
  EXPECT_TRUE(pshard::write_model(spec, path).ok());
  return path;
}

// Decodes `held` in one context, saves, loads into a fresh one; both answer `next`.
void expect_same_after_load(pshard_model* m, pshard_context_params cp,
                            const std::vector<pshard_token>& held,
                            const std::vector<pshard_token>& next, const std::string& file) {
  Context original(m, cp);
  if (!held.empty())
    decode(original.c, held);
  ASSERT_EQ(pshard_context_state_save_file(original.c, file.c_str(), held.data(), held.size()),
            PSHARD_OK)
      << pshard_last_error();
  Context loaded(m, cp);
  std::vector<pshard_token> tokens(held.size() + 4);
  size_t n = 0;
  ASSERT_EQ(
      pshard_context_state_load_file(loaded.c, file.c_str(), tokens.data(), tokens.size(), &n),
      PSHARD_OK)
      << pshard_last_error();
  tokens.resize(n);
  EXPECT_EQ(tokens, held);
  EXPECT_EQ(pshard_context_n_past(loaded.c), static_cast<int64_t>(held.size()));
  const Answer want = generate(original.c, next);
  EXPECT_EQ(generate(loaded.c, next), want) << "bit for bit";
  // And the same as a context that decodes it all.
  Context whole(m, cp);
  std::vector<pshard_token> all = held;
  all.insert(all.end(), next.begin(), next.end());
  EXPECT_EQ(generate(whole.c, all), want);
}

TEST(CApiState, DecodingOnFromALoadedStateIsDecodingOnFromTheOriginal) {
  SKIP_WITHOUT_MODEL();
  Model model(kModel);
  expect_same_after_load(model.m, Context::base_params(), prompt(40), prompt(3, 2),
                         temp_path("state_stories.pshstate"));
  // Nothing held: a state of no positions.
  expect_same_after_load(model.m, Context::base_params(), {}, prompt(5, 3),
                         temp_path("state_empty.pshstate"));
}

TEST(CApiState, RingsRecurrentStatesAndQ8Caches) {
  pshard::ModelSpec gemma; // sliding-window layers: rings of window + largest pass
  gemma.arch = "gemma3";
  gemma.n_embd = 128;
  gemma.n_head = 4;
  gemma.n_head_kv = 2;
  gemma.sliding_window = 8;
  Model g(generated_model("state_gemma3", gemma));
  // Passes of at most 4 tokens: rings of 12 rows, which 60 positions have wrapped.
  pshard_context_params short_passes = Context::base_params();
  short_passes.n_batch = 4;
  expect_same_after_load(g.m, short_passes, prompt(60, 4), prompt(4, 5),
                         temp_path("state_gemma3.pshstate"));
  pshard_context_params whole_caches = short_passes;
  whole_caches.swa_full = true;
  EXPECT_LT(pshard_context_host_bytes(Context(g.m, short_passes).c),
            pshard_context_host_bytes(Context(g.m, whole_caches).c))
      << "rings, smaller than whole caches";
  // A state saved from rings is no state for whole caches.
  Context whole(g.m, whole_caches);
  std::vector<pshard_token> out(64);
  size_t n = 0;
  const std::string ring_file = temp_path("state_gemma3.pshstate");
  EXPECT_EQ(pshard_context_state_load_file(whole.c, ring_file.c_str(), out.data(), 64, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("swa_full"), std::string::npos)
      << pshard_last_error();

  pshard::ModelSpec next; // layers 0-2 Gated DeltaNet (a state, no positions), 3 attention
  next.arch = "qwen3next";
  next.n_layer = 4;
  next.n_embd = 128;
  next.n_head = 4;
  next.n_head_kv = 2;
  next.n_expert = 4;
  next.n_expert_used = 2;
  next.n_ff = 64;
  Model q(generated_model("state_qwen3next", next));
  expect_same_after_load(q.m, Context::base_params(), prompt(30, 6), prompt(4, 7),
                         temp_path("state_qwen3next.pshstate"));

  pshard::ModelSpec llama; // heads of 32: whole Q8_0 blocks
  llama.n_embd = 128;
  llama.n_head = 4;
  llama.n_head_kv = 2;
  Model l(generated_model("state_llama", llama));
  pshard_context_params q8 = Context::base_params();
  q8.kv_type_k = q8.kv_type_v = PSHARD_KV_Q8_0;
  expect_same_after_load(l.m, q8, prompt(33, 8), prompt(4, 9), temp_path("state_q8.pshstate"));
}

TEST(CApiState, UnderAScheduleOnTheEmulatedGpu) {
  SKIP_WITHOUT_MODEL();
  std::vector<uint64_t> budgets;
  const std::string schedule = schedule_file(&budgets);
  Model model(kModel, schedule.c_str());
  for (uint64_t budget : budgets) {
    pshard_context_params cp = Context::base_params();
    cp.backend = PSHARD_BACKEND_EMU;
    cp.vram_budget = budget;
    expect_same_after_load(model.m, cp, prompt(37, 10), prompt(3, 11),
                           temp_path("state_emu.pshstate"));
  }
  // Saved on emu, loaded on the CPU without a schedule: the same rows, the same answer.
  pshard_context_params emu = Context::base_params();
  emu.backend = PSHARD_BACKEND_EMU;
  Context original(model.m, emu);
  const std::vector<pshard_token> held = prompt(20, 12);
  decode(original.c, held);
  const std::string file = temp_path("state_emu_to_cpu.pshstate");
  ASSERT_EQ(pshard_context_state_save_file(original.c, file.c_str(), held.data(), held.size()),
            PSHARD_OK);
  Model plain(kModel);
  Context cpu(plain.m);
  size_t n = 0;
  std::vector<pshard_token> tokens(64);
  ASSERT_EQ(pshard_context_state_load_file(cpu.c, file.c_str(), tokens.data(), 64, &n), PSHARD_OK)
      << pshard_last_error();
  EXPECT_EQ(generate(cpu.c, prompt(3, 13)), generate(original.c, prompt(3, 13)));
}

TEST(CApiState, HeldTokensReachThePenalties) {
  SKIP_WITHOUT_MODEL();
  Model model(kModel);
  const std::vector<pshard_token> all = prompt(30, 14);
  pshard_generate_params penalised = greedy(16);
  penalised.repeat_penalty = 1.5f;
  penalised.presence_penalty = 0.5f;
  penalised.repeat_last_n = 64;
  Context whole(model.m);
  const Answer want = generate(whole.c, all, penalised);

  const std::vector<pshard_token> held(all.begin(), all.end() - 1);
  const std::string file = temp_path("state_held.pshstate");
  {
    Context c(model.m);
    decode(c.c, held);
    ASSERT_EQ(pshard_context_state_save_file(c.c, file.c_str(), held.data(), held.size()),
              PSHARD_OK);
  }
  auto after_load = [&](bool with_held) {
    Context c(model.m);
    std::vector<pshard_token> tokens(64);
    size_t n = 0;
    EXPECT_EQ(pshard_context_state_load_file(c.c, file.c_str(), tokens.data(), 64, &n), PSHARD_OK);
    pshard_generate_params gp = penalised;
    if (with_held) {
      gp.held = tokens.data();
      gp.n_held = n;
    }
    return generate(c.c, {all.back()}, gp);
  };
  EXPECT_EQ(after_load(true), want);
  EXPECT_NE(after_load(false), want) << "without them the penalties see one token only";
}

TEST(CApiState, FilesThatDoNotFitAreRefusedAndTheContextKept) {
  SKIP_WITHOUT_MODEL();
  Model model(kModel);
  const std::vector<pshard_token> held = prompt(20, 15);
  Context source(model.m);
  decode(source.c, held);
  const std::string file = temp_path("state_refusals.pshstate");
  EXPECT_EQ(pshard_context_state_save_file(source.c, file.c_str(), held.data(), 19),
            PSHARD_ERROR_INVALID_ARGUMENT)
      << "19 tokens for 20 positions";
  EXPECT_NE(std::string(pshard_last_error()).find("20 positions"), std::string::npos)
      << pshard_last_error();
  ASSERT_EQ(pshard_context_state_save_file(source.c, file.c_str(), held.data(), held.size()),
            PSHARD_OK);
  const std::string missing_dir = temp_path("no/such/dir/x.pshstate");
  EXPECT_NE(pshard_context_state_save_file(source.c, missing_dir.c_str(), held.data(), held.size()),
            PSHARD_OK);
  EXPECT_FALSE(std::filesystem::exists(missing_dir));

  // The context a refused load leaves as it was: 5 positions of its own.
  Context target(model.m);
  const std::vector<pshard_token> own = prompt(5, 16);
  decode(target.c, own);
  std::vector<pshard_token> out(64);
  size_t n = 0;
  auto refused = [&](const std::string& path, pshard_status want, const std::string& says,
                     size_t capacity = 64) {
    const pshard_status st =
        pshard_context_state_load_file(target.c, path.c_str(), out.data(), capacity, &n);
    EXPECT_EQ(st, want) << path << ": " << pshard_last_error();
    EXPECT_NE(std::string(pshard_last_error()).find(says), std::string::npos)
        << pshard_last_error();
    EXPECT_EQ(pshard_context_n_past(target.c), 5);
  };
  refused(temp_path("no_such_state"), PSHARD_ERROR_NOT_FOUND, "cannot open");
  refused(kModel, PSHARD_ERROR_INVALID_FORMAT, "not a pshard state file");
  refused(file, PSHARD_ERROR_OUT_OF_RANGE, "capacity of 8", 8);
  EXPECT_EQ(n, 20u) << "the count a buffer needs";
  const auto size = std::filesystem::file_size(file);
  const std::string cut = temp_path("state_cut.pshstate");
  std::filesystem::copy_file(file, cut, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(cut, size - 100);
  refused(cut, PSHARD_ERROR_INVALID_FORMAT, "truncated");
  {
    pshard_context_params other = Context::base_params();
    other.n_ctx = 256;
    Context wider(model.m, other);
    const pshard_status st =
        pshard_context_state_load_file(wider.c, file.c_str(), out.data(), 64, &n);
    EXPECT_EQ(st, PSHARD_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(pshard_last_error()).find("128 positions"), std::string::npos)
        << pshard_last_error();
  }
  {
    pshard::ModelSpec spec;
    Model other(generated_model("state_other_model", spec));
    Context c(other.m);
    EXPECT_EQ(pshard_context_state_load_file(c.c, file.c_str(), out.data(), 64, &n),
              PSHARD_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(pshard_last_error()).find("another model"), std::string::npos)
        << pshard_last_error();
  }
  // The target still answers as a context holding its own 5 positions.
  Context fresh(model.m);
  decode(fresh.c, own);
  EXPECT_EQ(generate(target.c, prompt(2, 17)), generate(fresh.c, prompt(2, 17)));
  // One byte flipped in the KV rows, the length right: the checksum refuses it, and the
  // context, whose rows were being read when that was found, is left empty.
  const std::string flipped = temp_path("state_flipped.pshstate");
  std::filesystem::copy_file(file, flipped, std::filesystem::copy_options::overwrite_existing);
  {
    std::fstream f(flipped, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size - 200));
    char byte = 0;
    f.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x10);
    f.seekp(static_cast<std::streamoff>(size - 200));
    f.write(&byte, 1);
  }
  EXPECT_EQ(pshard_context_state_load_file(target.c, flipped.c_str(), out.data(), 64, &n),
            PSHARD_ERROR_INVALID_FORMAT);
  EXPECT_NE(std::string(pshard_last_error()).find("damaged"), std::string::npos)
      << pshard_last_error();
  EXPECT_EQ(pshard_context_n_past(target.c), 0);
  EXPECT_EQ(pshard_context_state_load_file(nullptr, file.c_str(), out.data(), 64, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pshard_context_state_load_file(target.c, file.c_str(), out.data(), 64, nullptr),
            PSHARD_ERROR_INVALID_ARGUMENT);
}

} // namespace
