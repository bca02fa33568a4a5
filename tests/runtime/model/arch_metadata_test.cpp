// Malformed architecture metadata and tensors, one table row each: a good model of the
// row's family is written by pshard-mkmodel, broken by one edit, and loading it must fail
// with the expected code and a message that names what is wrong. The same file must
// still load before the edit (so each row tests exactly its edit).
#include "gguf_rewrite.h"
#include "model_test_util.h"

#include "tools/pshard-mkmodel/model_generator.h"

#include <filesystem>

namespace pshard {
namespace {

using testing::drop_key;
using testing::drop_tensor;
using testing::RewrittenTensor;
using testing::set_key;

using GgufEditFn = void (*)(std::vector<gguf::KeyValue>&, std::vector<RewrittenTensor>&);

struct BadCase {
  const char* name;
  const char* arch;
  GgufEditFn edit;
  StatusCode code;
  std::vector<const char*> says; // substrings of the message
};

ModelSpec spec_for(const std::string& arch) {
  ModelSpec s;
  s.arch = arch;
  s.n_embd = 32;
  s.n_layer = 2;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ff = 64;
  if (arch.find("moe") != std::string::npos || arch == "gpt-oss" || arch == "llama4") {
    s.n_expert = 4;
    s.n_expert_used = 2;
  }
  if (arch == "deepseek2") { // latent attention: one KV head, heads of 8 + 4 rotated
    s.n_head_kv = 1;
    s.n_expert = 4;
    s.n_expert_used = 2;
    s.head_dim = 12;
    s.rope_dim = 4;
    s.kv_lora_rank = 16;
  }
  if (arch == "qwen35") { // layers 0-2 Gated DeltaNet, layer 3 gated attention
    s.n_layer = 4;
  }
  if (arch == "qwen3next") { // layers 0-2 Gated DeltaNet, layer 3 gated attention
    s.n_layer = 4;
    s.n_expert = 4;
    s.n_expert_used = 2;
  }
  if (arch == "glm4moe") { // layer 0 dense, layers 1-2 MoE, block 3 the unrun NextN head
    s.n_layer = 3;
    s.n_dense_lead = 1;
    s.n_nextn = 1;
    s.rope_dim = 4;
  }
  return s;
}

gguf::Value u32(uint32_t v) { return gguf::Value{v}; }
gguf::Value str(const char* v) { return gguf::Value{std::string(v)}; }

// Adds `name` with the shape and bytes of `like`.
void add_copy(std::vector<RewrittenTensor>& t, const std::string& name, const std::string& like) {
  for (const RewrittenTensor& r : t)
    if (r.info.name == like) {
      RewrittenTensor copy = r;
      copy.info.name = name;
      t.push_back(copy);
      return;
    }
  FAIL() << like << " not in the model";
}

const BadCase kCases[] = {
    {"unknown_architecture",
     "llama",
     [](auto& md, auto&) { set_key(md, "general.architecture", str("mamba")); },
     StatusCode::kUnsupported,
     {"'mamba'", "qwen3moe", "qwen2"}},
    {"qwen2vl_without_rope_sections",
     "qwen2vl",
     [](auto& md, auto&) { drop_key(md, "qwen2vl.rope.dimension_sections"); },
     StatusCode::kInvalidFormat,
     {"qwen2vl.rope.dimension_sections", "multimodal RoPE"}},
    {"qwen2vl_sections_not_covering_the_head",
     "qwen2vl",
     [](auto& md, auto&) {
       gguf::Array a{gguf::ValueType::kInt32, {{int32_t{1}}, {int32_t{1}}, {int32_t{1}}, {int32_t{0}}}};
       set_key(md, "qwen2vl.rope.dimension_sections", gguf::Value{a});
     },
     StatusCode::kInvalidFormat,
     {"qwen2vl.rope.dimension_sections", "sums to 3"}},
    {"qwen2vl_sections_not_integers",
     "qwen2vl",
     [](auto& md, auto&) {
       gguf::Array a{gguf::ValueType::kFloat32, {{1.0f}, {1.0f}, {1.0f}, {0.0f}}};
       set_key(md, "qwen2vl.rope.dimension_sections", gguf::Value{a});
     },
     StatusCode::kInvalidFormat,
     {"qwen2vl.rope.dimension_sections", "integers"}},
    {"qwen2_with_rope_sections",
     "qwen2",
     [](auto& md, auto&) {
       gguf::Array a{gguf::ValueType::kInt32, {{int32_t{1}}, {int32_t{1}}, {int32_t{2}}, {int32_t{0}}}};
       set_key(md, "qwen2.rope.dimension_sections", gguf::Value{a});
     },
     StatusCode::kUnsupported,
     {"qwen2.rope.dimension_sections", "no multimodal RoPE"}},
    {"missing_embedding_length",
     "qwen2",
     [](auto& md, auto&) { drop_key(md, "qwen2.embedding_length"); },
     StatusCode::kInvalidFormat,
     {"qwen2.embedding_length", "required"}},
    {"heads_not_a_multiple_of_kv_heads",
     "qwen3",
     [](auto& md, auto&) { set_key(md, "qwen3.attention.head_count_kv", u32(3)); },
     StatusCode::kInvalidFormat,
     {"qwen3.attention.head_count_kv", "multiple"}},
    {"key_and_value_lengths_differ",
     "qwen3",
     [](auto& md, auto&) {
       set_key(md, "qwen3.attention.key_length", u32(8));
       set_key(md, "qwen3.attention.value_length", u32(16));
     },
     StatusCode::kUnsupported,
     {"qwen3.attention.key_length", "qwen3.attention.value_length"}},
    {"odd_rope_dimensions",
     "llama",
     [](auto& md, auto&) { set_key(md, "llama.rope.dimension_count", u32(7)); },
     StatusCode::kInvalidFormat,
     {"llama.rope.dimension_count", "even"}},
    {"unknown_rope_scaling",
     "qwen2",
     [](auto& md, auto&) { set_key(md, "qwen2.rope.scaling.type", str("ntk-wild")); },
     StatusCode::kUnsupported,
     {"qwen2.rope.scaling.type", "'ntk-wild'", "yarn"}},
    {"llama3_frequency_band_reversed",
     "llama",
     [](auto& md, auto&) {
       set_key(md, "llama.rope.scaling.type", str("llama3"));
       set_key(md, "llama.rope.scaling.low_freq_factor", gguf::Value{4.0f});
       set_key(md, "llama.rope.scaling.high_freq_factor", gguf::Value{1.0f});
     },
     StatusCode::kInvalidFormat,
     {"llama.rope.scaling.high_freq_factor"}},
    {"qwen3_without_q_norm",
     "qwen3",
     [](auto&, auto& t) {
       drop_tensor(t, "blk.0.attn_q_norm.weight");
       drop_tensor(t, "blk.1.attn_q_norm.weight");
     },
     StatusCode::kInvalidFormat,
     {"attn_q_norm", "qwen3 models have"}},
    {"qwen3_k_norm_missing_in_one_layer",
     "qwen3",
     [](auto&, auto& t) { drop_tensor(t, "blk.1.attn_k_norm.weight"); },
     StatusCode::kInvalidFormat,
     {"blk.1.attn_k_norm.weight", "missing"}},
    {"qwen2_without_biases",
     "qwen2",
     [](auto&, auto& t) {
       for (const char* n : {"blk.0.attn_q.bias", "blk.1.attn_q.bias"})
         drop_tensor(t, n);
     },
     StatusCode::kInvalidFormat,
     {"attn_q.bias", "qwen2 models have"}},
    {"llama_bias_in_one_layer_only",
     "llama",
     [](auto&, auto& t) { add_copy(t, "blk.1.attn_q.bias", "blk.1.attn_norm.weight"); },
     StatusCode::kInvalidFormat,
     {"attn_q.bias", "layer 1", "layer 0"}},
    {"dense_family_with_experts",
     "qwen2",
     [](auto& md, auto&) {
       set_key(md, "qwen2.expert_count", u32(4));
       set_key(md, "qwen2.expert_used_count", u32(2));
     },
     StatusCode::kUnsupported,
     {"qwen2.expert_count", "dense"}},
    {"moe_family_without_expert_count",
     "qwen3moe",
     [](auto& md, auto&) { drop_key(md, "qwen3moe.expert_count"); },
     StatusCode::kInvalidFormat,
     {"qwen3moe.expert_count"}},
    {"more_experts_used_than_exist",
     "qwen3moe",
     [](auto& md, auto&) { set_key(md, "qwen3moe.expert_used_count", u32(9)); },
     StatusCode::kInvalidFormat,
     {"qwen3moe.expert_used_count", "between 1 and"}},
    {"expert_width_disagrees_with_tensors",
     "qwen3moe",
     [](auto& md, auto&) { set_key(md, "qwen3moe.expert_feed_forward_length", u32(32)); },
     StatusCode::kInvalidFormat,
     {"ffn_gate_exps", "shape"}},
    {"qwen2moe_without_shared_expert",
     "qwen2moe",
     [](auto&, auto& t) {
       for (int il = 0; il < 2; ++il)
         for (const char* n : {"ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp",
                               "ffn_gate_inp_shexp"})
           drop_tensor(t, "blk." + std::to_string(il) + "." + n + ".weight");
     },
     StatusCode::kInvalidFormat,
     {"ffn_gate_shexp", "shared expert"}},
    {"tensor_the_family_does_not_have",
     "qwen3",
     [](auto&, auto& t) { add_copy(t, "blk.0.ffn_gate_inp.weight", "blk.0.ffn_gate.weight"); },
     StatusCode::kUnsupported,
     {"blk.0.ffn_gate_inp.weight", "qwen3 architecture"}},
    {"bert_without_its_position_table",
     "bert",
     [](auto&, auto& t) { drop_tensor(t, "position_embd.weight"); },
     StatusCode::kInvalidFormat,
     {"position_embd.weight"}},
    {"nomic_bert_without_its_fused_qkv",
     "nomic-bert",
     [](auto&, auto& t) {
       drop_tensor(t, "blk.0.attn_qkv.weight");
       drop_tensor(t, "blk.1.attn_qkv.weight");
     },
     StatusCode::kInvalidFormat,
     {"blk.0.attn_qkv.weight", "nomic-bert"}},
    {"bert_whose_position_table_is_short",
     "bert",
     [](auto& md, auto&) { set_key(md, "bert.context_length", u32(4096)); },
     StatusCode::kInvalidFormat,
     {"position_embd.weight"}},
    {"rank_pooling_without_a_head",
     "qwen3",
     [](auto& md, auto&) { set_key(md, "qwen3.pooling_type", u32(4)); },
     StatusCode::kInvalidFormat,
     {"pooling_type is rank", "cls.output.weight"}},
    {"classifier_that_is_not_a_matrix",
     "qwen3",
     [](auto&, auto& t) { add_copy(t, "cls.output.weight", "output_norm.weight"); },
     StatusCode::kInvalidFormat,
     {"cls.output.weight", "[n_embd, labels]"}},
    {"unknown_pooling",
     "llama",
     [](auto& md, auto&) { set_key(md, "llama.pooling_type", u32(7)); },
     StatusCode::kInvalidFormat,
     {"pooling_type 7"}},
    {"mistral3_negative_temperature",
     "mistral3",
     [](auto& md, auto&) {
       set_key(md, "mistral3.attention.temperature_scale", gguf::Value{-0.1f});
     },
     StatusCode::kInvalidFormat,
     {"mistral3.attention.temperature_scale", "negative"}},
    {"llama4_chunks_of_no_positions",
     "llama4",
     [](auto& md, auto&) { set_key(md, "llama4.attention.chunk_size", u32(0)); },
     StatusCode::kInvalidFormat,
     {"llama4.attention.chunk_size", "positive"}},
    {"llama4_without_its_shared_expert",
     "llama4",
     [](auto&, auto& t) { drop_tensor(t, "blk.0.ffn_gate_shexp.weight"); },
     StatusCode::kInvalidFormat,
     {"ffn_gate_shexp"}},
    {"qwen3next_without_its_state_size",
     "qwen3next",
     [](auto& md, auto&) { drop_key(md, "qwen3next.ssm.state_size"); },
     StatusCode::kInvalidFormat,
     {"qwen3next.ssm.state_size", "required"}},
    {"qwen3next_v_heads_not_a_multiple_of_k_heads",
     "qwen3next",
     [](auto& md, auto&) { set_key(md, "qwen3next.ssm.group_count", u32(3)); },
     StatusCode::kInvalidFormat,
     {"qwen3next.ssm.time_step_rank", "multiple"}},
    {"qwen3next_conv_of_the_wrong_width",
     "qwen3next",
     [](auto&, auto& t) {
       for (RewrittenTensor& r : t)
         if (r.info.name == "blk.1.ssm_conv1d.weight")
           r.info.dims[1] -= 4;
     },
     StatusCode::kInvalidFormat,
     {"blk.1.ssm_conv1d.weight"}},
    {"qwen35_mrope_sections_leaving_pairs_unrotated",
     "qwen35",
     [](auto& md, auto&) {
       gguf::Array sections{gguf::ValueType::kInt32, {}};
       for (int32_t v : {1, 1, 1, 0}) // of 4 pairs
         sections.items.push_back({v});
       set_key(md, "qwen35.rope.dimension_sections", gguf::Value{sections});
     },
     StatusCode::kInvalidFormat,
     {"qwen35.rope.dimension_sections", "sums to 3"}},
    {"qwen35_with_qwen3next_ssm_ba",
     "qwen35",
     [](auto&, auto& t) { add_copy(t, "blk.0.ssm_ba.weight", "blk.0.ssm_beta.weight"); },
     StatusCode::kUnsupported,
     {"blk.0.ssm_ba.weight"}},
    {"qwen3next_attention_layer_without_its_q_norm",
     "qwen3next",
     [](auto&, auto& t) { drop_tensor(t, "blk.3.attn_q_norm.weight"); },
     StatusCode::kInvalidFormat,
     {"attn_q_norm"}},
    {"granite_without_logit_scale",
     "granite",
     [](auto& md, auto&) { drop_key(md, "granite.logit_scale"); },
     StatusCode::kInvalidFormat,
     {"granite.logit_scale", "required"}},
    {"granite_residual_scale_zero",
     "granite",
     [](auto& md, auto&) { set_key(md, "granite.residual_scale", gguf::Value{0.0f}); },
     StatusCode::kInvalidFormat,
     {"granite.residual_scale", "positive"}},
    {"phi3_fused_qkv_of_the_wrong_width",
     "phi3",
     [](auto&, auto& t) {
       for (RewrittenTensor& r : t)
         if (r.info.name.find("attn_qkv") != std::string::npos)
           r.info.dims[1] -= 8;
     },
     StatusCode::kInvalidFormat,
     {"blk.0.attn_qkv.weight", "shape"}},
    {"longrope_with_one_factor_tensor",
     "phi3",
     [](auto&, auto& t) { add_copy(t, "rope_factors_long.weight", "blk.0.attn_norm.weight"); },
     StatusCode::kInvalidFormat,
     {"rope_factors_short.weight", "LongRoPE needs both"}},
    {"longrope_factors_in_a_llama",
     "llama",
     [](auto&, auto& t) {
       add_copy(t, "rope_factors_long.weight", "blk.0.attn_norm.weight");
       add_copy(t, "rope_factors_short.weight", "blk.0.attn_norm.weight");
     },
     StatusCode::kUnsupported,
     {"LongRoPE", "llama models do not use"}},
    {"gemma3_without_post_norms",
     "gemma3",
     [](auto&, auto& t) {
       drop_tensor(t, "blk.0.post_ffw_norm.weight");
       drop_tensor(t, "blk.1.post_ffw_norm.weight");
     },
     StatusCode::kInvalidFormat,
     {"blk.0.post_ffw_norm.weight", "missing"}},
    {"gemma2_post_norm_in_one_layer_only",
     "gemma2",
     [](auto&, auto& t) { drop_tensor(t, "blk.1.post_attention_norm.weight"); },
     StatusCode::kInvalidFormat,
     {"post_attention_norm.weight", "layer 1"}},
    {"sliding_window_on_a_family_without",
     "qwen3",
     [](auto& md, auto&) { set_key(md, "qwen3.attention.sliding_window", u32(128)); },
     StatusCode::kUnsupported,
     {"qwen3.attention.sliding_window", "full attention"}},
    {"gpt_oss_without_sinks",
     "gpt-oss",
     [](auto&, auto& t) {
       drop_tensor(t, "blk.0.attn_sinks.weight");
       drop_tensor(t, "blk.1.attn_sinks.weight");
     },
     StatusCode::kInvalidFormat,
     {"blk.0.attn_sinks.weight", "missing", "attention sinks"}},
    {"gpt_oss_without_expert_biases",
     "gpt-oss",
     [](auto&, auto& t) {
       drop_tensor(t, "blk.0.ffn_up_exps.bias");
       drop_tensor(t, "blk.1.ffn_up_exps.bias");
     },
     StatusCode::kInvalidFormat,
     {"blk.0.ffn_up_exps.bias"}},
    {"gpt_oss_router_bias_in_one_layer_only",
     "gpt-oss",
     [](auto&, auto& t) { drop_tensor(t, "blk.1.ffn_gate_inp.bias"); },
     StatusCode::kInvalidFormat,
     {"ffn_gate_inp.bias", "layer 1"}},
    {"gemma2_negative_softcap",
     "gemma2",
     [](auto& md, auto&) { set_key(md, "gemma2.attn_logit_softcapping", gguf::Value{-1.0f}); },
     StatusCode::kInvalidFormat,
     {"gemma2.attn_logit_softcapping", "not negative"}},
    {"gemma3_window_pattern_zero",
     "gemma3",
     [](auto& md, auto&) {
       set_key(md, "gemma3.attention.sliding_window", u32(64));
       set_key(md, "gemma3.attention.sliding_window_pattern", u32(0));
     },
     StatusCode::kInvalidFormat,
     {"gemma3.attention.sliding_window_pattern", "positive"}},
    {"gemma3_window_flags_not_one_per_layer",
     "gemma3",
     [](auto& md, auto&) {
       set_key(md, "gemma3.attention.sliding_window", u32(64));
       gguf::Array a{gguf::ValueType::kBool, {{true}, {false}, {true}}};
       set_key(md, "gemma3.attention.sliding_window_pattern", gguf::Value{a});
     },
     StatusCode::kInvalidFormat,
     {"gemma3.attention.sliding_window_pattern", "3 entries for 2 layers"}},
    {"gemma_embedding_said_to_be_causal",
     "gemma-embedding",
     [](auto& md, auto&) { set_key(md, "gemma-embedding.attention.causal", gguf::Value{true}); },
     StatusCode::kUnsupported,
     {"gemma-embedding.attention.causal", "both ways"}},
    {"modern_bert_with_an_attention_norm_in_layer_0",
     "modern-bert",
     [](auto&, auto& t) { add_copy(t, "blk.0.attn_norm.weight", "blk.1.attn_norm.weight"); },
     StatusCode::kUnsupported,
     {"blk.0.attn_norm.weight", "modern-bert architecture"}},
    {"modern_bert_without_its_embedding_norm",
     "modern-bert",
     [](auto&, auto& t) { drop_tensor(t, "token_embd_norm.weight"); },
     StatusCode::kInvalidFormat,
     {"token_embd_norm.weight"}},
    {"dense_3_without_dense_2",
     "gemma-embedding",
     [](auto&, auto& t) { add_copy(t, "dense_3.weight", "blk.0.attn_output.weight"); },
     StatusCode::kInvalidFormat,
     {"dense_3.weight", "dense_2.weight"}},
    {"dense_2_whose_width_does_not_come_back",
     "gemma-embedding",
     [](auto&, auto& t) { add_copy(t, "dense_2.weight", "blk.0.ffn_up.weight"); },
     StatusCode::kInvalidFormat,
     {"dense_2.weight", "64", "no dense_3.weight"}},
    {"dense_3_of_the_wrong_shape",
     "gemma-embedding",
     [](auto&, auto& t) {
       add_copy(t, "dense_2.weight", "blk.0.ffn_up.weight");
       add_copy(t, "dense_3.weight", "blk.0.ffn_up.weight");
     },
     StatusCode::kInvalidFormat,
     {"dense_3.weight", "shape"}},
    {"glm4moe_dense_layers_past_the_last",
     "glm4moe",
     [](auto& md, auto&) { set_key(md, "glm4moe.leading_dense_block_count", u32(3)); },
     StatusCode::kInvalidFormat,
     {"glm4moe.leading_dense_block_count 3", "none of the 3 layers"}},
    {"ernie_moe_interleave_step_zero",
     "ernie4_5-moe",
     [](auto& md, auto&) { set_key(md, "ernie4_5-moe.interleave_moe_layer_step", u32(0)); },
     StatusCode::kInvalidFormat,
     {"ernie4_5-moe.interleave_moe_layer_step", "at least 1"}},
    // With a step of 2 the last layer's experts would belong to a dense layer.
    {"ernie_moe_experts_in_a_layer_the_step_makes_dense",
     "ernie4_5-moe",
     [](auto& md, auto&) { set_key(md, "ernie4_5-moe.interleave_moe_layer_step", u32(2)); },
     StatusCode::kInvalidFormat,
     {"blk.0.ffn_gate.weight"}},
    // Three groups cannot split four experts.
    {"expert_groups_that_do_not_split_the_experts",
     "qwen3moe",
     [](auto& md, auto&) {
       set_key(md, "qwen3moe.expert_group_count", u32(3));
       set_key(md, "qwen3moe.expert_group_used_count", u32(1));
     },
     StatusCode::kInvalidFormat,
     {"qwen3moe.expert_group_count 3", "split the 4 experts"}},
    {"glm4moe_nextn_layers_as_many_as_the_blocks",
     "glm4moe",
     [](auto& md, auto&) { set_key(md, "glm4moe.nextn_predict_layers", u32(4)); },
     StatusCode::kInvalidFormat,
     {"glm4moe.nextn_predict_layers 4", "glm4moe.block_count 4"}},
    // Without the key the NextN block is a fourth layer whose extra tensors no layout has.
    {"glm4moe_nextn_block_without_its_key",
     "glm4moe",
     [](auto& md, auto&) { drop_key(md, "glm4moe.nextn_predict_layers"); },
     StatusCode::kUnsupported,
     {"blk.3.nextn.eh_proj.weight", "glm4moe architecture"}},
    {"glm4moe_gating_pshard_does_not_run",
     "glm4moe",
     [](auto& md, auto&) { set_key(md, "glm4moe.expert_gating_func", u32(3)); },
     StatusCode::kUnsupported,
     {"glm4moe.expert_gating_func 3", "1: softmax, 2: sigmoid"}},
    {"glm4moe_without_its_selection_bias",
     "glm4moe",
     [](auto&, auto& t) {
       drop_tensor(t, "blk.1.exp_probs_b.bias");
       drop_tensor(t, "blk.2.exp_probs_b.bias");
     },
     StatusCode::kInvalidFormat,
     {"blk.1.exp_probs_b.bias", "expert selection bias"}},
    {"glm4moe_selection_bias_in_one_moe_layer_only",
     "glm4moe",
     [](auto&, auto& t) { drop_tensor(t, "blk.2.exp_probs_b.bias"); },
     StatusCode::kInvalidFormat,
     {"exp_probs_b.bias", "layer 1 but not in layer 2", "every MoE layer"}},
    {"phimoe_without_its_logit_bias",
     "phimoe",
     [](auto&, auto& t) { drop_tensor(t, "output.bias"); },
     StatusCode::kInvalidFormat,
     {"'output.bias' is missing", "phimoe"}},
    {"phimoe_without_its_norm_biases",
     "phimoe",
     [](auto&, auto& t) {
       for (const char* n : {"blk.0.attn_norm.bias", "blk.1.attn_norm.bias"})
         drop_tensor(t, n);
     },
     StatusCode::kInvalidFormat,
     {"blk.0.attn_norm.bias", "norm biases"}},
    {"phimoe_with_one_ffn_norm_bias_missing",
     "phimoe",
     [](auto&, auto& t) { drop_tensor(t, "blk.1.ffn_norm.bias"); },
     StatusCode::kInvalidFormat,
     {"blk.1.ffn_norm.bias"}},
    {"deepseek2_without_its_latent_rank",
     "deepseek2",
     [](auto& kv, auto&) { drop_key(kv, "deepseek2.attention.kv_lora_rank"); },
     StatusCode::kInvalidFormat,
     {"deepseek2.attention.kv_lora_rank"}},
    {"deepseek2_with_the_split_form_keys_but_an_attn_kv_b",
     "deepseek2",
     [](auto&, auto& t) {
       for (const char* layer : {"blk.0.", "blk.1."}) {
         add_copy(t, std::string(layer) + "attn_kv_b.weight",
                  std::string(layer) + "attn_k_b.weight");
         drop_tensor(t, std::string(layer) + "attn_k_b.weight");
         drop_tensor(t, std::string(layer) + "attn_v_b.weight");
       }
     },
     StatusCode::kInvalidFormat,
     {"blk.0.attn_k_b.weight", "missing"}},
    {"deepseek2_with_attn_k_b_but_the_older_keys",
     "deepseek2",
     [](auto& kv, auto&) {
       drop_key(kv, "deepseek2.attention.key_length_mla");
       drop_key(kv, "deepseek2.attention.value_length_mla");
     },
     StatusCode::kInvalidFormat,
     {"attn_k_b", "deepseek2.attention.key_length_mla"}},
    {"deepseek2_whose_cache_widths_are_not_the_latent",
     "deepseek2",
     [](auto& kv, auto&) { set_key(kv, "deepseek2.attention.key_length", u32(12)); },
     StatusCode::kInvalidFormat,
     {"attention.key_length 12", "the latent's 20"}},
    {"deepseek2_rotating_the_whole_head",
     "deepseek2",
     [](auto& kv, auto&) { set_key(kv, "deepseek2.rope.dimension_count", u32(12)); },
     StatusCode::kInvalidFormat,
     {"rope.dimension_count 12", "unrotated part"}},
    {"deepseek2_with_a_mis_shaped_value_expansion",
     "deepseek2",
     [](auto& kv, auto&) { set_key(kv, "deepseek2.attention.value_length_mla", u32(6)); },
     StatusCode::kInvalidFormat,
     {"attn_v_b", "shape"}},
};

class ArchMetadata : public ::testing::TestWithParam<BadCase> {};

TEST_P(ArchMetadata, IsRefusedWithAMessageNamingTheProblem) {
  const BadCase& c = GetParam();
  const auto dir = std::filesystem::temp_directory_path() /
                   ("pshard-arch-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string good = (dir / (std::string(c.name) + "-good.gguf")).string();
  const std::string bad = (dir / (std::string(c.name) + "-bad.gguf")).string();
  ASSERT_TRUE(write_model(spec_for(c.arch), good).ok());
  ASSERT_TRUE(Model::load(good).ok()) << "the unedited " << c.arch << " model must load";
  testing::rewrite_gguf(good, bad, c.edit);
  auto model = Model::load(bad);
  ASSERT_FALSE(model.ok()) << "the edited model loaded";
  EXPECT_EQ(model.status().code(), c.code) << model.status().to_string();
  for (const char* s : c.says)
    EXPECT_NE(model.status().message().find(s), std::string::npos)
        << "message lacks '" << s << "': " << model.status().message();
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

INSTANTIATE_TEST_SUITE_P(Cases, ArchMetadata, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace pshard
