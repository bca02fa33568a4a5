// Embeddings through the C API: pshard_context_embed gives embed()'s vector (the runtime
// linked statically) bit for bit on cpu and on emu under every compiled budget of a
// schedule; every pooling and option; the model's pooling (none named: an error that
// says so); the buffer contract; bad arguments.
#include "pshard/pshard.h"
#include "runtime/generate/embedding.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/model/model.h"
#include "tests/runtime/capi/capi_test_util.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace pshard::capi_test;

std::vector<pshard_token> story_tokens(pshard_model* m) {
  std::vector<pshard_token> t(64);
  size_t n = 0;
  EXPECT_EQ(pshard_model_tokenize(m, "Lily and Ben went to the park to play.", 38, true, t.data(),
                                  t.size(), &n),
            PSHARD_OK);
  t.resize(n);
  return t;
}

std::vector<float> runtime_embed(const std::vector<pshard_token>& t, pshard::Pooling p,
                                 pshard::EmbeddingOptions o) {
  auto model = pshard::Model::load(kModel);
  EXPECT_TRUE(model.ok());
  auto s = pshard::CpuSession::create(**model, {128, 1, 256});
  EXPECT_TRUE(s.ok());
  auto v = pshard::embed(**s, (*model)->hparams().n_embd, t, p, o);
  EXPECT_TRUE(v.ok()) << v.status().to_string();
  return v.ok() ? *v : std::vector<float>{};
}

std::vector<float> context_embed(pshard_context* ctx, const std::vector<pshard_token>& t,
                                 pshard_embed_params p) {
  std::vector<float> out(64 * 64);
  size_t n = 0;
  EXPECT_EQ(pshard_context_embed(ctx, t.data(), t.size(), &p, out.data(), out.size(), &n),
            PSHARD_OK)
      << pshard_last_error();
  out.resize(n);
  return out;
}

TEST(CapiEmbed, GivesTheRuntimesVectorForEveryPoolingOnCpuAndEmu) {
  SKIP_WITHOUT_MODEL();
  std::vector<uint64_t> budgets;
  const std::string schedule = schedule_file(&budgets);
  pshard_model_params mp = pshard_model_default_params();
  mp.schedule_path = schedule.c_str();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), &mp, &m), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(pshard_model_n_embd(m), 64);
  EXPECT_EQ(pshard_model_pooling(m), PSHARD_POOLING_MODEL); // a chat model names none
  const std::vector<pshard_token> t = story_tokens(m);
  struct Case {
    pshard_pooling pooling;
    bool normalize;
    int32_t dimensions;
  };
  const Case cases[] = {{PSHARD_POOLING_LAST, true, 0},
                        {PSHARD_POOLING_MEAN, false, 0},
                        {PSHARD_POOLING_CLS, true, 32},
                        {PSHARD_POOLING_NONE, true, 0}};
  std::vector<uint64_t> runs = budgets;
  runs.push_back(0); // 0: the cpu backend
  for (uint64_t budget : runs) {
    pshard_context_params cp = pshard_context_default_params();
    cp.n_threads = 1;
    cp.n_ctx = 128;
    if (budget) {
      cp.backend = PSHARD_BACKEND_EMU;
      cp.vram_budget = budget;
    }
    pshard_context* ctx = nullptr;
    ASSERT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_OK) << pshard_last_error();
    for (const Case& c : cases) {
      SCOPED_TRACE("budget " + std::to_string(budget) + " pooling " + std::to_string(c.pooling));
      pshard_embed_params p = pshard_embed_default_params();
      p.pooling = c.pooling;
      p.normalize = c.normalize;
      p.dimensions = c.dimensions;
      const std::vector<float> got = context_embed(ctx, t, p);
      EXPECT_EQ(got, runtime_embed(t, static_cast<pshard::Pooling>(c.pooling),
                                   {.normalize = c.normalize, .dimensions = c.dimensions}));
      EXPECT_EQ(pshard_context_n_past(ctx), static_cast<int64_t>(t.size()));
    }
    pshard_context_free(ctx);
  }
  pshard_model_free(m);
}

TEST(CapiEmbed, ReportsWhatIsWrong) {
  SKIP_WITHOUT_MODEL();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK);
  pshard_context_params cp = pshard_context_default_params();
  cp.n_ctx = 128;
  cp.n_threads = 1;
  pshard_context* ctx = nullptr;
  ASSERT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_OK);
  const std::vector<pshard_token> t = story_tokens(m);
  float out[64];
  size_t n = 0;
  // The model names no pooling: the default asks for one.
  EXPECT_EQ(pshard_context_embed(ctx, t.data(), t.size(), nullptr, out, 64, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("pooling_type"), std::string::npos)
      << pshard_last_error();
  pshard_embed_params p = pshard_embed_default_params();
  p.pooling = PSHARD_POOLING_LAST;
  // Too small a buffer: OUT_OF_RANGE, and the size needed.
  EXPECT_EQ(pshard_context_embed(ctx, t.data(), t.size(), &p, out, 10, &n),
            PSHARD_ERROR_OUT_OF_RANGE);
  EXPECT_EQ(n, 64u);
  ASSERT_EQ(pshard_context_embed(ctx, t.data(), t.size(), &p, out, 64, &n), PSHARD_OK);
  double norm2 = 0;
  for (float x : out)
    norm2 += double(x) * x;
  EXPECT_NEAR(norm2, 1.0, 1e-5) << "normalized by default";
  p.dimensions = 65;
  EXPECT_EQ(pshard_context_embed(ctx, t.data(), t.size(), &p, out, 64, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("dimensions 65"), std::string::npos);
  p.dimensions = 0;
  const int32_t nine = 9; // what a C caller can store in the enum
  std::memcpy(&p.pooling, &nine, sizeof nine);
  EXPECT_EQ(pshard_context_embed(ctx, t.data(), t.size(), &p, out, 64, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  p.pooling = PSHARD_POOLING_RANK; // a chat model has no head to rank with
  EXPECT_EQ(pshard_context_embed(ctx, t.data(), t.size(), &p, out, 64, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("cls.output"), std::string::npos)
      << pshard_last_error();
  EXPECT_EQ(pshard_model_n_cls_labels(m), 0);
  EXPECT_EQ(pshard_model_rerank_template(m), nullptr);
  pshard_token pair[8];
  EXPECT_EQ(pshard_model_rerank_tokenize(m, "a", 1, "b", 1, pair, 8, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("not a reranker"), std::string::npos)
      << pshard_last_error();
  p.pooling = PSHARD_POOLING_LAST;
  EXPECT_EQ(pshard_context_embed(ctx, t.data(), 0, &p, out, 64, &n), PSHARD_ERROR_INVALID_ARGUMENT);
  std::vector<pshard_token> longer(200, t[1]);
  EXPECT_EQ(pshard_context_embed(ctx, longer.data(), longer.size(), &p, out, 64, &n),
            PSHARD_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(pshard_last_error()).find("context"), std::string::npos);
  EXPECT_EQ(pshard_context_embed(nullptr, t.data(), t.size(), &p, out, 64, &n),
            PSHARD_ERROR_INVALID_ARGUMENT);
  pshard_context_free(ctx);
  pshard_model_free(m);
}

// A reranker as llama.cpp converts Qwen3-Reranker (pshard-mkmodel --rerank): rank pooling
// gives the softmax, over the head's two rows, of each row times the last token's
// hidden state — recomputed here in float64 from the file's cls.output.weight and the
// unnormalized last-token embedding.
TEST(CapiEmbed, ARerankerScoresTheLastRowWithItsHead) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("pshard-rerank-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "rerank.gguf").string();
  pshard::ModelSpec spec;
  spec.arch = "qwen3";
  spec.n_embd = 32;
  spec.n_layer = 2;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  spec.n_ff = 64;
  spec.rerank = true;
  ASSERT_TRUE(pshard::write_model(spec, path).ok());
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(path.c_str(), nullptr, &m), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(pshard_model_pooling(m), PSHARD_POOLING_RANK);
  EXPECT_EQ(pshard_model_n_cls_labels(m), 2);
  ASSERT_NE(pshard_model_rerank_template(m), nullptr);
  EXPECT_NE(std::string(pshard_model_rerank_template(m)).find("<Document>: {document}"),
            std::string::npos);
  pshard_context_params cp = pshard_context_default_params();
  cp.n_ctx = 64;
  cp.n_threads = 1;
  pshard_context* ctx = nullptr;
  ASSERT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_OK);
  const std::vector<pshard_token> t = {3, 17, 40, 99, 250, 7};
  const std::vector<float> scores = context_embed(ctx, t, pshard_embed_default_params());
  pshard_embed_params last = pshard_embed_default_params();
  last.pooling = PSHARD_POOLING_LAST;
  last.normalize = false;
  const std::vector<float> h = context_embed(ctx, t, last);
  ASSERT_EQ(scores.size(), 2u);
  ASSERT_EQ(h.size(), 32u);
  auto file = pshard::gguf::GgufFile::open(path, pshard::gguf::OpenMode::kMapData);
  ASSERT_TRUE(file.ok());
  const pshard::gguf::TensorInfo* head = (*file)->find_tensor("cls.output.weight");
  ASSERT_NE(head, nullptr);
  ASSERT_EQ(head->type, pshard::TensorType::kF32);
  const auto* w = reinterpret_cast<const float*>((*file)->tensor_data(*head));
  double logit[2] = {0, 0};
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < 32; ++i)
      logit[l] += double(w[l * 32 + i]) * h[static_cast<size_t>(i)];
  const double yes = 1.0 / (1.0 + std::exp(logit[1] - logit[0]));
  EXPECT_NEAR(scores[0], yes, 1e-6);
  EXPECT_NEAR(scores[0] + scores[1], 1.0, 1e-6);
  // An older conversion without tokenizer.chat_template.rerank gets Qwen3-Reranker's
  // prompt from its model card, as llama.cpp built it in for the family.
  const std::string older = (dir / "older.gguf").string();
  spec.rerank_prompt_builtin = true;
  ASSERT_TRUE(pshard::write_model(spec, older).ok());
  pshard_model* o = nullptr;
  ASSERT_EQ(pshard_model_load(older.c_str(), nullptr, &o), PSHARD_OK) << pshard_last_error();
  ASSERT_NE(pshard_model_rerank_template(o), nullptr);
  EXPECT_EQ(std::string(pshard_model_rerank_template(o)),
            std::string(pshard_model_rerank_template(m)));
  // What it scores for a query and a document: the prompt filled, then tokenized; the
  // count comes back when the buffer is too small.
  const std::string query = "Who {document}?", document = "Tom";
  size_t n_pair = 0;
  EXPECT_EQ(pshard_model_rerank_tokenize(m, query.data(), query.size(), document.data(),
                                         document.size(), nullptr, 0, &n_pair),
            PSHARD_ERROR_OUT_OF_RANGE);
  std::vector<pshard_token> pair(n_pair);
  ASSERT_EQ(pshard_model_rerank_tokenize(m, query.data(), query.size(), document.data(),
                                         document.size(), pair.data(), pair.size(), &n_pair),
            PSHARD_OK);
  std::string filled = pshard_model_rerank_template(m);
  filled.replace(filled.find("{query}"), 7, query);
  filled.replace(filled.find("{document}", filled.find(query) + query.size()), 10, document);
  std::vector<pshard_token> direct(filled.size() + 8);
  size_t n_direct = 0;
  ASSERT_EQ(pshard_model_tokenize_ex(m, filled.data(), filled.size(), nullptr, direct.data(),
                                     direct.size(), &n_direct),
            PSHARD_OK);
  direct.resize(n_direct);
  EXPECT_EQ(pair, direct) << "the query's own \"{document}\" stays as written";
  pshard_model_free(o);
  pshard_context_free(ctx);
  pshard_model_free(m);
  std::filesystem::remove_all(dir);
}

// Embedding requests in a batch beside a generating one: each event's vector is the
// context's, and the story is still the known answer.
TEST(CapiEmbed, BatchRequestsGiveTheContextsVectors) {
  SKIP_WITHOUT_MODEL();
  pshard_model* m = nullptr;
  ASSERT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK);
  pshard_batch_params bp = pshard_batch_default_params();
  bp.n_seq_max = 3;
  bp.n_ctx = 128;
  bp.n_threads = 1;
  bp.n_batch = 8;
  pshard_batch* b = nullptr;
  ASSERT_EQ(pshard_batch_create(m, &bp, &b), PSHARD_OK) << pshard_last_error();
  const std::vector<pshard_token> t = story_tokens(m);
  pshard_embed_params mean = pshard_embed_default_params(), none = mean;
  mean.pooling = PSHARD_POOLING_MEAN;
  none.pooling = PSHARD_POOLING_NONE;
  none.dimensions = 8;
  struct Got {
    std::vector<float> v;
    std::vector<pshard_token> tokens;
    pshard_finish_reason finish = PSHARD_FINISH_NONE;
  };
  auto on_event = [](const pshard_seq_event* e, void* user) {
    auto* g = static_cast<Got*>(user);
    g->v.assign(e->embedding, e->embedding + e->n_embedding);
    if (e->token >= 0)
      g->tokens.push_back(e->token);
    g->finish = e->finish;
    return true;
  };
  Got got[3];
  pshard_seq* seqs[3] = {};
  const pshard_embed_params* kinds[3] = {&mean, nullptr, &none};
  pshard_token once[5] = {1, 403, 407, 261, 378}; // "Once upon a time"
  pshard_generate_params g = pshard_generate_default_params();
  g.n_predict = 16;
  g.temperature = 0;
  for (int i = 0; i < 3; ++i) {
    pshard_seq_params sp = pshard_seq_default_params();
    sp.tokens = kinds[i] ? t.data() : once;
    sp.n_tokens = kinds[i] ? t.size() : 5;
    sp.embed = kinds[i];
    sp.on_event = on_event;
    sp.user_data = &got[i];
    ASSERT_EQ(pshard_batch_add(b, &sp, &g, &seqs[i]), PSHARD_OK) << pshard_last_error();
  }
  while (pshard_batch_has_work(b))
    ASSERT_EQ(pshard_batch_step(b, nullptr), PSHARD_OK);
  pshard_context_params cp = pshard_context_default_params();
  cp.n_ctx = 128;
  cp.n_threads = 1;
  pshard_context* ctx = nullptr;
  ASSERT_EQ(pshard_context_create(m, &cp, &ctx), PSHARD_OK);
  EXPECT_EQ(got[0].finish, PSHARD_FINISH_STOP);
  EXPECT_EQ(got[0].v, context_embed(ctx, t, mean));
  EXPECT_EQ(got[2].v, context_embed(ctx, t, none));
  EXPECT_EQ(got[2].v.size(), 8 * t.size());
  EXPECT_EQ(got[1].tokens, kExpected);
  EXPECT_TRUE(got[1].v.empty());
  // A batch embedding request needs a pooling the model lacks: refused at add.
  pshard_embed_params model_pooling = pshard_embed_default_params();
  pshard_seq_params sp = pshard_seq_default_params();
  sp.tokens = t.data();
  sp.n_tokens = t.size();
  sp.embed = &model_pooling;
  pshard_seq* bad = nullptr;
  EXPECT_EQ(pshard_batch_add(b, &sp, nullptr, &bad), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("pooling"), std::string::npos);
  for (pshard_seq* s : seqs)
    pshard_seq_free(s);
  pshard_context_free(ctx);
  pshard_batch_free(b);
  pshard_model_free(m);
}

} // namespace
