// What Gemma's, Phi-3's, Phi-3.5-MoE's, gpt-oss's and DeepSeek's files say beyond the shared
// skeleton, as read: Gemma's local layers, their window, RoPE and scale, the soft-caps; Phi-3's
// fused matrices and LongRoPE; gpt-oss's sinks, biases and windows — from the keys llama.cpp's
// converters write, and from the family's defaults where a converter left a key out.
#include "gguf_rewrite.h"
#include "runtime/device/ops.h"
#include "runtime/model/hparams.h"
#include "runtime/model/sublayer.h"
#include "runtime/model/tensor_layout.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <gtest/gtest.h>

namespace pshard {
namespace {

class FamilyHParams : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pshard-family-hparams-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The hyperparameters of a sparse (headers only) model of `spec`, its metadata edited.
  ModelHParams read(ModelSpec spec, const testing::GgufEdit& edit = nullptr) {
    spec.n_embd = 64;
    spec.n_head = 4;
    spec.n_head_kv = spec.kv_lora_rank > 0 ? 1 : 2; // latent attention: one KV head
    spec.n_ff = 96;
    spec.sparse = true;
    std::string path = (dir_ / "model.gguf").string();
    EXPECT_TRUE(write_model(spec, path).ok());
    if (edit) {
      const std::string edited = (dir_ / "edited.gguf").string();
      testing::rewrite_gguf(path, edited, edit);
      path = edited;
    }
    auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    auto hp = read_model_hparams(**file);
    EXPECT_TRUE(hp.ok()) << hp.status().to_string();
    return hp.ok() ? *hp : ModelHParams{};
  }

  static ModelSpec family(const char* arch, int64_t n_layer) {
    ModelSpec s;
    s.arch = arch;
    s.n_layer = n_layer;
    return s;
  }

  std::filesystem::path dir_;
};

// The tensors the layout gives sub-layer `kind` of layer `layer`, in order.
std::vector<std::string> tensor_names(const ModelHParams& hp, SubLayerKind kind, int64_t layer) {
  std::vector<std::string> names;
  for (const SubLayer& sl : model_sublayers(hp))
    if (sl.kind == kind && sl.layer == layer)
      for (const TensorSpec& t : sublayer_tensor_specs(hp, sl))
        names.push_back(t.name);
  return names;
}

std::vector<bool> local_layers(const ModelHParams& hp) {
  std::vector<bool> out;
  for (int64_t il = 0; il < hp.n_layer; ++il)
    out.push_back(hp.is_local_layer(il));
  return out;
}

TEST_F(FamilyHParams, Gemma3HasFiveLocalLayersInSixWithTheirOwnUnscaledRope) {
  ModelSpec s = family("gemma3", 13);
  s.sliding_window = 512;
  s.rope_freq_base = 1e6f;
  s.rope_scaling = "linear";
  s.rope_scaling_factor = 8.0f;
  const ModelHParams hp = read(s);
  EXPECT_EQ(local_layers(hp), (std::vector<bool>{true, true, true, true, true, false, true, true,
                                                 true, true, true, false, true}));
  EXPECT_EQ(hp.attention_window(0), 512);
  EXPECT_EQ(hp.attention_window(5), 0);
  const RopeParams local = hp.rope(nullptr, 0), global = hp.rope(nullptr, 5);
  EXPECT_EQ(local.freq_base, 10000.0f);
  EXPECT_EQ(local.freq_scale, 1.0f);
  EXPECT_EQ(local.scaling, RopeScaling::kNone);
  EXPECT_TRUE(local.neox);
  EXPECT_EQ(global.freq_base, 1e6f);
  EXPECT_EQ(global.freq_scale, 0.125f);
  EXPECT_FLOAT_EQ(hp.embed_scale, 8.0f); // sqrt(64)
  EXPECT_EQ(hp.family->activation, FfnActivation::kGeluTanh);
  EXPECT_TRUE(hp.post_norms);
  EXPECT_TRUE(hp.qk_norm);
  EXPECT_EQ(hp.attn_scale, 0.0f); // 1/sqrt(head_dim): not the 27B
  EXPECT_EQ(hp.attn_softcap, 0.0f);
  EXPECT_EQ(hp.final_softcap, 0.0f);
}

TEST_F(FamilyHParams, Gemma3WithoutAWindowKeyAttendsEverywhereWithOneRope) {
  ModelSpec s = family("gemma3", 7);
  s.rope_freq_base = 1e6f;
  const ModelHParams hp = read(s);
  EXPECT_EQ(local_layers(hp), std::vector<bool>(7, false));
  EXPECT_EQ(hp.rope(nullptr, 0).freq_base, 1e6f);
}

TEST_F(FamilyHParams, TheFilesPatternAndLocalBaseWin) {
  ModelSpec s = family("gemma3", 4);
  s.sliding_window = 64;
  EXPECT_EQ(local_layers(read(s,
                              [](auto& md, auto&) {
                                testing::set_key(md, "gemma3.attention.sliding_window_pattern",
                                                 gguf::Value{uint32_t{2}});
                                testing::set_key(md, "gemma3.rope.freq_base_swa",
                                                 gguf::Value{5000.0f});
                              })),
            (std::vector<bool>{true, false, true, false}));
  const ModelHParams flags = read(s, [](auto& md, auto&) {
    gguf::Array a{gguf::ValueType::kBool, {{false}, {true}, {true}, {false}}};
    testing::set_key(md, "gemma3.attention.sliding_window_pattern", gguf::Value{a});
    testing::set_key(md, "gemma3.rope.freq_base_swa", gguf::Value{5000.0f});
  });
  EXPECT_EQ(local_layers(flags), (std::vector<bool>{false, true, true, false}));
  EXPECT_EQ(flags.rope(nullptr, 1).freq_base, 5000.0f);
}

// EmbeddingGemma: Gemma 3's layers attending both ways without an attention.causal key,
// its local windows centred on the query (a file saying causal: arch_metadata_test).
TEST_F(FamilyHParams, GemmaEmbeddingAttendsBothWaysThroughCentredWindows) {
  ModelSpec s = family("gemma-embedding", 7);
  s.sliding_window = 512;
  s.rope_freq_base = 1e6f;
  const ModelHParams hp = read(s);
  EXPECT_FALSE(hp.causal);
  EXPECT_TRUE(hp.symmetric_window());
  EXPECT_EQ(hp.pooling, Pooling::kMean);
  EXPECT_EQ(local_layers(hp), (std::vector<bool>{true, true, true, true, true, false, true}));
  EXPECT_EQ(hp.attention_window(0), 512);
  EXPECT_EQ(hp.rope(nullptr, 0).freq_base, 10000.0f);
  EXPECT_EQ(hp.rope(nullptr, 5).freq_base, 1e6f);
  EXPECT_TRUE(hp.rope(nullptr, 0).neox);
  EXPECT_FLOAT_EQ(hp.embed_scale, 8.0f);
  EXPECT_EQ(hp.attn_scale, 0.0f); // 1/sqrt(head_dim) at every size
  EXPECT_TRUE(hp.post_norms && hp.qk_norm);
  EXPECT_EQ(pass_tokens_for(hp, 16, 512), 512); // a text is one pass
  EXPECT_FALSE(read(family("gemma3", 7)).symmetric_window());
}

// ModernBERT: every third layer global from layer 0, the others local with base 10000,
// LayerNorms (eps 1e-5 unless the file says), fused q/k/v and gate/up, no attn_norm in
// layer 0, the head the final norm alone.
TEST_F(FamilyHParams, ModernBertIsGlobalFirstWithLayerNorms) {
  ModelSpec s = family("modern-bert", 7);
  s.sliding_window = 128;
  s.rope_freq_base = 160000.0f;
  const ModelHParams hp = read(s);
  EXPECT_FALSE(hp.causal);
  EXPECT_TRUE(hp.symmetric_window());
  EXPECT_EQ(local_layers(hp), (std::vector<bool>{false, true, true, false, true, true, false}));
  EXPECT_EQ(hp.rope(nullptr, 0).freq_base, 160000.0f);
  EXPECT_EQ(hp.rope(nullptr, 1).freq_base, 10000.0f);
  EXPECT_TRUE(hp.rope(nullptr, 1).neox);
  EXPECT_TRUE(hp.fused_qkv);
  EXPECT_EQ(hp.family->activation, FfnActivation::kGeluErf);
  EXPECT_FLOAT_EQ(hp.rms_eps, 1e-5f);
  EXPECT_FALSE(hp.has_position_table());
  auto names = [&](SubLayerKind kind, int64_t layer) {
    std::vector<std::string> out;
    for (const TensorSpec& t : sublayer_tensor_specs(hp, {kind, layer, ""}))
      out.push_back(t.name);
    return out;
  };
  EXPECT_EQ(names(SubLayerKind::kAttention, 0),
            (std::vector<std::string>{"token_embd_norm.weight", "blk.0.attn_qkv.weight",
                                      "blk.0.attn_output.weight", "rope_freqs.weight"}));
  EXPECT_EQ(names(SubLayerKind::kAttention, 1).front(), "blk.1.attn_norm.weight");
  EXPECT_EQ(names(SubLayerKind::kFfn, 1),
            (std::vector<std::string>{"blk.1.ffn_norm.weight", "blk.1.ffn_up.weight",
                                      "blk.1.ffn_down.weight"}));
  EXPECT_EQ(names(SubLayerKind::kHead, -1), (std::vector<std::string>{"output_norm.weight"}));
}

TEST_F(FamilyHParams, Gemma2DefaultsToEvenLocalLayersOf4096AndItsSoftCaps) {
  const ModelHParams hp = read(family("gemma2", 4));
  EXPECT_EQ(local_layers(hp), (std::vector<bool>{true, false, true, false}));
  EXPECT_EQ(hp.attention_window(2), 4096);
  EXPECT_EQ(hp.attn_softcap, 50.0f);
  EXPECT_EQ(hp.final_softcap, 30.0f);
  EXPECT_FALSE(hp.qk_norm);
  // Gemma 2's local layers keep the global RoPE.
  EXPECT_EQ(hp.rope(nullptr, 0).freq_base, hp.rope(nullptr, 1).freq_base);
  ModelSpec s = family("gemma2", 4);
  s.attn_softcap = 0.0f;
  s.final_softcap = 12.5f;
  const ModelHParams set = read(s);
  EXPECT_EQ(set.attn_softcap, 0.0f);
  EXPECT_EQ(set.final_softcap, 12.5f);
}

TEST_F(FamilyHParams, The27BScalesAttentionByTheWidthPerHeadUnlessTheFileSays) {
  ModelSpec s = family("gemma3", 62);
  s.head_dim = 32; // n_embd / n_head = 16
  EXPECT_FLOAT_EQ(read(s).attn_scale, 0.25f);
  EXPECT_FLOAT_EQ(
      read(s, [](auto& md,
                 auto&) { testing::set_key(md, "gemma3.attention.scale", gguf::Value{0.1f}); })
          .attn_scale,
      0.1f);
  ModelSpec nine = family("gemma2", 42);
  nine.head_dim = 32;
  EXPECT_EQ(read(nine).attn_scale, 0.0f); // 1/sqrt(head_dim)
}

TEST_F(FamilyHParams, Phi3FusesItsMatricesAndIgnoresTheTrainingWindow) {
  const ModelHParams hp = read(family("phi3", 2), [](auto& md, auto&) {
    testing::set_key(md, "phi3.attention.sliding_window", gguf::Value{uint32_t{2047}});
  });
  EXPECT_TRUE(hp.fused_qkv);
  EXPECT_TRUE(hp.family->fused_gate_up);
  EXPECT_EQ(local_layers(hp), std::vector<bool>(2, false)); // llama.cpp: full attention
  EXPECT_FALSE(hp.long_rope);
  EXPECT_TRUE(hp.rope(nullptr).neox);
}

TEST_F(FamilyHParams, GraniteReadsItsMultipliers) {
  const ModelHParams hp = read(family("granite", 2));
  EXPECT_EQ(hp.embed_scale, 12.0f);
  EXPECT_EQ(hp.residual_scale, 0.22f);
  EXPECT_EQ(hp.logit_scale, 1.0f / 8.0f); // the logits are divided by logit_scale
  EXPECT_EQ(hp.attn_scale, 1.0f / 16.0f); // attention.scale: 1 / head_dim here
  EXPECT_FALSE(hp.rope(nullptr).neox);
  ModelSpec moe = family("granitemoe", 2);
  moe.n_expert = 4;
  moe.n_expert_used = 2;
  const ModelHParams granite_moe = read(moe);
  EXPECT_EQ(granite_moe.residual_scale, 0.22f) << "the MoE's multipliers are Granite's";
  EXPECT_EQ(granite_moe.n_expert, 4);
  EXPECT_EQ(granite_moe.n_ff_exp, granite_moe.n_ff) << "experts as wide as feed_forward_length";
  const ModelHParams llama = read(family("llama", 2));
  EXPECT_EQ(llama.residual_scale, 1.0f);
  EXPECT_EQ(llama.logit_scale, 1.0f);
}

TEST_F(FamilyHParams, Mistral3StepsItsTemperatureEveryOriginalContext) {
  ModelSpec s = family("mistral3", 2);
  s.n_ctx = 4096;
  s.rope_scaling = "yarn";
  s.rope_scaling_factor = 16.0f;
  s.rope_ctx_orig = 256;
  s.attn_temperature_scale = 0.1f;
  const ModelHParams plain = read(s);
  EXPECT_EQ(plain.attn_temp_scale, 0.1f);
  EXPECT_EQ(plain.attn_temp_length, 256);
  EXPECT_FALSE(plain.rope(nullptr).neox);
  AttentionDims d{4, 2, 16};
  d.temp_scale = plain.attn_temp_scale;
  d.temp_length = plain.attn_temp_length;
  EXPECT_EQ(d.score_scale(254), 0.25f); // positions 1..255 of the first step: none
  EXPECT_FLOAT_EQ(d.score_scale(255), 0.25f * (1.0f + 0.1f * std::log(2.0f)));
  EXPECT_FLOAT_EQ(d.score_scale(767), 0.25f * (1.0f + 0.1f * std::log(4.0f)));
  // yarn_log_multiplier divides YaRN's magnitude by its mscale over all dimensions.
  const ModelHParams mul = read(s, [](auto& md, auto&) {
    testing::set_key(md, "mistral3.rope.scaling.yarn_log_multiplier", gguf::Value{2.0f});
  });
  EXPECT_FLOAT_EQ(mul.yarn_attn_factor,
                  (0.1f * std::log(16.0f) + 1.0f) / (0.2f * std::log(16.0f) + 1.0f));
}

TEST_F(FamilyHParams, SmolLm3LeavesEveryFourthLayerUnrotated) {
  const ModelHParams hp = read(family("smollm3", 8));
  std::vector<bool> rotates;
  for (int64_t il = 0; il < hp.n_layer; ++il)
    rotates.push_back(hp.uses_rope(il));
  EXPECT_EQ(rotates, (std::vector<bool>{true, true, true, false, true, true, true, false}));
  EXPECT_TRUE(read(family("llama", 4)).uses_rope(3));
}

// Llama 4: layers 3 and 7 unrotated, seeing everything and warmed by the temperature; the
// others in chunks (8192 without the key), their q/k normed — not with Maverick's 128
// experts; one sigmoid expert weighing its input, unnormalised; a file with
// attention.sliding_window 0 (MobileLLM-R1) attends fully, only its last layer unrotated.
TEST_F(FamilyHParams, Llama4ChunksItsRotatingLayersAndWarmsTheOthers) {
  ModelSpec s = family("llama4", 8);
  s.n_expert = 16;
  s.n_expert_used = 1;
  s.moe_layer_step = 2;
  const ModelHParams hp = read(s);
  std::vector<bool> rotates, local, moe;
  std::vector<float> temperature;
  for (int64_t il = 0; il < hp.n_layer; ++il) {
    rotates.push_back(hp.uses_rope(il));
    local.push_back(hp.attention_window(il) > 0);
    moe.push_back(hp.is_moe_layer(il));
    temperature.push_back(hp.attention_temperature(il));
  }
  const std::vector<bool> nope{true, true, true, false, true, true, true, false};
  EXPECT_EQ(rotates, nope);
  EXPECT_EQ(local, nope) << "the rotating layers are the chunked ones";
  EXPECT_EQ(moe, (std::vector<bool>{false, true, false, true, false, true, false, true}));
  EXPECT_EQ(temperature, (std::vector<float>{0, 0, 0, 0.1f, 0, 0, 0, 0.1f}));
  EXPECT_EQ(hp.attn_temp_length, 8192);
  EXPECT_EQ(hp.sliding_window, 8192);
  EXPECT_TRUE(hp.chunked_window);
  EXPECT_TRUE(hp.rope_qk_norm);
  EXPECT_EQ(hp.gating, ExpertGating::kSigmoid);
  EXPECT_FALSE(hp.normalize_expert_weights);
  EXPECT_TRUE(hp.has_shared_expert());
  EXPECT_TRUE(moe_gating_of(hp, MoeWeights{}).weight_inputs);
  AttentionDims d{4, 2, 16};
  d.window = 5;
  d.chunked = true;
  EXPECT_EQ(d.first_visible(4), 0);
  EXPECT_EQ(d.first_visible(5), 5) << "a chunk's first position sees only itself";
  EXPECT_EQ(d.first_visible(9), 5);

  s.attn_chunk = 32;
  s.n_expert = 128; // Maverick's count
  const ModelHParams maverick = read(s);
  EXPECT_EQ(maverick.sliding_window, 32);
  EXPECT_FALSE(maverick.rope_qk_norm);

  s.attn_chunk = -1;
  s.sliding_window = 0;
  const ModelHParams mobile = read(s);
  EXPECT_FALSE(mobile.chunked_window);
  EXPECT_EQ(mobile.attention_window(0), 0);
  EXPECT_TRUE(mobile.uses_rope(3));
  EXPECT_FALSE(mobile.uses_rope(7));
  EXPECT_EQ(mobile.attention_temperature(7), 0.0f);
}

// Qwen3-Next: every fourth layer attends (gated: attn_q twice the queries), the others are
// Gated DeltaNet with their own tensors (ssm_a without a suffix, dt's bias); the ssm.* keys
// give the heads; the file's per-layer flags win over the interval; the experts' pre-norm is
// post_attention_norm.
TEST_F(FamilyHParams, Qwen3NextRecursThreeLayersInFourAndGatesItsAttention) {
  ModelSpec s = family("qwen3next", 8);
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.head_dim = 16;
  s.rope_dim = 8;
  s.ssm_state = 16;
  s.ssm_groups = 2;
  s.ssm_v_heads = 4;
  const ModelHParams hp = read(s);
  std::vector<bool> recurrent;
  for (int64_t il = 0; il < hp.n_layer; ++il)
    recurrent.push_back(hp.is_recurrent_layer(il));
  EXPECT_EQ(recurrent, (std::vector<bool>{true, true, true, false, true, true, true, false}));
  EXPECT_EQ(hp.first_attention_layer(), 3);
  EXPECT_EQ(hp.delta_net.n_k_heads, 2);
  EXPECT_EQ(hp.delta_net.n_v_heads, 4);
  EXPECT_EQ(hp.delta_net.d_k, 16);
  EXPECT_EQ(hp.delta_net.d_v, 16);
  EXPECT_EQ(hp.delta_net.conv_kernel, 4);
  EXPECT_EQ(hp.delta_net.conv_dim(), 2 * 32 + 64);
  EXPECT_EQ(hp.delta_net.k_head(3), 1) << "v heads 2 and 3 read k head 1";
  EXPECT_EQ(hp.delta_net.b_index(3), 5) << "k head 1's b then a: b of v heads 2, 3 at 4, 5";
  EXPECT_EQ(hp.delta_net.a_index(3), 7);
  EXPECT_TRUE(hp.qk_norm);
  EXPECT_EQ(hp.q_rows(), 2 * hp.q_dim());
  EXPECT_TRUE(hp.has_shared_expert());
  const std::vector<std::string> gdn = tensor_names(hp, SubLayerKind::kAttention, 0);
  for (const char* t : {"blk.0.attn_qkv.weight", "blk.0.attn_gate.weight", "blk.0.ssm_ba.weight",
                        "blk.0.ssm_conv1d.weight", "blk.0.ssm_a", "blk.0.ssm_dt.bias",
                        "blk.0.ssm_norm.weight", "blk.0.ssm_out.weight"})
    EXPECT_NE(std::find(gdn.begin(), gdn.end(), t), gdn.end()) << t;
  const std::vector<std::string> attn = tensor_names(hp, SubLayerKind::kAttention, 3);
  EXPECT_NE(std::find(attn.begin(), attn.end(), "blk.3.attn_q_norm.weight"), attn.end());
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kMoe, 0).front(), "blk.0.post_attention_norm.weight");

  const ModelHParams flagged = read(s, [](auto& md, auto&) {
    gguf::Array flags{gguf::ValueType::kBool, {}};
    for (bool f : {true, true, true, false, true, true, true, false})
      flags.items.push_back({f});
    testing::set_key(md, "qwen3next.attention.recurrent_layers", gguf::Value{flags});
    testing::set_key(md, "qwen3next.full_attention_interval", gguf::Value{uint32_t{2}});
  });
  EXPECT_TRUE(flagged.is_recurrent_layer(1)) << "an interval of 2 would make layer 1 attend";
  EXPECT_FALSE(flagged.is_recurrent_layer(3));

  s.ssm_in = true; // the first conversions: q, k, v and z in one ssm_in
  const ModelHParams first = read(s);
  EXPECT_TRUE(first.delta_net_ssm_in);
  const std::vector<std::string> fused = tensor_names(first, SubLayerKind::kAttention, 0);
  EXPECT_NE(std::find(fused.begin(), fused.end(), "blk.0.ssm_in.weight"), fused.end());
  EXPECT_EQ(std::find(fused.begin(), fused.end(), "blk.0.attn_qkv.weight"), fused.end());
  EXPECT_FALSE(hp.delta_net_ssm_in);
}

// Qwen3.5: b and a from ssm_beta and ssm_alpha, v heads tiled over the k heads; the
// interleaved M-RoPE's sections covering every pair (NeoX for text, interleaved); the
// recurrent flags listing the unrun multi-token-prediction block too.
TEST_F(FamilyHParams, Qwen35TilesItsVHeadsAndSplitsBetaAndAlpha) {
  ModelSpec s = family("qwen35moe", 4);
  s.n_expert = 4;
  s.n_expert_used = 2;
  s.head_dim = 16;
  s.rope_dim = 12;
  s.ssm_state = 16;
  s.ssm_groups = 2;
  s.ssm_v_heads = 6;
  s.n_nextn = 1;
  const ModelHParams hp = read(s, [](auto& md, auto&) {
    gguf::Array flags{gguf::ValueType::kBool, {}};
    for (bool f : {true, true, true, false, false}) // the fifth: the MTP block
      flags.items.push_back({f});
    testing::set_key(md, "qwen35moe.attention.recurrent_layers", gguf::Value{flags});
  });
  EXPECT_EQ(hp.n_layer, 4);
  EXPECT_TRUE(hp.is_recurrent_layer(2));
  EXPECT_FALSE(hp.is_recurrent_layer(3));
  EXPECT_TRUE(hp.delta_net.tiled_heads);
  EXPECT_FALSE(hp.delta_net.grouped_ba);
  EXPECT_EQ(hp.delta_net.k_head(3), 1) << "tiled: v head 3 reads k head 3 % 2";
  EXPECT_EQ(hp.delta_net.k_head(4), 0);
  EXPECT_EQ(hp.delta_net.a_index(4), 4);
  EXPECT_EQ(2 * (hp.rope_sections[0] + hp.rope_sections[1] + hp.rope_sections[2]), hp.rope_dim)
      << "interleaved sections cover every rotary pair (text: plain NeoX RoPE)";
  EXPECT_TRUE(hp.rope(nullptr).interleaved);
  const std::vector<std::string> gdn = tensor_names(hp, SubLayerKind::kAttention, 0);
  for (const char* t : {"blk.0.ssm_beta.weight", "blk.0.ssm_alpha.weight"})
    EXPECT_NE(std::find(gdn.begin(), gdn.end(), t), gdn.end()) << t;
  EXPECT_EQ(std::find(gdn.begin(), gdn.end(), "blk.0.ssm_ba.weight"), gdn.end());
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kMoe, 0).front(), "blk.0.post_attention_norm.weight");
  EXPECT_TRUE(hp.has_shared_expert());
}

// gpt-oss: sinks and MoE biases required and read; its even layers local at the file's
// window (128 when the key is absent) and rotating exactly as the global ones (YaRN
// included); the MoE block pre-normed by post_attention_norm, which is no post-norm here.
TEST_F(FamilyHParams, GptOssHasSinksBiasedExpertsAndEvenLocalLayersWithTheGlobalRope) {
  ModelSpec s = family("gpt-oss", 4);
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.rope_scaling = "yarn";
  s.rope_scaling_factor = 32.0f;
  s.rope_ctx_orig = 64;
  s.n_ctx = 2048;
  const ModelHParams hp = read(s);
  EXPECT_TRUE(hp.attn_sinks);
  EXPECT_TRUE(hp.moe_biases);
  EXPECT_TRUE(hp.qkv_bias);
  EXPECT_TRUE(hp.out_bias);
  EXPECT_FALSE(hp.post_norms);
  EXPECT_EQ(hp.family->activation, FfnActivation::kSwigluOai);
  EXPECT_EQ(hp.sliding_window, 128);
  EXPECT_EQ(local_layers(hp), (std::vector<bool>{true, false, true, false}));
  const RopeParams local = hp.rope(nullptr, 0), global = hp.rope(nullptr, 1);
  EXPECT_EQ(local.scaling, RopeScaling::kYarn);
  EXPECT_EQ(local.freq_base, global.freq_base);
  EXPECT_EQ(local.freq_scale, global.freq_scale);
  EXPECT_EQ(local.ext_factor, global.ext_factor);
  s.sliding_window = 5;
  EXPECT_EQ(read(s).sliding_window, 5);
  // A file with rope.freq_base_swa: the local layers' own base, the global YaRN kept.
  const ModelHParams swa = read(s, [](auto& md, auto&) {
    testing::set_key(md, "gpt-oss.rope.freq_base_swa", gguf::Value{5000.0f});
  });
  EXPECT_EQ(swa.rope(nullptr, 0).freq_base, 5000.0f);
  EXPECT_EQ(swa.rope(nullptr, 0).scaling, RopeScaling::kYarn);
  EXPECT_EQ(swa.rope(nullptr, 0).freq_scale, swa.rope(nullptr, 1).freq_scale);
  EXPECT_NE(swa.rope(nullptr, 1).freq_base, 5000.0f);
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kMoe, 0),
            (std::vector<std::string>{"blk.0.post_attention_norm.weight",
                                      "blk.0.ffn_gate_inp.weight", "blk.0.ffn_gate_exps.weight",
                                      "blk.0.ffn_up_exps.weight", "blk.0.ffn_down_exps.weight",
                                      "blk.0.ffn_gate_inp.bias", "blk.0.ffn_gate_exps.bias",
                                      "blk.0.ffn_up_exps.bias", "blk.0.ffn_down_exps.bias"}));
}

TEST_F(FamilyHParams, Glm4MoeRunsDenseLeadsSigmoidRoutingAndLeavesItsNextnBlock) {
  ModelSpec s = family("glm4moe", 4);
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.head_dim = 32;
  s.rope_dim = 16;
  s.n_dense_lead = 1;
  s.n_ff_dense = 128;
  s.expert_weights_scale = 2.5f;
  s.n_nextn = 1;
  const ModelHParams hp = read(s);
  EXPECT_EQ(hp.n_layer, 4) << "block_count 5 less the NextN block";
  EXPECT_EQ(hp.n_nextn, 1);
  EXPECT_EQ(hp.rope_dim, 16);
  EXPECT_EQ(hp.n_ff, 128);
  EXPECT_EQ(hp.n_ff_exp, 96);
  EXPECT_EQ(hp.n_ff_shexp, 96) << "expert_shared_count 1 routed expert wide";
  EXPECT_EQ(hp.ffn_scratch_width(), 128) << "the dense layer is the widest";
  EXPECT_EQ(hp.gating, ExpertGating::kSigmoid);
  EXPECT_TRUE(hp.normalize_expert_weights);
  EXPECT_FLOAT_EQ(hp.expert_weights_scale, 2.5f);
  EXPECT_TRUE(hp.expert_selection_bias);
  EXPECT_FALSE(hp.is_moe_layer(0));
  EXPECT_TRUE(hp.is_moe_layer(1));
  std::vector<std::string> names;
  for (const SubLayer& sl : model_sublayers(hp))
    names.push_back(sl.name);
  EXPECT_EQ(names, (std::vector<std::string>{"embed", "attn[0]", "ffn[0]", "attn[1]", "moe[1]",
                                             "attn[2]", "moe[2]", "attn[3]", "moe[3]", "head"}));
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kMoe, 1),
            (std::vector<std::string>{"blk.1.post_attention_norm.weight",
                                      "blk.1.ffn_gate_inp.weight", "blk.1.ffn_gate_exps.weight",
                                      "blk.1.ffn_up_exps.weight", "blk.1.ffn_down_exps.weight",
                                      "blk.1.exp_probs_b.bias", "blk.1.ffn_gate_shexp.weight",
                                      "blk.1.ffn_up_shexp.weight", "blk.1.ffn_down_shexp.weight"}))
      << "the shared expert has no gate";
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kFfn, 0),
            (std::vector<std::string>{"blk.0.post_attention_norm.weight", "blk.0.ffn_gate.weight",
                                      "blk.0.ffn_up.weight", "blk.0.ffn_down.weight"}));
  EXPECT_TRUE(is_unrun_block_tensor(hp, "blk.4.nextn.eh_proj.weight"));
  EXPECT_TRUE(is_unrun_block_tensor(hp, "blk.4.ffn_gate_exps.weight"));
  EXPECT_FALSE(is_unrun_block_tensor(hp, "blk.3.ffn_gate_exps.weight"));
  EXPECT_FALSE(is_unrun_block_tensor(hp, "blk.5.attn_q.weight")) << "past the file's blocks";
  EXPECT_FALSE(is_unrun_block_tensor(hp, "blk.4"));
  EXPECT_FALSE(is_unrun_block_tensor(hp, "output.weight"));
  // A converter that left the routing keys out: the family's sigmoid, and llama.cpp's
  // default of no renormalising.
  const ModelHParams bare = read(s, [](auto& md, auto&) {
    testing::drop_key(md, "glm4moe.expert_gating_func");
    testing::drop_key(md, "glm4moe.expert_weights_norm");
  });
  EXPECT_EQ(bare.gating, ExpertGating::kSigmoid);
  EXPECT_FALSE(bare.normalize_expert_weights);
  // expert_gating_func 1 turns it into a softmax router.
  const ModelHParams softmax = read(s, [](auto& md, auto&) {
    testing::set_key(md, "glm4moe.expert_gating_func", gguf::Value{uint32_t{1}});
  });
  EXPECT_EQ(softmax.gating, ExpertGating::kSoftmax);
}

// ERNIE 4.5's MoE: dense leads, and with an interleaving step only every step-th layer
// after them routes; a correction that chooses experts; an ungated shared expert.
TEST_F(FamilyHParams, Ernie45MoeInterleavesDenseLayersAndCorrectsItsChoice) {
  ModelSpec s = family("ernie4_5-moe", 6);
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.n_dense_lead = 1;
  s.moe_layer_step = 2;
  s.n_ff_dense = 128;
  s.n_ff_shexp = 192;
  const ModelHParams hp = read(s);
  std::vector<bool> routes;
  for (int64_t il = 0; il < hp.n_layer; ++il)
    routes.push_back(hp.is_moe_layer(il));
  EXPECT_EQ(routes, (std::vector<bool>{false, true, false, true, false, true}));
  EXPECT_EQ(hp.first_moe_layer(), 1);
  EXPECT_EQ(hp.gating, ExpertGating::kSoftmax);
  EXPECT_TRUE(hp.normalize_expert_weights);
  EXPECT_TRUE(hp.expert_selection_bias);
  EXPECT_EQ(hp.n_ff_shexp, 192);
  EXPECT_EQ(hp.n_ff, 128);
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kFfn, 2),
            (std::vector<std::string>{"blk.2.ffn_norm.weight", "blk.2.ffn_gate.weight",
                                      "blk.2.ffn_up.weight", "blk.2.ffn_down.weight"}));
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kMoe, 3).back(), "blk.3.ffn_down_shexp.weight");
  EXPECT_FALSE(hp.family->shared_expert_gate);
  EXPECT_EQ(hp.rope(nullptr).neox, false);
}

// Ling 2.0: group-limited routing read from the file, q/k/v fused, q/k norms, partial RoPE.
TEST_F(FamilyHParams, BailingMoe2LimitsItsChoiceToGroups) {
  ModelSpec s = family("bailingmoe2", 3);
  s.n_expert = 16;
  s.n_expert_used = 3;
  s.head_dim = 32;
  s.rope_dim = 16;
  s.n_expert_groups = 4;
  s.n_expert_groups_used = 2;
  const ModelHParams hp = read(s);
  EXPECT_EQ(hp.n_expert_groups, 4);
  EXPECT_EQ(hp.n_expert_groups_used, 2);
  EXPECT_TRUE(hp.fused_qkv);
  EXPECT_TRUE(hp.qk_norm);
  EXPECT_EQ(hp.gating, ExpertGating::kSigmoid);
  EXPECT_EQ(hp.rope(nullptr).rot_dim, 16);
  EXPECT_TRUE(hp.rope(nullptr).neox);
}

TEST_F(FamilyHParams, Glm4SandwichesItsBlocksWithNormsAndRotatesPartOfEachHeadInPairs) {
  ModelSpec s = family("glm4", 2);
  s.head_dim = 32;
  s.rope_dim = 16;
  const ModelHParams hp = read(s);
  EXPECT_TRUE(hp.post_norms);
  EXPECT_TRUE(hp.family->fused_gate_up);
  EXPECT_EQ(hp.family->rope_style, RopeStyle::kNormal);
  const RopeParams rope = hp.rope(nullptr);
  EXPECT_EQ(rope.rot_dim, 16);
  EXPECT_EQ(rope.head_dim, 32);
  EXPECT_FALSE(rope.neox);
}

TEST_F(FamilyHParams, PhiMoeBiasesEveryNormAndItsLogits) {
  ModelSpec s = family("phimoe", 2);
  s.n_expert = 4;
  s.n_expert_used = 2;
  s.qkv_bias = true;
  const ModelHParams hp = read(s);
  EXPECT_TRUE(hp.norm_biases);
  EXPECT_TRUE(hp.output_bias);
  EXPECT_TRUE(hp.qkv_bias);
  EXPECT_TRUE(hp.out_bias);
  EXPECT_TRUE(hp.rope(nullptr).neox);
  EXPECT_EQ(hp.gating, ExpertGating::kSoftmax);
  EXPECT_TRUE(hp.normalize_expert_weights);
  auto has = [](const std::vector<std::string>& names, const char* name) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  EXPECT_TRUE(has(tensor_names(hp, SubLayerKind::kAttention, 1), "blk.1.attn_norm.bias"));
  EXPECT_TRUE(has(tensor_names(hp, SubLayerKind::kMoe, 1), "blk.1.ffn_norm.bias"));
  const std::vector<std::string> head = tensor_names(hp, SubLayerKind::kHead, -1);
  EXPECT_TRUE(has(head, "output_norm.bias"));
  EXPECT_TRUE(has(head, "output.bias"));
  // Llama's layout has none of them.
  const ModelHParams llama = read(family("llama", 2));
  EXPECT_FALSE(has(tensor_names(llama, SubLayerKind::kHead, -1), "output.bias"));
  EXPECT_FALSE(has(tensor_names(llama, SubLayerKind::kAttention, 0), "blk.0.attn_norm.bias"));
}

// DeepSeek's latent attention: the ranks and head widths from the keys llama.cpp's converter
// writes, one KV head over the cached latent, and YaRN's magnitude moved into the scores.
TEST_F(FamilyHParams, DeepSeek2AttendsOverOneLatentWithYarnInItsScale) {
  ModelSpec s = family("deepseek2", 3);
  s.n_expert = 8;
  s.n_expert_used = 2;
  s.head_dim = 24;
  s.rope_dim = 8;
  s.kv_lora_rank = 32;
  s.q_lora_rank = 48;
  s.head_dim_v = 16;
  s.n_dense_lead = 1;
  s.rope_scaling = "yarn";
  s.rope_scaling_factor = 40.0f;
  s.rope_ctx_orig = 64;
  ModelHParams hp = read(s, [](auto& kv, auto&) {
    testing::set_key(kv, "deepseek2.attention.head_count_kv", gguf::Value{uint32_t{4}});
  });
  EXPECT_TRUE(hp.latent_attention());
  EXPECT_EQ(hp.n_head_kv, 1) << "every head attends over the one latent, whatever the file says";
  EXPECT_EQ(hp.kv_lora_rank, 32);
  EXPECT_EQ(hp.q_lora_rank, 48);
  EXPECT_EQ(hp.head_dim, 24);
  EXPECT_EQ(hp.head_dim_v, 16);
  EXPECT_EQ(hp.kv_dim(), 8 + 32) << "K rows: the rotated part and the latent";
  EXPECT_EQ(hp.v_dim(), 32) << "V rows: the latent";
  const RopeParams rope = hp.rope(nullptr);
  EXPECT_EQ(rope.head_dim, 40);
  EXPECT_EQ(rope.rot_dim, 8);
  EXPECT_FALSE(rope.neox);
  // V2-Lite's numbers: yarn_log_multiplier 0.0707 (0.1 * mscale_all_dim) and factor 40 give
  // mscale 1.2608; the scores carry its square over sqrt(24), the rotation magnitude 1.
  const float mscale = 1.0f + 0.0707f * std::log(40.0f);
  EXPECT_NEAR(hp.attn_scale, mscale * mscale / std::sqrt(24.0f), 1e-6f);
  EXPECT_NEAR(hp.yarn_attn_factor * (1.0f + 0.1f * std::log(40.0f)), 1.0f, 1e-6f);
  const std::vector<std::string> attn = tensor_names(hp, SubLayerKind::kAttention, 0);
  EXPECT_EQ(attn,
            (std::vector<std::string>{"blk.0.attn_norm.weight", "blk.0.attn_q_a.weight",
                                      "blk.0.attn_q_a_norm.weight", "blk.0.attn_q_b.weight",
                                      "blk.0.attn_kv_a_mqa.weight", "blk.0.attn_kv_a_norm.weight",
                                      "blk.0.attn_k_b.weight", "blk.0.attn_v_b.weight",
                                      "blk.0.attn_output.weight", "rope_freqs.weight"}));
  // Without a query rank: one attn_q; without YaRN: 1/sqrt(head width).
  s.q_lora_rank = 0;
  s.rope_scaling = "none";
  hp = read(s);
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kAttention, 0)[1], "blk.0.attn_q.weight");
  EXPECT_NEAR(hp.attn_scale, 1.0f / std::sqrt(24.0f), 1e-7f);
  // The older files' form (no *_mla keys, one attn_kv_b): every head's keys and values
  // cached, the rotated part first.
  s.mla_kv_b = true;
  hp = read(s);
  EXPECT_TRUE(hp.latent_attention());
  EXPECT_FALSE(hp.latent_cache);
  EXPECT_EQ(hp.n_head_kv, hp.n_head);
  EXPECT_EQ(hp.kv_dim(), 4 * 24);
  EXPECT_EQ(hp.v_dim(), 4 * 16);
  EXPECT_EQ(hp.rope(nullptr).head_dim, 24);
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kAttention, 0)[2], "blk.0.attn_kv_a_mqa.weight");
  EXPECT_EQ(tensor_names(hp, SubLayerKind::kAttention, 0)[4], "blk.0.attn_kv_b.weight");
}

TEST_F(FamilyHParams, LongRopeSwitchesPastTheOriginalContext) {
  ModelSpec s = family("phi3", 2);
  s.n_ctx = 4096;
  s.rope_scaling = "longrope";
  s.rope_scaling_factor = 32.0f;
  s.rope_ctx_orig = 128;
  const ModelHParams hp = read(s);
  EXPECT_TRUE(hp.long_rope);
  EXPECT_EQ(hp.rope_ctx_orig, 128);
  EXPECT_FLOAT_EQ(hp.yarn_attn_factor, std::sqrt(1.0f + std::log(32.0f) / std::log(128.0f)));
  EXPECT_EQ(hp.rope_scaling, RopeScaling::kNone); // the factors are the scaling
  EXPECT_FALSE(hp.uses_long_rope_factors(128));
  EXPECT_TRUE(hp.uses_long_rope_factors(129));
  EXPECT_EQ(hp.rope(nullptr).attn_factor, hp.yarn_attn_factor);
}

} // namespace
} // namespace pshard
