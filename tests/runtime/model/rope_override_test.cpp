// llama.cpp's RoPE flags at load (hparam_overrides.h): a file given --rope-scaling yarn
// --rope-scale 4 --yarn-orig-ctx N runs, bit for bit, as the same file converted with
// those rope.scaling keys — far past the original context, where YaRN matters — and a
// file given --rope-freq-base as one converted with that base; the file and its
// fingerprint stay as they are; values no key could hold are refused naming the flag.
#include "runtime/model/hparam_overrides.h"
#include "runtime/model/model.h"
#include "runtime/schedule/model_fingerprint.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <gtest/gtest.h>
#include <numeric>

namespace pshard {
namespace {

std::string write(const std::string& name, ModelSpec s) {
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  const Status st = write_model(s, path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return path;
}

ModelSpec qwen3() {
  ModelSpec s;
  s.arch = "qwen3";
  s.n_embd = 64;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ctx = 64; // the "original" context the scaling extends
  return s;
}

// Every position's logits over a 160-token prompt, decoded in passes of 32.
std::vector<float> logits(const Model& m) {
  auto session = CpuSession::create(m, {256, 1, 32});
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  std::vector<float> all;
  for (int64_t pos = 0; pos < 160; pos += 32) {
    std::vector<TokenId> ids(32);
    std::iota(ids.begin(), ids.end(), static_cast<TokenId>(3 + pos % 50));
    auto out = (*session)->decode(ids);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    all.insert(all.end(), out->begin(), out->end());
  }
  return all;
}

ModelSpec of(const std::string& arch) {
  ModelSpec s = qwen3();
  s.arch = arch;
  return s;
}

void expect_flags_as_keys(const std::string& arch) {
  ModelSpec keyed = of(arch);
  keyed.rope_scaling = "yarn";
  keyed.rope_scaling_factor = 4.0f;
  keyed.rope_ctx_orig = 48;
  const std::string with_keys = write("rope_yarn_keys_" + arch, keyed);
  const ModelSpec bare = of(arch);
  const std::string plain = write("rope_plain_" + arch, bare);

  RopeFlags flags;
  flags.scaling = "yarn";
  flags.scale = 4;
  flags.yarn_orig_ctx = 48;
  auto overrides = rope_overrides(flags);
  ASSERT_TRUE(overrides.ok()) << overrides.status().to_string();
  auto a = Model::load(with_keys);
  auto b = Model::load(plain, gguf::OpenMode::kMapData, *overrides);
  auto c = Model::load(plain);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  const ModelHParams &ha = (*a)->hparams(), &hb = (*b)->hparams();
  EXPECT_EQ(hb.rope_scaling, RopeScaling::kYarn);
  EXPECT_EQ(hb.rope_freq_scale, ha.rope_freq_scale);
  EXPECT_EQ(hb.rope_ctx_orig, 48);
  EXPECT_EQ(hb.yarn_ext_factor, ha.yarn_ext_factor);
  EXPECT_EQ(hb.yarn_attn_factor, ha.yarn_attn_factor);
  EXPECT_EQ(hb.attn_scale, ha.attn_scale);
  EXPECT_EQ(hb.attn_temp_length, ha.attn_temp_length);
  const std::vector<float> want = logits(**a);
  EXPECT_EQ(logits(**b), want) << "bit for bit";
  EXPECT_NE(logits(**c), want) << "YaRN changes the answer past the original context";
  // The file is as it was: its fingerprint (what schedules are matched by) too.
  EXPECT_EQ(model_fingerprint((*b)->file()), model_fingerprint((*c)->file()));
}

// Qwen3; Mistral 3, whose attention temperature is derived from the original context.
// (DeepSeek's converted files carry a YaRN log multiplier beside the scaling keys, which
// no flag gives, as in llama.cpp: a plain file given the flags scales without it.)
TEST(RopeOverride, YarnFlagsRunAsTheFilesKeys) {
  for (const char* arch : {"qwen3", "mistral3"}) {
    SCOPED_TRACE(arch);
    expect_flags_as_keys(arch);
  }
}

TEST(RopeOverride, FreqBaseAndLinearScale) {
  ModelSpec based = qwen3();
  based.rope_freq_base = 500000.0f;
  ModelSpec linear = qwen3();
  linear.rope_scaling = "linear";
  linear.rope_scaling_factor = 2.0f;
  const std::string plain = write("rope_plain2", qwen3());
  RopeFlags base;
  base.freq_base = 500000;
  RopeFlags lin;
  lin.scaling = "linear";
  lin.freq_scale = 0.5;
  auto a = Model::load(write("rope_base", based));
  auto b = Model::load(plain, gguf::OpenMode::kMapData, *rope_overrides(base));
  auto c = Model::load(write("rope_linear", linear));
  auto d = Model::load(plain, gguf::OpenMode::kMapData, *rope_overrides(lin));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok() && d.ok());
  EXPECT_EQ(logits(**b), logits(**a));
  EXPECT_EQ(logits(**d), logits(**c));
  // --rope-scale without --rope-scaling on a file without scaling: no scaling, as the
  // file's factor key alone would be (and llama.cpp's flag).
  RopeFlags bare;
  bare.scale = 4;
  auto e = Model::load(plain, gguf::OpenMode::kMapData, *rope_overrides(bare));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->hparams().rope_scaling, RopeScaling::kNone);
}

TEST(RopeOverride, ValuesNoKeyCouldHoldAreRefusedNamingTheFlag) {
  auto refused = [](RopeFlags f, const std::string& says) {
    auto o = rope_overrides(f);
    ASSERT_FALSE(o.ok());
    EXPECT_NE(o.status().message().find(says), std::string::npos) << o.status().to_string();
  };
  RopeFlags f;
  f.scaling = "llama3";
  refused(f, "--rope-scaling");
  f = {};
  f.scale = -2;
  refused(f, "--rope-scale");
  f = {};
  f.scale = 4;
  f.freq_scale = 0.25;
  refused(f, "give one");
  f = {};
  f.yarn_orig_ctx = -5;
  refused(f, "--yarn-orig-ctx");
  // What only the file's reader can judge: beta_fast must exceed beta_slow.
  RopeFlags betas;
  betas.scaling = "yarn";
  betas.scale = 4;
  betas.yarn_beta_fast = 1;
  betas.yarn_beta_slow = 2;
  auto m =
      Model::load(write("rope_plain3", qwen3()), gguf::OpenMode::kMapData, *rope_overrides(betas));
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("yarn_beta_fast"), std::string::npos)
      << m.status().to_string();
}

} // namespace
} // namespace pshard
