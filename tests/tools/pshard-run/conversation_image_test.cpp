// pshard-run's conversation with images (/image, --image with -cnv) on a generated Qwen2-VL
// language model and projector: an image goes before the text of the message after it, a
// later turn reuses the kept image sequence (the earlier turns not decoded, the image not
// encoded again), and each answer is what a fresh context gives for the whole
// conversation as the template writes it — text turns before the first image included.
#include "tests/runtime/vision/vision_test_util.h"
#include "tools/pshard-run/conversation.h"

#include <gtest/gtest.h>
#include <sstream>

namespace pshard {
namespace {

constexpr int kWidth = 60, kHeight = 44;

struct Files {
  std::string lm = testing::small_language_model("cnv_image_qwen2vl", "qwen2vl");
  std::string proj = testing::small_projector("cnv_image_mmproj", ProjectorType::kQwen25Vl, 2, 64);
};

const Files& files() {
  static const Files f;
  return f;
}

ImageHandle image(int seed) {
  std::vector<uint8_t> rgb;
  for (int y = 0; y < kHeight; ++y)
    for (int x = 0; x < kWidth; ++x)
      for (int c = 0; c < 3; ++c)
        rgb.push_back(static_cast<uint8_t>((x * 5 + y * 11 + c * 70 + seed * 37) % 256));
  pshard_image* img = nullptr;
  EXPECT_EQ(pshard_image_from_rgb(rgb.data(), kWidth, kHeight, kWidth * 3, &img), PSHARD_OK);
  return ImageHandle(img);
}

std::vector<pshard_token> collect(pshard_context* c, const std::string& text,
                                  const std::vector<const pshard_image*>& images,
                                  const pshard_generate_params& gp) {
  std::vector<pshard_token> out;
  auto on_token = [](const pshard_token_event* e, void* user) {
    if (e->token >= 0)
      static_cast<std::vector<pshard_token>*>(user)->push_back(e->token);
    return true;
  };
  EXPECT_EQ(pshard_context_generate_with_images(c, text.data(), text.size(), images.data(),
                                                images.size(), nullptr, &gp, on_token, &out,
                                                nullptr),
            PSHARD_OK)
      << pshard_last_error();
  return out;
}

class ConversationImage : public ::testing::Test {
protected:
  void SetUp() override {
    pshard_model_params mp = pshard_model_default_params();
    mp.mmproj_path = files().proj.c_str();
    pshard_model* m = nullptr;
    ASSERT_EQ(pshard_model_load(files().lm.c_str(), &mp, &m), PSHARD_OK) << pshard_last_error();
    model_.reset(m);
    ctx_ = context();
    gp_ = pshard_generate_default_params();
    // Sampled, not greedy: a random model's greedy choice hardly moves with its input,
    // a draw from the whole distribution (the same seed each time) does.
    gp_.temperature = 1;
    gp_.top_k = 0;
    gp_.top_p = 1;
    gp_.min_p = 0;
    gp_.seed = 11;
    gp_.n_predict = 6;
  }
  ContextHandle context() {
    pshard_context_params cp = pshard_context_default_params();
    cp.n_ctx = 512;
    cp.n_threads = 2;
    pshard_context* c = nullptr;
    EXPECT_EQ(pshard_context_create(model_.get(), &cp, &c), PSHARD_OK) << pshard_last_error();
    return ContextHandle(c);
  }
  std::string detokenize(const std::vector<pshard_token>& tokens) {
    std::string text(4096, '\0');
    size_t len = 0;
    EXPECT_EQ(pshard_model_detokenize(model_.get(), tokens.data(), tokens.size(), text.data(),
                                      text.size(), &len),
              PSHARD_OK);
    text.resize(std::min(len, text.size()));
    return text;
  }
  // A fresh context's answer to `msgs` rendered with chatml, its generation prompt added.
  std::vector<pshard_token> fresh(const std::vector<pshard_chat_message>& msgs,
                                  const std::vector<const pshard_image*>& images) {
    std::string text(8192, '\0');
    size_t len = 0;
    EXPECT_EQ(pshard_chat_apply_template(nullptr, "chatml", msgs.data(), msgs.size(), true,
                                         text.data(), text.size(), &len),
              PSHARD_OK);
    text.resize(len);
    ContextHandle c = context();
    return collect(c.get(), text, images, gp_);
  }

  ModelHandle model_;
  ContextHandle ctx_;
  pshard_generate_params gp_{};
};

TEST_F(ConversationImage, ALaterTurnKeepsTheImageAndAnswersAsAFreshContext) {
  Conversation chat(model_.get(), ctx_.get(), "chatml");
  chat.add("system", "You describe pictures.");
  ImageHandle a = image(1);
  const pshard_image* a_raw = a.get();
  ASSERT_TRUE(chat.attach(std::move(a)).ok());
  std::ostringstream out;
  auto first = chat.answer("What is in it?", gp_, out);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_EQ(chat.last_result().n_images, 1);
  EXPECT_EQ(chat.last_result().n_cached, 0);
  EXPECT_TRUE(chat.tokens().empty()) << "an image conversation runs in the image sequence";
  const int64_t first_prompt = chat.last_result().n_prompt;

  auto second = chat.answer("And the colours?", gp_, out);
  ASSERT_TRUE(second.ok()) << second.status().to_string();
  EXPECT_EQ(chat.last_result().n_images_reused, 1) << "the image is not encoded again";
  EXPECT_GE(chat.last_result().n_cached, first_prompt) << "the first turn is not decoded again";

  // The image's place is before the first message's text.
  const std::string first_text = detokenize(*first);
  const std::vector<pshard_chat_message> msgs = {{"system", "You describe pictures."},
                                                 {"user", "<__media__>What is in it?"},
                                                 {"assistant", first_text.c_str()},
                                                 {"user", "And the colours?"}};
  const std::vector<pshard_token> expected = fresh(msgs, {a_raw});
  EXPECT_EQ(*second, expected);
  // Another image in that place answers otherwise: the image is read, not ignored.
  ImageHandle b = image(2);
  EXPECT_NE(fresh(msgs, {b.get()}), expected);
}

TEST_F(ConversationImage, TextTurnsBeforeTheFirstImageAreReadWithIt) {
  Conversation chat(model_.get(), ctx_.get(), "chatml");
  std::ostringstream out;
  auto hello = chat.answer("Hello", gp_, out);
  ASSERT_TRUE(hello.ok()) << hello.status().to_string();
  EXPECT_FALSE(chat.tokens().empty());
  ImageHandle a = image(3), b = image(4);
  const std::vector<const pshard_image*> raw = {a.get(), b.get()};
  ASSERT_TRUE(chat.attach(std::move(a)).ok());
  ASSERT_TRUE(chat.attach(std::move(b)).ok());
  auto both = chat.answer("Which differ?", gp_, out);
  ASSERT_TRUE(both.ok()) << both.status().to_string();
  EXPECT_EQ(chat.last_result().n_images, 2);
  const std::string hello_text = detokenize(*hello);
  EXPECT_EQ(*both, fresh({{"user", "Hello"},
                          {"assistant", hello_text.c_str()},
                          {"user", "<__media__><__media__>Which differ?"}},
                         raw));
}

TEST_F(ConversationImage, ClearStartsOverWithTheSystemMessage) {
  Conversation chat(model_.get(), ctx_.get(), "chatml");
  chat.add("system", "Be brief.");
  std::ostringstream out;
  ASSERT_TRUE(chat.attach(image(5)).ok());
  auto once = chat.answer("What is it?", gp_, out);
  ASSERT_TRUE(once.ok());
  ASSERT_TRUE(chat.answer("Why?", gp_, out).ok());
  chat.clear();
  ASSERT_TRUE(chat.attach(image(5)).ok());
  auto again = chat.answer("What is it?", gp_, out);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *once);
  // After a clear with no image the conversation is text again, on the context's own
  // sequence.
  chat.clear();
  ASSERT_TRUE(chat.answer("What is it?", gp_, out).ok());
  EXPECT_FALSE(chat.tokens().empty());
}

TEST(ConversationImageErrors, AModelWithoutAProjectorTakesNoImage) {
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(files().lm.c_str(), nullptr, &m), PSHARD_OK);
  ModelHandle model(m);
  pshard_context_params cp = pshard_context_default_params();
  cp.n_ctx = 128;
  pshard_context* c = nullptr;
  ASSERT_EQ(pshard_context_create(m, &cp, &c), PSHARD_OK);
  ContextHandle ctx(c);
  Conversation chat(m, c, "chatml");
  const Status st = chat.attach(image(1));
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("--mmproj"), std::string::npos) << st.to_string();
}

} // namespace
} // namespace pshard
