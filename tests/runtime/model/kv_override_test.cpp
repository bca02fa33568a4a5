// llama.cpp's --override-kv at load (hparam_overrides.h): a MoE file given
// {arch}.expert_used_count=int:1 runs, bit for bit, as the same file converted with one
// expert per token, and unlike the file as it is; its fingerprint stays the file's. A
// spec that is no KEY=TYPE:VALUE, a key of another architecture and a key the model
// never reads are refused, each naming it. The tokenizer reads its overridden keys (BOS
// added or not, the end-of-sequence token) with the file's fingerprint unchanged.
#include "runtime/model/hparam_overrides.h"
#include "runtime/model/model.h"
#include "runtime/schedule/model_fingerprint.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/vocabulary.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <gtest/gtest.h>
#include <numeric>

namespace pshard {
namespace {

std::string write(const std::string& name, const ModelSpec& s) {
  const std::string path = ::testing::TempDir() + "/" + name + ".gguf";
  const Status st = write_model(s, path);
  EXPECT_TRUE(st.ok()) << st.to_string();
  return path;
}

ModelSpec moe(int64_t used) {
  ModelSpec s;
  s.arch = "qwen3moe";
  s.n_embd = 64;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_expert = 4;
  s.n_expert_used = used;
  return s;
}

// The last position's logits after a 24-token prompt.
std::vector<float> logits(const Model& m) {
  auto session = CpuSession::create(m, {64, 1, 32});
  EXPECT_TRUE(session.ok()) << session.status().to_string();
  std::vector<TokenId> ids(24);
  std::iota(ids.begin(), ids.end(), TokenId{5});
  auto out = (*session)->decode(ids);
  EXPECT_TRUE(out.ok()) << out.status().to_string();
  return out.ok() ? std::vector<float>(out->begin(), out->end()) : std::vector<float>{};
}

Result<std::unique_ptr<Model>> load_with(const std::string& path,
                                         std::initializer_list<const char*> specs) {
  HParamOverrides o;
  for (const char* spec : specs)
    PSHARD_RETURN_IF_ERROR(add_kv_override(o, spec));
  return Model::load(path, gguf::OpenMode::kMapData, o);
}

TEST(KvOverride, ExpertsPerTokenRunAsTheFilesKey) {
  const std::string two = write("okv_two", moe(2)), one = write("okv_one", moe(1));
  auto converted = Model::load(one);
  auto overridden = load_with(two, {"qwen3moe.expert_used_count=int:1"});
  auto as_is = Model::load(two);
  ASSERT_TRUE(converted.ok() && overridden.ok() && as_is.ok()) << overridden.status().to_string();
  EXPECT_EQ((*overridden)->hparams().n_expert_used, 1);
  const std::vector<float> want = logits(**converted);
  EXPECT_EQ(logits(**overridden), want) << "bit for bit";
  EXPECT_NE(logits(**as_is), want) << "two experts a token answer otherwise";
  EXPECT_EQ(model_fingerprint((*overridden)->file()), model_fingerprint((*as_is)->file()));
  // A float key and a bool one, of keys the family reads.
  auto more = load_with(
      two, {"qwen3moe.rope.freq_base=float:20000", "qwen3moe.expert_weights_norm=bool:false"});
  ASSERT_TRUE(more.ok()) << more.status().to_string();
  EXPECT_EQ((*more)->hparams().rope_freq_base, 20000.0f);
}

TEST(KvOverride, TheTokenizerReadsItsKeysInPlaceOfTheFiles) {
  const std::string stories = std::string(PSHARD_SHARED_DIR) + "/models/stories260K.gguf";
  auto as_is = Model::load(stories);
  auto overridden = load_with(stories, {"tokenizer.ggml.add_bos_token=bool:false",
                                        "tokenizer.ggml.eos_token_id=int:13",
                                        "tokenizer.ggml.unknown_token_id=int:-1"});
  ASSERT_TRUE(as_is.ok() && overridden.ok()) << overridden.status().to_string();
  auto plain = Tokenizer::from_gguf((*as_is)->file());
  auto changed = Tokenizer::from_gguf((*overridden)->file());
  ASSERT_TRUE(plain.ok() && changed.ok());
  EXPECT_TRUE((*plain)->add_bos_by_default());
  EXPECT_FALSE((*changed)->add_bos_by_default());
  EXPECT_NE((*plain)->eos(), 13);
  EXPECT_EQ((*changed)->eos(), 13);
  EXPECT_EQ((*changed)->vocabulary().unk_id, kNoToken);
  // In memory only: the file's metadata and fingerprint, so a schedule's match, stay.
  EXPECT_EQ(model_fingerprint((*overridden)->file()), model_fingerprint((*as_is)->file()));
  EXPECT_EQ((*overridden)->file().metadata().size(), (*as_is)->file().metadata().size());

  HParamOverrides o;
  for (const char* bad : {"tokenizer.ggml.tokens=str:x", "tokenizer.ggml.add_bos_token=int:0",
                          "tokenizer.ggml.eos_token_id=str:x", "tokenizer.chat_template=str:x"}) {
    const Status st = add_kv_override(o, bad);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find(bad), std::string::npos) << st.to_string();
  }
  EXPECT_TRUE(o.empty()) << "nothing half-added";
  auto past = load_with(stories, {"tokenizer.ggml.eos_token_id=int:99999"});
  ASSERT_TRUE(past.ok()); // the model itself does not read it
  auto refused = Tokenizer::from_gguf((*past)->file());
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("eos_token_id = 99999"), std::string::npos)
      << refused.status().to_string();
}

TEST(KvOverride, WhatCannotBeAppliedIsRefusedNamingIt) {
  HParamOverrides o;
  for (const char* bad : {"expert_used_count", "=int:1", "a.b=int", "a.b=int:x", "a.b=int:1x",
                          "a.b=float:nan", "a.b=bool:yes", "a.b=vec:1", "a.b=int:"}) {
    const Status st = add_kv_override(o, bad);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find(bad), std::string::npos) << st.to_string();
  }
  EXPECT_TRUE(o.by_key.empty()) << "nothing half-added";
  const std::string path = write("okv_refused", moe(2));
  auto other_arch = load_with(path, {"llama.expert_used_count=int:1"});
  ASSERT_FALSE(other_arch.ok());
  EXPECT_NE(other_arch.status().message().find("qwen3moe.*"), std::string::npos)
      << other_arch.status().to_string();
  auto unread = load_with(path, {"qwen3moe.no_such_key=int:1"});
  ASSERT_FALSE(unread.ok());
  EXPECT_NE(unread.status().message().find("never reads"), std::string::npos)
      << unread.status().to_string();
  auto wrong_type = load_with(path, {"qwen3moe.expert_used_count=str:one"});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("expert_used_count"), std::string::npos)
      << wrong_type.status().to_string();
}

} // namespace
} // namespace pshard
