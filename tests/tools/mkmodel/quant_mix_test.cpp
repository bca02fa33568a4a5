// pshard-mkmodel's quantization mixes (quant_mix.h): the recipe reproduces the types
// llama-quantize chose for the shared Q4_K_M and Q6_K files tensor by tensor, follows
// the documented rules on a larger shape, falls back for rows that are not whole
// blocks, and a generated mix loads and runs.
#include "runtime/generate/generator.h"
#include "runtime/gguf/gguf_file.h"
#include "tools/pshard-mkmodel/model_generator.h"
#include "tools/pshard-mkmodel/quant_mix.h"

#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>
#include <map>
#include <unistd.h>

namespace pshard {
namespace {

using T = TensorType;

// "blk.3.attn_v.weight" -> "attn_v"; "output.weight" -> "output".
std::string class_of(const std::string& name) {
  std::string s = name.substr(0, name.size() - std::string(".weight").size());
  if (s.rfind("blk.", 0) == 0)
    s = s.substr(s.find('.', 4) + 1);
  if (s.size() > 5 && s.compare(s.size() - 5, 5, "_exps") == 0)
    s = s.substr(0, s.size() - 5);
  return s;
}

std::string shared_model(const std::string& file) {
  return std::string(PSHARD_SHARED_DIR) + "/models/" + file;
}

// The shape of stories260K-x4 (README-architectures.md).
ModelSpec stories_x4() {
  ModelSpec s;
  s.n_embd = 256;
  s.n_layer = 5;
  s.n_head = 32;
  s.n_head_kv = 16;
  s.n_ff = 768;
  return s;
}

void expect_file_follows(const std::string& file, const ModelSpec& spec) {
  const std::string path = shared_model(file);
  if (!std::filesystem::exists(path))
    GTEST_SKIP() << path << " is not present";
  auto f = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  int checked = 0;
  for (const gguf::TensorInfo& t : (*f)->tensors()) {
    if (t.dims.size() < 2)
      continue; // norms: never quantized
    EXPECT_EQ(tensor_type_name(tensor_type_for(spec, t.name, class_of(t.name), t.dims)),
              std::string(tensor_type_name(t.type)))
        << t.name;
    ++checked;
  }
  EXPECT_EQ(checked, 37);
}

TEST(QuantMix, MatchesLlamaQuantizesQ4KMFile) {
  ModelSpec spec = stories_x4();
  ASSERT_TRUE(parse_type_or_mix("Q4_K_M", &spec).ok());
  EXPECT_EQ(spec.mix, QuantMix::kQ4_K_M);
  expect_file_follows("stories260K-x4-Q4_K_M.gguf", spec);
}

TEST(QuantMix, PlainQ6KMatchesLlamaQuantizesQ6KFile) {
  ModelSpec spec = stories_x4();
  ASSERT_TRUE(parse_type_or_mix("q6_k", &spec).ok());
  EXPECT_EQ(spec.mix, QuantMix::kNone);
  expect_file_follows("stories260K-x4-Q6_K.gguf", spec);
}

// 32 layers, 4 query heads per KV head: counts of each type per class.
std::map<std::string, std::map<std::string, int>> census(QuantMix mix, int64_t n_expert = 0) {
  ModelSpec s;
  s.n_embd = 4096;
  s.n_layer = 32;
  s.n_head = 32;
  s.n_head_kv = 8;
  s.n_ff = 11008; // 43 blocks of 256
  s.n_expert = n_expert;
  s.mix = mix;
  std::map<std::string, std::map<std::string, int>> out;
  for (int64_t i = 0; i < s.n_layer; ++i)
    for (const char* cls :
         {"attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"}) {
      const std::string name = "blk." + std::to_string(i) + "." + cls + ".weight";
      const int64_t cols = std::string(cls) == "ffn_down" ? s.n_ff : s.n_embd;
      ++out[cls][tensor_type_name(tensor_type_for(s, name, cls, {cols, 4096}))];
    }
  for (const char* cls : {"token_embd", "output"})
    ++out[cls]
         [tensor_type_name(tensor_type_for(s, std::string(cls) + ".weight", cls, {4096, 32000}))];
  return out;
}

TEST(QuantMix, RecipesFollowLlamaQuantizesRules) {
  // more_bits over 32 layers: 0-3, 28-31 and 6, 9, …, 27 (8 + 8 = 16 layers).
  auto q4 = census(QuantMix::kQ4_K_M);
  EXPECT_EQ(q4["attn_v"]["q6_k"], 16);
  EXPECT_EQ(q4["attn_v"]["q4_k"], 16);
  EXPECT_EQ(q4["ffn_down"]["q6_k"], 16);
  EXPECT_EQ(q4["attn_q"]["q4_k"], 32);
  EXPECT_EQ(q4["attn_output"]["q4_k"], 32);
  EXPECT_EQ(q4["output"]["q6_k"], 1);
  EXPECT_EQ(q4["token_embd"]["q4_k"], 1);
  auto q5 = census(QuantMix::kQ5_K_M);
  EXPECT_EQ(q5["attn_v"]["q6_k"], 16);
  EXPECT_EQ(q5["ffn_up"]["q5_k"], 32);
  auto q3 = census(QuantMix::kQ3_K_M);
  EXPECT_EQ(q3["attn_v"]["q5_k"], 2);
  EXPECT_EQ(q3["attn_v"]["q4_k"], 30);
  EXPECT_EQ(q3["ffn_down"]["q5_k"], 2); // layers below 32 / 16
  EXPECT_EQ(q3["ffn_down"]["q4_k"], 30);
  EXPECT_EQ(q3["attn_output"]["q4_k"], 32);
  EXPECT_EQ(q3["ffn_gate"]["q3_k"], 32);
  auto q2 = census(QuantMix::kQ2_K);
  EXPECT_EQ(q2["attn_v"]["q4_k"], 32); // n_gqa = 4
  EXPECT_EQ(q2["ffn_down"]["q3_k"], 32);
  EXPECT_EQ(q2["attn_output"]["q3_k"], 32);
  EXPECT_EQ(q2["attn_k"]["q2_k"], 32);
  EXPECT_EQ(q2["output"]["q6_k"], 1);
  // Eight experts: attention V and K in Q8_0, the output projection in Q5_K.
  auto moe = census(QuantMix::kQ4_K_M, 8);
  EXPECT_EQ(moe["attn_v"]["q8_0"], 32);
  EXPECT_EQ(moe["attn_k"]["q8_0"], 32);
  EXPECT_EQ(moe["attn_output"]["q5_k"], 32);
}

TEST(QuantMix, RowsThatAreNotWholeSuperBlocksFallBack) {
  ModelSpec s;
  s.n_layer = 2;
  s.mix = QuantMix::kQ4_K_M;
  EXPECT_EQ(tensor_type_for(s, "blk.1.attn_q.weight", "attn_q", {96, 96}), T::kQ5_0);
  EXPECT_EQ(tensor_type_for(s, "blk.1.ffn_down.weight", "ffn_down", {96, 96}), T::kQ8_0); // Q6_K
  EXPECT_EQ(tensor_type_for(s, "blk.0.ffn_down.weight", "ffn_down", {96, 96}), T::kQ5_0); // Q4_K
  EXPECT_EQ(tensor_type_for(s, "output.weight", "output", {96, 512}), T::kQ8_0);
  EXPECT_EQ(tensor_type_for(s, "blk.1.ffn_down.weight", "ffn_down", {172, 96}), T::kF16);
  s.mix = QuantMix::kQ2_K;
  EXPECT_EQ(tensor_type_for(s, "blk.1.attn_q.weight", "attn_q", {96, 96}), T::kIQ4_NL);
  s.mix = QuantMix::kQ5_K_M;
  EXPECT_EQ(tensor_type_for(s, "blk.1.attn_q.weight", "attn_q", {96, 96}), T::kQ5_1);
  // A --override wins over the recipe.
  s.overrides["attn_q"] = T::kF32;
  EXPECT_EQ(tensor_type_for(s, "blk.1.attn_q.weight", "attn_q", {256, 256}), T::kF32);
}

// MXFP4_MOE: the routed experts' stacks in MXFP4 (told from the dense FFN of the same
// class by name), every other matrix in Q8_0, the router F32; rows that are not whole
// blocks of 32 fall back to F16.
TEST(QuantMix, Mxfp4MoeQuantizesOnlyTheRoutedExpertsToMxfp4) {
  ModelSpec s;
  s.n_layer = 2;
  s.n_expert = 4;
  ASSERT_TRUE(parse_type_or_mix("MXFP4_MOE", &s).ok());
  EXPECT_EQ(s.mix, QuantMix::kMXFP4_MOE);
  EXPECT_EQ(s.type, T::kQ8_0);
  for (const char* cls : {"ffn_gate", "ffn_up", "ffn_down"}) {
    const std::string layer = std::string("blk.1.") + cls;
    EXPECT_EQ(tensor_type_for(s, layer + "_exps.weight", cls, {256, 128, 4}), T::kMXFP4) << cls;
    EXPECT_EQ(tensor_type_for(s, layer + ".weight", cls, {256, 128}), T::kQ8_0) << cls;
    EXPECT_EQ(tensor_type_for(s, layer + "_shexp.weight", std::string(cls) + "_shexp", {256, 128}),
              T::kQ8_0)
        << cls;
  }
  for (const char* cls : {"attn_q", "attn_k", "attn_v", "attn_output", "output", "token_embd"})
    EXPECT_EQ(tensor_type_for(s, std::string(cls) + ".weight", cls, {256, 512}), T::kQ8_0) << cls;
  EXPECT_EQ(tensor_type_for(s, "blk.0.ffn_gate_inp.weight", "ffn_gate_inp", {256, 4}), T::kF32);
  EXPECT_EQ(tensor_type_for(s, "blk.0.ffn_down_exps.weight", "ffn_down", {48, 256, 4}), T::kF16);
  EXPECT_EQ(tensor_type_for(s, "blk.0.attn_q.weight", "attn_q", {48, 48}), T::kF16);
}

TEST(QuantMix, UnknownNamesListTypesAndMixes) {
  ModelSpec s;
  Status st = parse_type_or_mix("q4_k_x", &s);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(st.message().find("q4_k_m, q5_k_m, q3_k_m, q2_k, mxfp4_moe"), std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("iq4_xs"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("bf16, mxfp4;"), std::string::npos) << st.message(); // the type
}

// Each mix of a small shape (rows of 256, one 64-wide FFN tail) writes a file whose
// tensors have the recipe's types and which runs; mxfp4_moe on a model with 4 routed
// experts of width 96 (its MXFP4 expert stacks).
TEST(QuantMix, GeneratedMixesLoadAndRun) {
  const std::string dir = ::testing::TempDir();
  for (const char* mix : {"q4_k_m", "q5_k_m", "q3_k_m", "q2_k", "mxfp4_moe"}) {
    SCOPED_TRACE(mix);
    const bool moe = std::string(mix) == "mxfp4_moe";
    ModelSpec s;
    s.n_embd = 256;
    s.n_layer = 3;
    s.n_head = 8;
    s.n_head_kv = 2;
    s.n_ff = moe ? 96 : 320; // ffn_down rows of 320: not whole super-blocks, so the fallbacks
    s.n_expert = moe ? 4 : 0;
    s.n_expert_used = moe ? 2 : 0;
    ASSERT_TRUE(parse_type_or_mix(mix, &s).ok());
    const std::string path = dir + "/mix-" + mix + "-" + std::to_string(getpid()) + ".gguf";
    ASSERT_TRUE(write_model(s, path).ok());
    auto f = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    int mxfp4_tensors = 0;
    for (const gguf::TensorInfo& t : (*f)->tensors()) {
      if (t.dims.size() >= 2) {
        EXPECT_EQ(t.type, tensor_type_for(s, t.name, class_of(t.name), t.dims)) << t.name;
      }
      mxfp4_tensors += t.type == T::kMXFP4;
    }
    EXPECT_EQ(mxfp4_tensors, moe ? 3 * s.n_layer : 0);
    auto model = Model::load(path);
    ASSERT_TRUE(model.ok()) << model.status().to_string();
    auto session = CpuSession::create(**model, {32, 1, 16});
    ASSERT_TRUE(session.ok()) << session.status().to_string();
    const std::vector<TokenId> prompt = {1, 20, 30};
    auto logits = (*session)->decode(prompt);
    ASSERT_TRUE(logits.ok()) << logits.status().to_string();
    for (float v : *logits)
      ASSERT_TRUE(std::isfinite(v));
    std::filesystem::remove(path);
  }
}

} // namespace
} // namespace pshard
