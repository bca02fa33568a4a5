// The C API's chat templates: a conversation rendered with a named template or the
// model's own (detected from its tokenizer.chat_template), sized the llama.h way (a call
// with no buffer returns the length), and errors that list the known names.
#include "pshard/pshard.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <vector>

namespace {

const std::string kModel = std::string(PSHARD_SHARED_DIR) + "/models/stories260K.gguf";

const pshard_chat_message kChat[] = {{"system", "Be brief."}, {"user", "Hi"}};
const std::string kChatml = "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi"
                            "<|im_end|>\n<|im_start|>assistant\n";

std::string apply(const pshard_model* m, const char* name, bool add_assistant = true) {
  size_t len = 0;
  EXPECT_EQ(pshard_chat_apply_template(m, name, kChat, 2, add_assistant, nullptr, 0, &len),
            PSHARD_OK)
      << pshard_last_error();
  std::string text(len, '\0');
  EXPECT_EQ(pshard_chat_apply_template(m, name, kChat, 2, add_assistant, text.data(), len, &len),
            PSHARD_OK);
  EXPECT_EQ(len, text.size());
  return text;
}

// stories260K re-written with a ChatML template in its metadata.
std::string model_with_template() {
  const std::string path = ::testing::TempDir() + "/capi_chat_stories.gguf";
  auto src = pshard::gguf::GgufFile::open(kModel);
  EXPECT_TRUE(src.ok());
  auto w = pshard::gguf::GgufWriter::copy_of(**src);
  EXPECT_TRUE(w.ok());
  w->set("tokenizer.chat_template",
         pshard::gguf::Value{std::string("{% for message in messages %}{{'<|im_start|>' + "
                                         "message['role'] + '\\n' + message['content'] + "
                                         "'<|im_end|>' + '\\n'}}{% endfor %}")});
  EXPECT_TRUE(w->write(path).ok());
  return path;
}

TEST(CApiChat, RendersANamedTemplateWithoutAModel) {
  EXPECT_EQ(apply(nullptr, "chatml"), kChatml);
  EXPECT_EQ(apply(nullptr, "chatml", false), kChatml.substr(0, kChatml.size() - 22));
  // A buffer too small gets what fits and the full length.
  char small[8];
  size_t len = 0;
  ASSERT_EQ(
      pshard_chat_apply_template(nullptr, "chatml", kChat, 2, true, small, sizeof small, &len),
      PSHARD_OK);
  EXPECT_EQ(len, kChatml.size());
  EXPECT_EQ(std::string(small, sizeof small), kChatml.substr(0, sizeof small));
}

TEST(CApiChat, ListsTheBuiltinTemplates) {
  size_t n = 0;
  ASSERT_EQ(pshard_chat_builtin_templates(nullptr, 0, &n), PSHARD_OK);
  std::vector<const char*> names(n);
  ASSERT_EQ(pshard_chat_builtin_templates(names.data(), n, &n), PSHARD_OK);
  std::vector<std::string> got(names.begin(), names.end());
  for (const char* want : {"chatml", "llama3", "mistral-v7-tekken", "gemma", "phi3"})
    EXPECT_NE(std::find(got.begin(), got.end(), want), got.end()) << want;
  for (const std::string& name : got) // each one renders
    EXPECT_FALSE(apply(nullptr, name.c_str()).empty()) << name;
}

TEST(CApiChat, UsesTheModelsOwnTemplate) {
  if (!std::filesystem::exists(kModel))
    GTEST_SKIP() << "shared model " << kModel << " is not present";
  pshard_model* plain = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &plain), PSHARD_OK);
  const char* name = nullptr;
  EXPECT_EQ(pshard_model_chat_template(plain, &name), PSHARD_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(pshard_last_error()).find("--chat-template NAME"), std::string::npos)
      << pshard_last_error();
  size_t len = 0;
  EXPECT_EQ(pshard_chat_apply_template(plain, nullptr, kChat, 2, true, nullptr, 0, &len),
            PSHARD_ERROR_NOT_FOUND);
  EXPECT_EQ(apply(plain, "chatml"), kChatml) << "a name works for any model";
  pshard_model_free(plain);

  const std::string path = model_with_template();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(path.c_str(), nullptr, &m), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(pshard_model_chat_template(m, &name), PSHARD_OK) << pshard_last_error();
  EXPECT_STREQ(name, "chatml");
  EXPECT_EQ(apply(m, nullptr), kChatml);
  pshard_model_free(m);
  std::filesystem::remove(path);
}

TEST(CApiChat, BadArgumentsAreErrors) {
  size_t len = 0;
  EXPECT_EQ(pshard_chat_apply_template(nullptr, "nope", kChat, 2, true, nullptr, 0, &len),
            PSHARD_ERROR_NOT_FOUND);
  EXPECT_NE(std::string(pshard_last_error()).find("chatml"), std::string::npos);
  EXPECT_EQ(pshard_chat_apply_template(nullptr, nullptr, kChat, 2, true, nullptr, 0, &len),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pshard_chat_apply_template(nullptr, "chatml", nullptr, 2, true, nullptr, 0, &len),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pshard_chat_apply_template(nullptr, "chatml", kChat, 2, true, nullptr, 0, nullptr),
            PSHARD_ERROR_INVALID_ARGUMENT);
  const pshard_chat_message bad[] = {{"user", nullptr}};
  EXPECT_EQ(pshard_chat_apply_template(nullptr, "chatml", bad, 1, true, nullptr, 0, &len),
            PSHARD_ERROR_INVALID_ARGUMENT);
  const pshard_chat_message tool[] = {{"tool", "4"}};
  EXPECT_EQ(pshard_chat_apply_template(nullptr, "llama2", tool, 1, true, nullptr, 0, &len),
            PSHARD_ERROR_INVALID_ARGUMENT);
}

} // namespace
