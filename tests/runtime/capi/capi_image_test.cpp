// Images through the C API on a generated Qwen2-VL language model and projector: a
// context's image prompt gives the tokens and log-probabilities of the runtime's own
// image-prompt path (what pshard-run --mmproj --image runs) bit for bit; PNG bytes and the
// same pixels given raw give the same answer; a batch serving the image prompt next to a
// text prompt gives it again (embedding rows and M-RoPE positions in a batched pass); and
// every bad input is a status with a message, never a crash.
#include "pshard/pshard.h"
#include "runtime/generate/generator.h"
#include "runtime/sampler/sampler.h"
#include "runtime/vision/image_prompt.h"
#include "runtime/vision/image_prompt_text.h"
#include "tests/runtime/executor/executor_test_util.h"
#include "tests/runtime/vision/vision_test_util.h"
#include "tests/runtime/vision/vlm_schedule_util.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <vector>

#if PSHARD_TEST_HAVE_STB
#include <stb_image_write.h>
#endif

namespace {

constexpr int kWidth = 90, kHeight = 60;
const std::string kPrompt = "<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>"
                            "What is in the picture?<|im_end|>\n<|im_start|>assistant\n";

// Pixels that depend on the seed, row-major RGB.
std::vector<uint8_t> pixels(int seed, int width = kWidth, int height = kHeight) {
  std::vector<uint8_t> rgb;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const int v = (x * 7 + y * 13 + seed * 29) % 256;
      rgb.insert(rgb.end(), {static_cast<uint8_t>(v), static_cast<uint8_t>((v * 3 + seed) % 256),
                             static_cast<uint8_t>(255 - v)});
    }
  return rgb;
}

std::vector<uint8_t> png(const std::vector<uint8_t>& rgb) {
  std::vector<uint8_t> out;
#if PSHARD_TEST_HAVE_STB
  stbi_write_png_to_func(
      [](void* ctx, void* data, int n) {
        auto* o = static_cast<std::vector<uint8_t>*>(ctx);
        o->insert(o->end(), static_cast<uint8_t*>(data), static_cast<uint8_t*>(data) + n);
      },
      &out, kWidth, kHeight, 3, rgb.data(), kWidth * 3);
#endif
  return out;
}

// The generated files, written once.
struct Files {
  std::string lm = pshard::testing::small_language_model("capi_image_qwen2vl", "qwen2vl");
  std::string llama = pshard::testing::small_language_model("capi_image_llama", "llama");
  std::string proj = pshard::testing::small_projector("capi_image_mmproj",
                                                      pshard::ProjectorType::kQwen25Vl, 2, 64);
  // Qwen3-VL: one DeepStack merger (the last block's), one DeepStack layer.
  std::string lm3 = pshard::testing::small_language_model("capi_image_qwen3vl", "qwen3vl", 1);
  std::string lm3_two = pshard::testing::small_language_model("capi_image_qwen3vl2", "qwen3vl", 2);
  std::string proj3 = pshard::testing::small_projector("capi_image_mmproj3",
                                                       pshard::ProjectorType::kQwen3Vl, 2, 64);
};

const Files& files() {
  static const Files f;
  return f;
}

struct Answer {
  std::vector<pshard_token> tokens;
  std::vector<std::vector<float>> top; // the top log-probabilities of each position
  bool operator==(const Answer&) const = default;
};

constexpr int kPredict = 6, kTop = 3;

pshard_generate_params greedy() {
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = kPredict;
  gp.temperature = 0;
  gp.ignore_eos = true;
  gp.top_logprobs = kTop;
  return gp;
}

bool collect(const pshard_token_event* e, void* user) {
  auto* a = static_cast<Answer*>(user);
  if (e->token < 0)
    return true;
  a->tokens.push_back(e->token);
  a->top.emplace_back(e->top_logprobs, e->top_logprobs + e->n_top);
  return true;
}

struct Loaded {
  explicit Loaded(const std::string& lm, const char* proj) {
    pshard_model_params mp = pshard_model_default_params();
    mp.mmproj_path = proj;
    status = pshard_model_load(lm.c_str(), &mp, &model);
    if (status == PSHARD_OK) {
      pshard_context_params cp = pshard_context_default_params();
      cp.n_threads = 2;
      cp.n_ctx = 256;
      EXPECT_EQ(pshard_context_create(model, &cp, &ctx), PSHARD_OK) << pshard_last_error();
    }
  }
  ~Loaded() {
    pshard_context_free(ctx);
    pshard_model_free(model);
  }
  pshard_status generate(const std::string& text, std::vector<const pshard_image*> images,
                         Answer* out, pshard_generate_result* result = nullptr) {
    const pshard_generate_params gp = greedy();
    return pshard_context_generate_with_images(ctx, text.data(), text.size(), images.data(),
                                               images.size(), nullptr, &gp, collect, out, result);
  }
  pshard_status status = PSHARD_OK;
  pshard_model* model = nullptr;
  pshard_context* ctx = nullptr;
};

pshard_image* raw_image(int seed, int width, int height) {
  pshard_image* img = nullptr;
  EXPECT_EQ(pshard_image_from_rgb(pixels(seed, width, height).data(), width, height,
                                  static_cast<size_t>(width) * 3, &img),
            PSHARD_OK)
      << pshard_last_error();
  return img;
}

pshard_image* from_bytes(const std::vector<uint8_t>& bytes) {
  pshard_image* img = nullptr;
  EXPECT_EQ(pshard_image_from_bytes(bytes.data(), bytes.size(), &img), PSHARD_OK)
      << pshard_last_error();
  return img;
}

#define SKIP_WITHOUT_STB()                                                                         \
  if (!PSHARD_TEST_HAVE_STB)                                                                       \
  GTEST_SKIP() << "built without stb_image (Debian libstb-dev): no images to decode"

// The runtime's image-prompt path, as pshard-run --mmproj --image runs it.
Answer internal_answer(const std::vector<uint8_t>& png_bytes) {
  using namespace pshard;
  Answer a;
  auto model = Model::load(files().lm, gguf::OpenMode::kMapData);
  auto tokenizer = Tokenizer::from_gguf((*model)->file());
  auto proj = Projector::open(files().proj);
  auto rgb = decode_image(png_bytes);
  SessionParams sp;
  sp.n_ctx = 256;
  sp.n_threads = 2;
  auto session = CpuSession::create(**model, sp);
  EXPECT_TRUE(session.ok() && rgb.ok() && proj.ok() && tokenizer.ok());
  ThreadPool pool(2);
  auto in = preprocess_image(*rgb, (*proj)->hparams());
  auto emb = encode_image(**proj, *in, pool);
  auto text = split_image_prompt(kPrompt, 1);
  const int64_t n_tokens[] = {emb->n_tokens()};
  const ImagePromptIds ids =
      tokenize_image_prompt(**tokenizer, *text, n_tokens, (*tokenizer)->add_bos_by_default(), true);
  ImagePromptDecoder decoder(**session, std::move(emb).value(), ids.image_pos[0]);
  SamplerParams s;
  s.temperature = 0;
  auto sampler = Sampler::create(s);
  GenerateParams gp;
  gp.n_predict = kPredict;
  gp.ignore_eos = true;
  gp.top_logprobs = kTop;
  auto r = generate(decoder, **tokenizer, *sampler, ids.ids, gp);
  EXPECT_TRUE(r.ok()) << r.status().to_string();
  a.tokens = r->generated;
  for (const auto& position : r->top_logprobs) {
    a.top.emplace_back();
    for (const TokenLogprob& t : position)
      a.top.back().push_back(t.logprob);
  }
  return a;
}

TEST(CApiImage, ContextAnswerIsTheRuntimesImagePromptBitForBit) {
  SKIP_WITHOUT_STB();
  const std::vector<uint8_t> bytes = png(pixels(1));
  Loaded l(files().lm, files().proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  EXPECT_TRUE(pshard_model_has_vision(l.model));
  pshard_image* img = from_bytes(bytes);
  EXPECT_EQ(pshard_image_width(img), kWidth);
  EXPECT_EQ(pshard_image_height(img), kHeight);
  Answer a;
  ASSERT_EQ(l.generate(kPrompt, {img}, &a), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(a.tokens.size(), static_cast<size_t>(kPredict));
  EXPECT_EQ(a, internal_answer(bytes));
  EXPECT_EQ(pshard_context_n_past(l.ctx), 0) << "the context's own sequence is untouched";

  // The image matters: another image changes the log-probabilities.
  pshard_image* other = from_bytes(png(pixels(2)));
  Answer b;
  ASSERT_EQ(l.generate(kPrompt, {other}, &b), PSHARD_OK) << pshard_last_error();
  EXPECT_NE(a.top, b.top);
  pshard_image_free(img);
  pshard_image_free(other);
}

// A context keeps the images it encoded: the next turn of a conversation, which sends the
// same pixels again (another handle, the same bytes), is not encoded again and gets the
// same answer; another image is encoded.
TEST(CApiImage, AContextDoesNotEncodeTheSameImageTwice) {
  Loaded l(files().lm, files().proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  const std::vector<uint8_t> rgb = pixels(6);
  pshard_image *img = nullptr, *again = nullptr, *other = nullptr;
  for (pshard_image** p : {&img, &again})
    ASSERT_EQ(pshard_image_from_rgb(rgb.data(), kWidth, kHeight, kWidth * 3, p), PSHARD_OK);
  ASSERT_EQ(pshard_image_from_rgb(pixels(7).data(), kWidth, kHeight, kWidth * 3, &other),
            PSHARD_OK);
  Answer a, b, c;
  pshard_generate_result ra = pshard_generate_result_init(), rb = ra, rc = ra;
  ASSERT_EQ(l.generate(kPrompt, {img}, &a, &ra), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(l.generate(kPrompt, {again}, &b, &rb), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(l.generate(kPrompt, {other, again}, &c, &rc), PSHARD_ERROR_INVALID_ARGUMENT);
  ASSERT_EQ(l.generate("<__media__>" + kPrompt, {other, again}, &c, &rc), PSHARD_OK)
      << pshard_last_error();
  EXPECT_EQ(b, a);
  EXPECT_EQ(ra.n_images, 1);
  EXPECT_EQ(ra.n_images_reused, 0);
  EXPECT_GT(ra.image_ms, 0.0);
  EXPECT_EQ(rb.n_images_reused, 1);
  EXPECT_EQ(rc.n_images, 2);
  EXPECT_EQ(rc.n_images_reused, 1); // `other` is new
  for (pshard_image* i : {img, again, other})
    pshard_image_free(i);
}

// A context keeps its last image prompt's sequence: the next turn of a conversation (the
// first turn's prompt and image, an answer, a question) decodes only what follows the
// first turn's prompt, and answers as a context that decodes everything — with a repeat
// penalty too, which must see the kept tokens. Another image in that place keeps only
// the text before it.
TEST(CApiImage, AContextKeepsItsImageSequenceForTheNextTurn) {
  Loaded l(files().lm, files().proj.c_str()), fresh(files().lm, files().proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  pshard_image* img = raw_image(9, kWidth, kHeight);
  pshard_image* other = raw_image(10, kWidth, kHeight);
  const std::string turn2 = kPrompt + "It is a pattern.<|im_end|>\n<|im_start|>user\nAnd its "
                                      "colours?<|im_end|>\n<|im_start|>assistant\n";
  pshard_generate_params gp = greedy();
  gp.repeat_penalty = 1.5f;
  gp.repeat_last_n = 256; // the first turn's tokens too
  gp.presence_penalty = 1.5f;
  auto run = [&](pshard_context* ctx, const std::string& text, const pshard_image* image,
                 Answer* a) {
    pshard_generate_result r = pshard_generate_result_init();
    EXPECT_EQ(pshard_context_generate_with_images(ctx, text.data(), text.size(), &image, 1, nullptr,
                                                  &gp, collect, a, &r),
              PSHARD_OK)
        << pshard_last_error();
    return r;
  };
  Answer a1, a2, a3, w2, w3;
  const pshard_generate_result r1 = run(l.ctx, kPrompt, img, &a1);
  const pshard_generate_result r2 = run(l.ctx, turn2, img, &a2);
  const pshard_generate_result r3 = run(l.ctx, turn2, other, &a3);
  // A context that decodes every prompt whole: each prompt once, on a context of its own.
  const pshard_generate_result f2 = run(fresh.ctx, turn2, img, &w2);
  pshard_context_reset(fresh.ctx);
  Loaded fresh3(files().lm, files().proj.c_str());
  const pshard_generate_result f3 = run(fresh3.ctx, turn2, other, &w3);
  EXPECT_EQ(r1.n_cached, 0);
  EXPECT_GE(r2.n_cached, r1.n_prompt); // the whole first prompt
  EXPECT_EQ(r2.n_prompt, f2.n_prompt);
  EXPECT_EQ(f2.n_cached, 0);
  EXPECT_EQ(a2, w2);
  EXPECT_GT(r3.n_cached, 0); // the text before the image
  EXPECT_LT(r3.n_cached, r2.n_cached);
  EXPECT_EQ(a3, w3);
  EXPECT_EQ(f3.n_cached, 0);
  EXPECT_EQ(pshard_context_n_past(l.ctx), 0) << "the context's own sequence is untouched";
  std::printf("image turns of %lld and %lld prompt tokens: %lld and %lld kept\n",
              static_cast<long long>(r1.n_prompt), static_cast<long long>(r2.n_prompt),
              static_cast<long long>(r2.n_cached), static_cast<long long>(r3.n_cached));

  // keep_image_sequence false: nothing kept.
  pshard_context_params cp = pshard_context_default_params();
  cp.n_threads = 2;
  cp.n_ctx = 256;
  cp.keep_image_sequence = false;
  pshard_context* forget = nullptr;
  ASSERT_EQ(pshard_context_create(l.model, &cp, &forget), PSHARD_OK) << pshard_last_error();
  Answer b1, b2;
  run(forget, kPrompt, img, &b1);
  EXPECT_EQ(run(forget, turn2, img, &b2).n_cached, 0);
  EXPECT_EQ(b2, w2);
  pshard_context_free(forget);
  pshard_image_free(img);
  pshard_image_free(other);
}

TEST(CApiImage, BytesAndRawPixelsGiveTheSameAnswer) {
  SKIP_WITHOUT_STB();
  const std::vector<uint8_t> rgb = pixels(3);
  Loaded l(files().lm, files().proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  // Rows padded to a stride of 5 more bytes, so the stride is honoured.
  const size_t stride = kWidth * 3 + 5;
  std::vector<uint8_t> padded(stride * kHeight, 0xAB);
  for (int y = 0; y < kHeight; ++y)
    std::memcpy(padded.data() + y * stride, rgb.data() + y * kWidth * 3, kWidth * 3);
  pshard_image* raw = nullptr;
  ASSERT_EQ(pshard_image_from_rgb(padded.data(), kWidth, kHeight, stride, &raw), PSHARD_OK)
      << pshard_last_error();
  pshard_image* decoded = from_bytes(png(rgb));
  Answer a, b;
  ASSERT_EQ(l.generate(kPrompt, {raw}, &a), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(l.generate("<__media__>What is in the picture?", {decoded}, &b), PSHARD_OK)
      << pshard_last_error();
  Answer c;
  ASSERT_EQ(l.generate(kPrompt, {decoded}, &c), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(a, c);
  EXPECT_EQ(a.tokens.size(), b.tokens.size());
  pshard_image_free(raw);
  pshard_image_free(decoded);
}

struct SeqAnswer {
  Answer answer;
  pshard_finish_reason finish = PSHARD_FINISH_NONE;
  std::string error;
  int64_t n_prompt = 0, n_cached = 0; // of the final event
};

bool on_seq(const pshard_seq_event* e, void* user) {
  auto* s = static_cast<SeqAnswer*>(user);
  if (e->token >= 0) {
    s->answer.tokens.push_back(e->token);
    s->answer.top.emplace_back(e->top_logprobs, e->top_logprobs + e->n_top);
  }
  if (e->finish != PSHARD_FINISH_NONE) {
    s->finish = e->finish;
    s->error = e->error_message;
    s->n_prompt = e->n_prompt;
    s->n_cached = e->n_cached;
  }
  return true;
}

// A batch over `model`, 256 positions a sequence on 2 threads (`bp`: the rest).
pshard_batch* new_batch(pshard_model* model, int32_t n_seq_max, int64_t n_batch,
                        pshard_batch_params bp = pshard_batch_default_params()) {
  bp.n_seq_max = n_seq_max;
  bp.n_ctx = 256;
  bp.n_threads = 2;
  bp.n_batch = n_batch;
  pshard_batch* batch = nullptr;
  EXPECT_EQ(pshard_batch_create(model, &bp, &batch), PSHARD_OK) << pshard_last_error();
  return batch;
}

// Adds a greedy request for a text prompt with its images, its events to `got`.
pshard_seq* add_prompt(pshard_batch* batch, const std::string& text,
                       std::vector<const pshard_image*> images, SeqAnswer* got) {
  const pshard_generate_params gp = greedy();
  pshard_seq_params sp = pshard_seq_default_params();
  sp.text = text.data();
  sp.text_len = text.size();
  sp.images = images.data();
  sp.n_images = images.size();
  sp.on_event = on_seq;
  sp.user_data = got;
  pshard_seq* seq = nullptr;
  EXPECT_EQ(pshard_batch_add(batch, &sp, &gp, &seq), PSHARD_OK) << pshard_last_error();
  return seq;
}

void run_batch(pshard_batch* batch) {
  while (pshard_batch_has_work(batch))
    ASSERT_EQ(pshard_batch_step(batch, nullptr), PSHARD_OK) << pshard_last_error();
}

// A batch of an image prompt and a text prompt gives each the context's answer alone
// (for Qwen3-VL, the image's DeepStack rows travel with the request).
void batch_serves_an_image_prompt_next_to_a_text_prompt(const std::string& lm,
                                                        const std::string& proj) {
  const std::vector<uint8_t> bytes = png(pixels(1));
  Loaded l(lm, proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  pshard_image* img = from_bytes(bytes);
  Answer alone;
  ASSERT_EQ(l.generate(kPrompt, {img}, &alone), PSHARD_OK) << pshard_last_error();
  const std::string text = "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n";
  Answer text_alone;
  ASSERT_EQ(l.generate(text, {}, &text_alone), PSHARD_OK) << pshard_last_error();

  // 16 tokens a pass: the image prompt's prefill runs in several chunks.
  pshard_batch* batch = new_batch(l.model, 3, 16);
  SeqAnswer with_image, plain;
  pshard_seq* b = add_prompt(batch, text, {}, &plain);
  pshard_seq* a = add_prompt(batch, kPrompt, {img}, &with_image);
  pshard_image_free(img); // the request holds its encoded image
  run_batch(batch);
  EXPECT_EQ(with_image.finish, PSHARD_FINISH_LENGTH) << with_image.error;
  EXPECT_EQ(with_image.answer, alone);
  EXPECT_EQ(plain.answer, text_alone);

  // Tokens and images do not mix.
  const pshard_generate_params gp = greedy();
  pshard_seq_params sp = pshard_seq_default_params();
  sp.text = kPrompt.data();
  sp.text_len = kPrompt.size();
  sp.images = &img;
  sp.n_images = 1;
  const pshard_token ids[] = {1, 2};
  sp.tokens = ids;
  sp.n_tokens = 2;
  pshard_seq* bad = nullptr;
  EXPECT_EQ(pshard_batch_add(batch, &sp, &gp, &bad), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("text"), std::string::npos);
  pshard_seq_free(a);
  pshard_seq_free(b);
  pshard_batch_free(batch);
}

TEST(CApiImage, BatchServesAnImagePromptNextToATextPromptWithTheContextsAnswer) {
  SKIP_WITHOUT_STB();
  batch_serves_an_image_prompt_next_to_a_text_prompt(files().lm, files().proj);
}

TEST(CApiImage, Qwen3VlBatchServesAnImagePromptWithTheContextsAnswer) {
  SKIP_WITHOUT_STB();
  batch_serves_an_image_prompt_next_to_a_text_prompt(files().lm3, files().proj3);
}

// Two images of different grids at a prompt's two places: a batch answers as the context
// does, bit for bit (each image's rows, DeepStack rows and M-RoPE positions travel with the
// request; its prefill passes cut through both images), and both images are read: swapping
// them, or changing the second, changes the log-probabilities.
void two_images_in_one_prompt(const std::string& lm, const std::string& proj) {
  Loaded l(lm, proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  pshard_image* wide = raw_image(1, kWidth, kHeight);
  pshard_image* tall = raw_image(2, 40, 100);
  pshard_image* tall2 = raw_image(3, 40, 100);
  const std::string text = "<|im_start|>user\n<__media__> and "
                           "<|vision_start|><|image_pad|><|vision_end|> differ how?<|im_end|>\n"
                           "<|im_start|>assistant\n";
  Answer both, swapped, other;
  ASSERT_EQ(l.generate(text, {wide, tall}, &both), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(l.generate(text, {tall, wide}, &swapped), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(l.generate(text, {wide, tall2}, &other), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(both.tokens.size(), static_cast<size_t>(kPredict));
  EXPECT_NE(both.top, swapped.top);
  EXPECT_NE(both.top, other.top);

  pshard_batch* batch = new_batch(l.model, 2, 7); // passes ending inside each image, between them
  SeqAnswer got;
  pshard_seq* seq = add_prompt(batch, text, {wide, tall}, &got);
  run_batch(batch);
  EXPECT_EQ(got.finish, PSHARD_FINISH_LENGTH) << got.error;
  EXPECT_EQ(got.answer, both);
  pshard_seq_free(seq);
  pshard_batch_free(batch);
  for (pshard_image* img : {wide, tall, tall2})
    pshard_image_free(img);
}

// One request after another in a batch, as a conversation's turns come: the second turn
// repeats the first's prompt and image, so the image is not encoded again and the first
// turn's KV pages — the image's rows among them, named by the image's pixels — are read
// from the prefix cache; the answer is the context's (which decodes everything) bit for
// bit. A third turn with another image in that place shares only the text before it.
void a_later_turn_reuses_the_image_and_its_pages(const std::string& lm, const std::string& proj) {
  Loaded l(lm, proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  pshard_image* img = raw_image(4, kWidth, kHeight);
  pshard_image* other = raw_image(5, kWidth, kHeight);
  const std::string turn2 = kPrompt + "It is a pattern.<|im_end|>\n<|im_start|>user\nAnd its "
                                      "colours?<|im_end|>\n<|im_start|>assistant\n";
  Answer want2, want3;
  ASSERT_EQ(l.generate(turn2, {img}, &want2), PSHARD_OK) << pshard_last_error();
  ASSERT_EQ(l.generate(turn2, {other}, &want3), PSHARD_OK) << pshard_last_error();

  pshard_batch* batch = new_batch(l.model, 2, 16);
  auto turn = [&](const std::string& text, pshard_image* image) {
    SeqAnswer got;
    pshard_seq* seq = add_prompt(batch, text, {image}, &got);
    run_batch(batch);
    pshard_seq_free(seq);
    return got;
  };
  const SeqAnswer first = turn(kPrompt, img);
  const SeqAnswer second = turn(turn2, img);
  const SeqAnswer third = turn(turn2, other);
  pshard_batch_stats st = pshard_batch_stats_init();
  ASSERT_EQ(pshard_batch_get_stats(batch, &st), PSHARD_OK);
  std::printf("turns of %lld, %lld, %lld prompt tokens: %lld, %lld, %lld read from the cache "
              "(pages of %lld)\n",
              static_cast<long long>(first.n_prompt), static_cast<long long>(second.n_prompt),
              static_cast<long long>(third.n_prompt), static_cast<long long>(first.n_cached),
              static_cast<long long>(second.n_cached), static_cast<long long>(third.n_cached),
              static_cast<long long>(st.kv_page_tokens));
  EXPECT_EQ(first.n_cached, 0);
  EXPECT_EQ(second.answer, want2);
  // Every whole page of the first turn's prompt (the image ends more than a page before it).
  EXPECT_GE(second.n_cached, first.n_prompt - st.kv_page_tokens) << first.n_prompt;
  EXPECT_EQ(third.answer, want3);
  EXPECT_GT(third.n_cached, 0); // the text before the image
  EXPECT_LT(third.n_cached, second.n_cached);
  EXPECT_EQ(st.images_encoded, 2);
  EXPECT_EQ(st.images_reused, 1);
  pshard_batch_free(batch);
  pshard_image_free(img);
  pshard_image_free(other);
}

TEST(CApiImage, ALaterTurnReusesTheImageAndItsKvPages) {
  a_later_turn_reuses_the_image_and_its_pages(files().lm, files().proj);
}

TEST(CApiImage, Qwen3VlALaterTurnReusesTheImageAndItsKvPages) {
  a_later_turn_reuses_the_image_and_its_pages(files().lm3, files().proj3);
}

TEST(CApiImage, TwoImagesInOnePromptAnswerAlikeInAContextAndABatch) {
  two_images_in_one_prompt(files().lm, files().proj);
}

TEST(CApiImage, Qwen3VlTwoImagesInOnePromptAnswerAlikeInAContextAndABatch) {
  two_images_in_one_prompt(files().lm3, files().proj3);
}

void expect_error(pshard_status got, pshard_status want, const std::string& says) {
  EXPECT_EQ(got, want) << pshard_last_error();
  EXPECT_NE(std::string(pshard_last_error()).find(says), std::string::npos)
      << "'" << pshard_last_error() << "' does not say '" << says << "'";
}

TEST(CApiImage, ImageTokenLimitsAreReadAndBadOnesRefusedAtLoad) {
  pshard_model_params mp = pshard_model_default_params();
  EXPECT_EQ(mp.image_max_tokens, 0);
  EXPECT_EQ(mp.image_min_tokens, 0);
  mp.mmproj_path = files().proj.c_str();
  mp.image_min_tokens = 40;
  mp.image_max_tokens = 20;
  pshard_model* model = nullptr;
  expect_error(pshard_model_load(files().lm.c_str(), &mp, &model), PSHARD_ERROR_INVALID_ARGUMENT,
               "above the maximum");
  EXPECT_EQ(model, nullptr);
  mp.image_min_tokens = 0;
  ASSERT_EQ(pshard_model_load(files().lm.c_str(), &mp, &model), PSHARD_OK) << pshard_last_error();
  pshard_model_free(model);
}

TEST(CApiImage, Qwen3VlProjectorWithAnotherDeepstackCountIsRefusedAtLoad) {
  Loaded l(files().lm3_two, files().proj3.c_str());
  expect_error(l.status, PSHARD_ERROR_INVALID_ARGUMENT, "DeepStack");
}

TEST(CApiImage, BadImagesAreErrors) {
  pshard_image* img = nullptr;
  const uint8_t junk[] = "this is not an image at all";
  expect_error(pshard_image_from_bytes(junk, sizeof junk, &img), PSHARD_ERROR_INVALID_FORMAT,
               "cannot be decoded");
  EXPECT_EQ(img, nullptr);
  expect_error(pshard_image_from_bytes(junk, 0, &img), PSHARD_ERROR_INVALID_FORMAT, "empty");
  expect_error(pshard_image_from_bytes(nullptr, 5, &img), PSHARD_ERROR_INVALID_ARGUMENT, "data");
  const std::vector<uint8_t> rgb = pixels(1);
  expect_error(pshard_image_from_rgb(rgb.data(), 0, kHeight, kWidth * 3, &img),
               PSHARD_ERROR_OUT_OF_RANGE, "width is 0");
  expect_error(
      pshard_image_from_rgb(rgb.data(), kWidth, PSHARD_IMAGE_MAX_SIDE + 1, kWidth * 3, &img),
      PSHARD_ERROR_OUT_OF_RANGE, "PSHARD_IMAGE_MAX_SIDE");
  expect_error(pshard_image_from_rgb(rgb.data(), kWidth, kHeight, kWidth * 3 - 1, &img),
               PSHARD_ERROR_INVALID_ARGUMENT, "stride");
  expect_error(pshard_image_from_rgb(nullptr, kWidth, kHeight, kWidth * 3, &img),
               PSHARD_ERROR_INVALID_ARGUMENT, "pixels");
  EXPECT_EQ(img, nullptr);
  pshard_image_free(nullptr);
}

TEST(CApiImage, PromptsAndModelsThatDoNotFitAreErrors) {
  const std::vector<uint8_t> rgb = pixels(1);
  pshard_image* img = nullptr;
  ASSERT_EQ(pshard_image_from_rgb(rgb.data(), kWidth, kHeight, kWidth * 3, &img), PSHARD_OK);
  {
    Loaded no_projector(files().lm, nullptr);
    ASSERT_EQ(no_projector.status, PSHARD_OK) << pshard_last_error();
    EXPECT_FALSE(pshard_model_has_vision(no_projector.model));
    Answer a;
    expect_error(no_projector.generate(kPrompt, {img}, &a), PSHARD_ERROR_INVALID_ARGUMENT,
                 "mmproj_path");
  }
  {
    Loaded llama(files().llama, files().proj.c_str());
    expect_error(llama.status, PSHARD_ERROR_INVALID_ARGUMENT, "qwen2vl");
    Loaded missing(files().lm, "/no/such/mmproj.gguf");
    EXPECT_NE(missing.status, PSHARD_OK);
    EXPECT_NE(std::string(pshard_last_error()).find("/no/such/mmproj.gguf"), std::string::npos);
  }
  Loaded l(files().lm, files().proj.c_str());
  ASSERT_EQ(l.status, PSHARD_OK) << pshard_last_error();
  Answer a;
  expect_error(l.generate("<__media__> and <__media__>", {img}, &a), PSHARD_ERROR_INVALID_ARGUMENT,
               "names 2 image places but 1 image");
  expect_error(l.generate("no place for it", {img}, &a), PSHARD_ERROR_INVALID_ARGUMENT,
               "names 0 image places but 1 image");
  expect_error(l.generate(kPrompt, {}, &a), PSHARD_ERROR_INVALID_ARGUMENT,
               "names 1 image places but 0 images");
  expect_error(l.generate("<__media__>", {img, img}, &a), PSHARD_ERROR_INVALID_ARGUMENT,
               "names 1 image places but 2 images");
  expect_error(l.generate(kPrompt, {nullptr}, &a), PSHARD_ERROR_INVALID_ARGUMENT, "NULL");
  EXPECT_TRUE(a.tokens.empty());

  // A context on the emulated GPU without a schedule runs the image prompt on the host:
  // the cpu context's answer.
  pshard_context_params cp = pshard_context_default_params();
  cp.backend = PSHARD_BACKEND_EMU;
  cp.emu_memory_bytes = 64ull << 20;
  cp.n_ctx = 256;
  cp.n_threads = 2;
  pshard_context* emu = nullptr;
  ASSERT_EQ(pshard_context_create(l.model, &cp, &emu), PSHARD_OK) << pshard_last_error();
  const pshard_generate_params gp = greedy();
  Answer on_emu, on_cpu;
  ASSERT_EQ(pshard_context_generate_with_images(emu, kPrompt.data(), kPrompt.size(), &img, 1,
                                                nullptr, &gp, collect, &on_emu, nullptr),
            PSHARD_OK)
      << pshard_last_error();
  ASSERT_EQ(l.generate(kPrompt, {img}, &on_cpu), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(on_emu, on_cpu);
  pshard_context_free(emu);
  pshard_image_free(img);
}

// A schedule compiled with --mmproj: on emu, at every compiled budget, the image is
// encoded by the vision plans on the device and the language plans run after it — the
// answer is the cpu context's bit for bit, and the peak VRAM stays within the budget (the
// phases share it in time).
TEST(CApiImage, UnderAScheduleTheVisionPlansRunOnTheDeviceWithTheCpuAnswer) {
  using namespace pshard;
  const std::vector<uint8_t> rgb = pixels(4);
  pshard_image* img = nullptr;
  ASSERT_EQ(pshard_image_from_rgb(rgb.data(), kWidth, kHeight, kWidth * 3, &img), PSHARD_OK);
  // And two images, each encoded by a vision phase of its own.
  pshard_image* tall = raw_image(8, 40, 100);
  const std::string two = "<__media__> then " + kPrompt;
  const pshard_image* both[] = {tall, img};
  Answer want, want2;
  {
    Loaded cpu(files().lm, files().proj.c_str());
    ASSERT_EQ(cpu.generate(kPrompt, {img}, &want), PSHARD_OK) << pshard_last_error();
    ASSERT_EQ(cpu.generate(two, {tall, img}, &want2), PSHARD_OK) << pshard_last_error();
  }
  auto bytes = pshard::testing::compile_vlm_schedule(files().lm, files().proj,
                                                     pshard::testing::test_machine(), "64,1024");
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  const std::string path = ::testing::TempDir() + "/capi_image_vlm.pshard";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
  }
  auto schedule = pshard::Schedule::load_bytes(*bytes);
  ASSERT_TRUE(schedule.ok());
  pshard_model_params mp = pshard_model_default_params();
  mp.mmproj_path = files().proj.c_str();
  mp.schedule_path = path.c_str();
  pshard_model* model = nullptr;
  ASSERT_EQ(pshard_model_load(files().lm.c_str(), &mp, &model), PSHARD_OK) << pshard_last_error();
  // The budgets hold vision plans that put sub-layers on the device (so they are run).
  int device_plans = 0;
  for (const auto* plan : *schedule->vision()->plans())
    for (auto placement : *plan->placements())
      if (placement != fb::schedule::Placement::Cpu) {
        ++device_plans;
        break;
      }
  EXPECT_GE(device_plans, 2);
  for (uint64_t budget : schedule->budgets()) {
    pshard_context_params cp = pshard_context_default_params();
    cp.backend = PSHARD_BACKEND_EMU;
    cp.vram_budget = budget;
    cp.emu_memory_bytes = budget + (64ull << 20);
    cp.emu_pcie_gbps = 50;
    cp.n_ctx = 256;
    cp.n_threads = 2;
    pshard_context* ctx = nullptr;
    ASSERT_EQ(pshard_context_create(model, &cp, &ctx), PSHARD_OK) << pshard_last_error();
    const pshard_generate_params gp = greedy();
    Answer got;
    ASSERT_EQ(pshard_context_generate_with_images(ctx, kPrompt.data(), kPrompt.size(), &img, 1,
                                                  nullptr, &gp, collect, &got, nullptr),
              PSHARD_OK)
        << "budget " << budget << ": " << pshard_last_error();
    EXPECT_EQ(got, want) << "budget " << budget;
    EXPECT_EQ(pshard_context_n_past(ctx), 0) << "the context's own sequence is untouched";
    Answer got2;
    ASSERT_EQ(pshard_context_generate_with_images(ctx, two.data(), two.size(), both, 2, nullptr,
                                                  &gp, collect, &got2, nullptr),
              PSHARD_OK)
        << "budget " << budget << ": " << pshard_last_error();
    EXPECT_EQ(got2, want2) << "budget " << budget << ", two images";
    // The first prompt again: the two images' prompt replaced its sequence (little kept),
    // and once more: all kept but its last position, the device memory given back between.
    for (int again = 0; again < 2; ++again) {
      Answer got3;
      pshard_generate_result r = pshard_generate_result_init();
      ASSERT_EQ(pshard_context_generate_with_images(ctx, kPrompt.data(), kPrompt.size(), &img, 1,
                                                    nullptr, &gp, collect, &got3, &r),
                PSHARD_OK)
          << "budget " << budget << ": " << pshard_last_error();
      EXPECT_EQ(got3, want) << "budget " << budget << ", again " << again;
      if (again) // all but the last position, decoded for its logits
        EXPECT_EQ(r.n_cached, r.n_prompt - 1) << "budget " << budget;
      else // the two prompts' shared start only ("<|")
        EXPECT_LT(r.n_cached, 8) << "budget " << budget;
    }
    pshard_context_free(ctx);
  }
  // A batch under the schedule (pshard-server's engine): the image encoded on the CPU,
  // the language plans on emu, the same answer.
  pshard_batch_params bp = pshard_batch_default_params();
  bp.backend = PSHARD_BACKEND_EMU;
  bp.emu_memory_bytes = schedule->budgets().back() + (64ull << 20);
  pshard_batch* batch = new_batch(model, 1, 16, bp);
  SeqAnswer in_batch;
  pshard_seq* seq = add_prompt(batch, kPrompt, {img}, &in_batch);
  run_batch(batch);
  EXPECT_EQ(in_batch.finish, PSHARD_FINISH_LENGTH) << in_batch.error;
  EXPECT_EQ(in_batch.answer, want);
  pshard_seq_free(seq);
  pshard_batch_free(batch);
  pshard_model_free(model);
  pshard_image_free(img);
  pshard_image_free(tall);
}

} // namespace
