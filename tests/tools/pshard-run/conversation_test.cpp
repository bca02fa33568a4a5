// pshard-run's conversation: the context carries the chat from turn to turn — only the new
// part of the rendered conversation is decoded, and an answer cut at n_predict has its
// last token fed with the next message — and that gives exactly what reading the same
// tokens into a fresh context gives.
#include "tools/pshard-run/conversation.h"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <sstream>

namespace pshard {
namespace {

const std::string kModel = std::string(PSHARD_SHARED_DIR) + "/models/stories260K.gguf";

class ConversationTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (!std::filesystem::exists(kModel))
      GTEST_SKIP() << "shared model " << kModel << " is not present";
    ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &model_), PSHARD_OK);
    ctx_ = context();
    gp_ = pshard_generate_default_params();
    gp_.temperature = 0;
    gp_.n_predict = 6;
  }
  void TearDown() override {
    pshard_context_free(ctx_);
    pshard_model_free(model_);
  }
  pshard_context* context() {
    pshard_context_params cp = pshard_context_default_params();
    cp.n_ctx = 512;
    cp.n_threads = 2;
    pshard_context* c = nullptr;
    EXPECT_EQ(pshard_context_create(model_, &cp, &c), PSHARD_OK) << pshard_last_error();
    return c;
  }
  // Greedy answer of a fresh context to `tokens`.
  std::vector<pshard_token> fresh_answer(const std::vector<pshard_token>& tokens) {
    pshard_context* c = context();
    std::vector<pshard_token> out;
    auto collect = [](const pshard_token_event* e, void* user) {
      if (e->token >= 0)
        static_cast<std::vector<pshard_token>*>(user)->push_back(e->token);
      return true;
    };
    EXPECT_EQ(
        pshard_context_generate(c, tokens.data(), tokens.size(), &gp_, collect, &out, nullptr),
        PSHARD_OK);
    pshard_context_free(c);
    return out;
  }

  std::string detokenize(const std::vector<pshard_token>& tokens) {
    std::string text(4096, '\0');
    size_t len = 0;
    EXPECT_EQ(pshard_model_detokenize(model_, tokens.data(), tokens.size(), text.data(),
                                      text.size(), &len),
              PSHARD_OK);
    text.resize(std::min(len, text.size()));
    return text;
  }
  static std::string spaceless(std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ' '), s.end());
    return s;
  }

  void later_turns_reuse_the_context(const char* tmpl, const char* opened);

  pshard_model* model_ = nullptr;
  pshard_context* ctx_ = nullptr;
  pshard_generate_params gp_{};
};

// `opened`: what the template's generation prompt opens and the answers it writes later
// leave out (chatml-thinking's "<think>\n"); the conversation keeps it in the answer.
void ConversationTest::later_turns_reuse_the_context(const char* tmpl, const char* opened) {
  Conversation chat(model_, ctx_, tmpl); // stories260K has no template of its own
  auto name = chat.check_template();
  ASSERT_TRUE(name.ok());
  EXPECT_EQ(*name, tmpl);
  chat.add("system", "You tell stories.");
  std::ostringstream out;
  auto first = chat.answer("Once upon a time", gp_, out);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  ASSERT_EQ(first->size(), 6u) << "the answer is cut at n_predict";
  const std::vector<pshard_token> after_first = chat.tokens();
  // The context holds all of it but the answer's last token, which was sampled only.
  EXPECT_EQ(pshard_context_n_past(ctx_), static_cast<int64_t>(after_first.size()) - 1);

  auto second = chat.answer("The dog ran", gp_, out);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  const std::vector<pshard_token>& all = chat.tokens();
  ASSERT_GT(all.size(), after_first.size() + second->size());
  EXPECT_TRUE(std::equal(after_first.begin(), after_first.end(), all.begin()))
      << "the second turn only appended";
  EXPECT_EQ(pshard_context_n_past(ctx_), static_cast<int64_t>(all.size()) - 1);
  // Reading the same tokens afresh gives the same answer as the context that was kept.
  const std::vector<pshard_token> prompt(all.begin(), all.end() - second->size());
  EXPECT_EQ(fresh_answer(prompt), *second);
  // And what was fed is the conversation as the template writes it, nothing twice or
  // left out (spaces aside: SentencePiece adds one where each piece of text starts).
  const std::string fed = spaceless(detokenize(all));
  const std::string first_text = opened + detokenize(*first);
  const pshard_chat_message msgs[] = {{"system", "You tell stories."},
                                      {"user", "Once upon a time"},
                                      {"assistant", first_text.c_str()},
                                      {"user", "The dog ran"}};
  std::string rendered(4096, '\0');
  size_t len = 0;
  ASSERT_EQ(pshard_chat_apply_template(nullptr, tmpl, msgs, 4, true, rendered.data(),
                                       rendered.size(), &len),
            PSHARD_OK);
  rendered.resize(len);
  EXPECT_EQ(fed, spaceless(rendered + detokenize(*second)));
  // Each answer ends its line.
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

TEST_F(ConversationTest, LaterTurnsReuseTheContext) { later_turns_reuse_the_context("chatml", ""); }

TEST_F(ConversationTest, LaterTurnsReuseTheContextWhenThePromptOpensTheThought) {
  later_turns_reuse_the_context("chatml-thinking", "<think>\n");
}

// Penalties look back over the whole conversation, not only the turn's new tokens: a later
// turn answers as a fresh context given every token, penalties and all.
TEST_F(ConversationTest, PenaltiesSeeEarlierTurns) {
  gp_.n_predict = 12;
  gp_.repeat_penalty = 1.5f;
  gp_.presence_penalty = 0.5f;
  gp_.repeat_last_n = 256;
  Conversation chat(model_, ctx_, "chatml");
  std::ostringstream out;
  ASSERT_TRUE(chat.answer("Once upon a time there was a dog", gp_, out).ok());
  auto second = chat.answer("The dog ran and ran", gp_, out);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  const std::vector<pshard_token>& all = chat.tokens();
  const std::vector<pshard_token> prompt(all.begin(), all.end() - second->size());
  EXPECT_EQ(fresh_answer(prompt), *second);
}

TEST_F(ConversationTest, AnUnknownTemplateFailsBeforeAnyInput) {
  Conversation chat(model_, ctx_, "chatml3");
  auto name = chat.check_template();
  ASSERT_FALSE(name.ok());
  EXPECT_NE(name.status().message().find("--chat-template"), std::string::npos);
  Conversation own(model_, ctx_, "");
  auto none = own.check_template();
  ASSERT_FALSE(none.ok()) << "stories260K carries no chat template";
  EXPECT_NE(none.status().message().find("has no chat template"), std::string::npos);
}

} // namespace
} // namespace pshard
