// Models made by pshard-mkmodel run; malformed or unsupported ones are refused
// with messages that name the problem.
#include "gguf_rewrite.h"
#include "model_test_util.h"

#include "runtime/gguf/gguf_writer.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <cstring>
#include <functional>

namespace pshard {
namespace {

class ModelFilesTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("pshard-model-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string make(ModelSpec spec, const std::string& name) {
    const std::string path = (dir_ / name).string();
    Status s = write_model(spec, path);
    EXPECT_TRUE(s.ok()) << s.to_string();
    return path;
  }

  // Copies `src` to a new file, letting `edit` change metadata and drop tensors.
  using Edit = std::function<void(std::vector<gguf::KeyValue>&, std::vector<gguf::TensorInfo>&)>;
  std::string rewrite(const std::string& src, const std::string& name, const Edit& edit) {
    const std::string path = (dir_ / name).string();
    testing::rewrite_gguf(src, path, [&](auto& md, std::vector<testing::RewrittenTensor>& t) {
      std::vector<gguf::TensorInfo> infos;
      for (const auto& r : t)
        infos.push_back(r.info);
      edit(md, infos);
      t.clear();
      for (const auto& i : infos)
        t.push_back({i, i.name});
    });
    return path;
  }

  std::filesystem::path dir_;
};

ModelSpec small_spec() {
  ModelSpec s;
  s.n_embd = 64;
  s.n_layer = 3;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ff = 96;
  return s;
}

TEST_F(ModelFilesTest, GeneratedDenseAndMoeModelsRunDeterministically) {
  ModelSpec dense = small_spec();
  dense.type = TensorType::kQ8_0;
  ModelSpec moe = small_spec();
  moe.n_expert = 4;
  moe.n_expert_used = 2;
  moe.type = TensorType::kF16;
  for (const std::string& path : {make(dense, "dense.gguf"), make(moe, "moe.gguf")}) {
    GenerateResult a = testing::greedy(path, "hello world", 12, 1);
    GenerateResult b = testing::greedy(path, "hello world", 12, 2);
    EXPECT_FALSE(a.generated.empty());
    EXPECT_EQ(a.generated, b.generated);
  }
}

void set_string(std::vector<gguf::KeyValue>& md, const std::string& key, const std::string& v) {
  for (auto& kv : md)
    if (kv.key == key)
      kv.value = gguf::Value{v};
}

TEST_F(ModelFilesTest, RefusesOtherArchitectures) {
  const std::string path = rewrite(make(small_spec(), "m.gguf"), "gpt2.gguf", [](auto& md, auto&) {
    set_string(md, "general.architecture", "gpt2");
  });
  auto model = Model::load(path);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(model.status().message().find("'gpt2'"), std::string::npos);
}

TEST_F(ModelFilesTest, NamesAMissingTensor) {
  const std::string path = rewrite(make(small_spec(), "m.gguf"), "missing.gguf", [](auto&, auto& t) {
    std::erase_if(t, [](const gguf::TensorInfo& i) { return i.name == "blk.1.ffn_up.weight"; });
  });
  auto model = Model::load(path);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("blk.1.ffn_up.weight"), std::string::npos);
}

TEST_F(ModelFilesTest, NamesAShapeThatDisagreesWithMetadata) {
  const std::string path = rewrite(make(small_spec(), "m.gguf"), "shape.gguf", [](auto& md, auto&) {
    for (auto& kv : md)
      if (kv.key == "llama.feed_forward_length")
        kv.value = gguf::Value{uint32_t{128}};
  });
  auto model = Model::load(path);
  ASSERT_FALSE(model.ok());
  EXPECT_NE(model.status().message().find("blk.0.ffn_gate.weight"), std::string::npos);
  EXPECT_NE(model.status().message().find("shape"), std::string::npos);
}

TEST_F(ModelFilesTest, SessionRejectsBadTokensAndContextOverflowWithoutChangingState) {
  auto model = Model::load(make(small_spec(), "m.gguf"));
  ASSERT_TRUE(model.ok());
  auto session = CpuSession::create(**model, {8, 1, 4});
  ASSERT_TRUE(session.ok());
  std::vector<TokenId> bad = {1, 100000};
  auto r = (*session)->decode(bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*session)->n_past(), 0);
  std::vector<TokenId> six = {1, 5, 6, 7, 8, 9};
  ASSERT_TRUE((*session)->decode(six).ok());
  auto overflow = (*session)->decode(std::vector<TokenId>{3, 4, 5});
  ASSERT_FALSE(overflow.ok());
  EXPECT_NE(overflow.status().message().find("context"), std::string::npos);
  EXPECT_EQ((*session)->n_past(), 6);
  EXPECT_TRUE((*session)->decode(std::vector<TokenId>{3, 4}).ok());
}

} // namespace
} // namespace pshard
