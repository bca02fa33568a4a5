// The C API's batches (pshard_batch_*, pshard_seq_*) as an app uses them: the known
// answer in a busy batch, callbacks and polling, logprobs and stop strings, requests
// added, cancelled and freed from other threads while one thread steps, the budget
// changed while serving, and every refusal a status code with a message.
#include "pshard/pshard.h"
#include "tests/runtime/capi/capi_test_util.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <atomic>
#include <cstddef>
#include <cstring>
#include <gtest/gtest.h>
#include <mutex>
#include <thread>

namespace {

using namespace pshard::capi_test;

struct Model {
  explicit Model(const char* schedule = nullptr) {
    pshard_model_params mp = pshard_model_default_params();
    mp.schedule_path = schedule;
    EXPECT_EQ(pshard_model_load(kModel.c_str(), &mp, &m), PSHARD_OK) << pshard_last_error();
  }
  ~Model() { pshard_model_free(m); }
  pshard_model* m = nullptr;
};

struct Batch {
  Batch(pshard_model* m, pshard_batch_params p) {
    EXPECT_EQ(pshard_batch_create(m, &p, &b), PSHARD_OK) << pshard_last_error();
  }
  ~Batch() { pshard_batch_free(b); }
  void run() {
    while (pshard_batch_has_work(b))
      ASSERT_EQ(pshard_batch_step(b, nullptr), PSHARD_OK);
  }
  pshard_batch* b = nullptr;
};

struct Stream {
  std::mutex mutex;
  std::vector<pshard_token> tokens;
  std::vector<float> logprobs;
  std::string text;
  int finals = 0;
  pshard_finish_reason finish = PSHARD_FINISH_NONE;
  std::string error;
};

bool on_event(const pshard_seq_event* e, void* user) {
  auto* s = static_cast<Stream*>(user);
  std::lock_guard lock(s->mutex);
  if (e->token >= 0) {
    s->tokens.push_back(e->token);
    s->logprobs.push_back(e->logprob);
  }
  s->text.append(e->text, e->text_len);
  if (e->finish != PSHARD_FINISH_NONE) {
    ++s->finals;
    s->finish = e->finish;
    s->error = e->error_message;
  }
  return true;
}

pshard_seq* add_text(pshard_batch* b, const std::string& text, int n, Stream* stream,
                     pshard_status* status = nullptr) {
  pshard_seq_params sp = pshard_seq_default_params();
  sp.text = text.c_str();
  sp.text_len = text.size();
  sp.on_event = stream ? on_event : nullptr;
  sp.user_data = stream;
  sp.logprobs = true;
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = n;
  gp.temperature = 0;
  pshard_seq* seq = nullptr;
  const pshard_status st = pshard_batch_add(b, &sp, &gp, &seq);
  if (status)
    *status = st;
  else
    EXPECT_EQ(st, PSHARD_OK) << pshard_last_error();
  return seq;
}

TEST(CApiBatch, TheKnownAnswerInABusyBatchByCallbackAndByPoll) {
  SKIP_WITHOUT_MODEL();
  Model model;
  pshard_batch_params bp = pshard_batch_default_params();
  bp.n_seq_max = 3;
  bp.n_batch = 8; // the prompts are read in chunks between the others' decode steps
  bp.n_threads = 1;
  Batch batch(model.m, bp);
  EXPECT_EQ(pshard_batch_n_seq_max(batch.b), 3);
  EXPECT_GT(pshard_batch_n_ctx(batch.b), 0);
  Stream a, c;
  pshard_seq* sa = add_text(batch.b, "Once upon a time", 16, &a);
  pshard_seq* sb =
      add_text(batch.b, "Lily and Ben went to the park. They saw a big dog and", 16, nullptr);
  pshard_seq* sc = add_text(batch.b, "Once upon a time", 16, &c);
  EXPECT_NE(pshard_seq_id(sa), pshard_seq_id(sb));
  batch.run();
  EXPECT_EQ(a.tokens, kExpected);
  EXPECT_EQ(c.tokens, kExpected);
  EXPECT_EQ(a.logprobs, c.logprobs) << "bit for bit";
  EXPECT_EQ(a.finals, 1);
  EXPECT_EQ(a.finish, PSHARD_FINISH_LENGTH);
  EXPECT_EQ(a.text.substr(0, 26), ", there was a little girl ");
  EXPECT_EQ(pshard_seq_finish_reason(sa), PSHARD_FINISH_LENGTH);
  // b queued its events for polling.
  pshard_seq_event e = pshard_seq_event_init();
  bool got = false;
  int events = 0;
  std::string text;
  pshard_finish_reason last = PSHARD_FINISH_NONE;
  while (pshard_seq_poll(sb, &e, &got) == PSHARD_OK && got) {
    ++events;
    text.append(e.text, e.text_len);
    last = e.finish;
    EXPECT_EQ(e.seq_id, pshard_seq_id(sb));
    EXPECT_LT(e.logprob, 0.0f);
  }
  EXPECT_EQ(events, 16);
  EXPECT_EQ(last, PSHARD_FINISH_LENGTH);
  EXPECT_EQ(e.stop_string, -1) << "a limit is no stop string";
  EXPECT_FALSE(text.empty());
  EXPECT_EQ(pshard_seq_poll(sa, &e, &got), PSHARD_ERROR_INVALID_ARGUMENT)
      << "a callback sequence is not polled";
  pshard_batch_stats st = pshard_batch_stats_init();
  ASSERT_EQ(pshard_batch_get_stats(batch.b, &st), PSHARD_OK);
  EXPECT_EQ(st.requests_added, 3);
  EXPECT_EQ(st.finished_length, 3);
  EXPECT_EQ(st.generated_tokens, 48);
  EXPECT_EQ(st.running, 0);
  EXPECT_EQ(st.kv_pages_used, 0);
  // A paged cache: every sequence's context in pages of kv_page_tokens positions.
  ASSERT_GT(st.kv_page_tokens, 0);
  EXPECT_EQ(st.kv_pages_total,
            3 * ((pshard_batch_n_ctx(batch.b) + st.kv_page_tokens - 1) / st.kv_page_tokens));
  for (pshard_seq* s : {sa, sb, sc})
    pshard_seq_free(s);
}

// The second request starts with the first one's prompt and answer: with the prefix
// cache it reads those pages (n_cached, the stats) and answers as with the cache off.
TEST(CApiBatch, APromptStartingLikeAnEarlierOneReadsTheCache) {
  SKIP_WITHOUT_MODEL();
  Model model;
  const std::string first = "Lily and Ben went to the park. They saw a big dog and";
  std::vector<pshard_token> answers[2];
  int64_t cached[2] = {-1, -1}, stats_cached[2] = {-1, -1}, pages_cached[2] = {-1, -1};
  for (bool cache : {true, false}) {
    pshard_batch_params bp = pshard_batch_default_params();
    EXPECT_TRUE(bp.prefix_cache) << "on by default";
    bp.prefix_cache = cache;
    bp.n_threads = 1;
    Batch batch(model.m, bp);
    Stream a;
    pshard_seq* sa = add_text(batch.b, first, 24, &a);
    batch.run();
    pshard_seq_free(sa);
    pshard_seq* sb = add_text(batch.b, first + a.text + " Then", 8, nullptr);
    batch.run();
    pshard_seq_event e = pshard_seq_event_init();
    bool got = false;
    while (pshard_seq_poll(sb, &e, &got) == PSHARD_OK && got) {
      if (e.token >= 0)
        answers[cache].push_back(e.token);
      cached[cache] = e.n_cached;
    }
    pshard_seq_free(sb);
    pshard_batch_stats st = pshard_batch_stats_init();
    ASSERT_EQ(pshard_batch_get_stats(batch.b, &st), PSHARD_OK);
    stats_cached[cache] = st.cached_prompt_tokens;
    pages_cached[cache] = st.kv_pages_cached;
  }
  EXPECT_GE(cached[1], 32) << "the first prompt and most of its answer: two pages or more";
  EXPECT_EQ(cached[1] % 16, 0);
  EXPECT_EQ(stats_cached[1], cached[1]);
  EXPECT_GT(pages_cached[1], 0);
  EXPECT_EQ(cached[0], 0);
  EXPECT_EQ(stats_cached[0], 0);
  EXPECT_EQ(pages_cached[0], 0);
  EXPECT_EQ(answers[1], answers[0]);
  EXPECT_EQ(answers[1].size(), 8u);
}

// pshard_batch_get_progress (GET /slots): after a few passes each running request shows
// its prompt read and its tokens counted, in the order they got sequences; an index past
// the snapshot is refused; none once they end.
TEST(CApiBatch, ProgressOfTheRunningRequests) {
  SKIP_WITHOUT_MODEL();
  Model model;
  pshard_batch_params bp = pshard_batch_default_params();
  bp.n_seq_max = 2;
  bp.n_batch = 64;
  bp.n_threads = 1;
  Batch batch(model.m, bp);
  pshard_seq* a = add_text(batch.b, "Once upon a time", 20, nullptr);
  pshard_seq* b = add_text(batch.b, "The little dog ran", 20, nullptr);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(pshard_batch_step(batch.b, nullptr), PSHARD_OK);
  pshard_batch_stats st = pshard_batch_stats_init();
  ASSERT_EQ(pshard_batch_get_stats(batch.b, &st), PSHARD_OK);
  ASSERT_EQ(st.n_progress, 2u);
  const int64_t ids[] = {pshard_seq_id(a), pshard_seq_id(b)}, prompts[] = {5, 7}; // with BOS
  for (size_t i = 0; i < 2; ++i) {
    pshard_seq_progress p = pshard_seq_progress_init();
    ASSERT_EQ(pshard_batch_get_progress(batch.b, i, &p), PSHARD_OK);
    EXPECT_EQ(p.seq_id, ids[i]);
    EXPECT_EQ(p.n_prompt, prompts[i]);
    EXPECT_EQ(p.n_prompt_read, p.n_prompt);
    EXPECT_TRUE(p.generating);
    EXPECT_EQ(p.n_generated, 4) << "one token a pass, the first with the prompt";
    EXPECT_GE(p.ms_running, 0);
  }
  pshard_seq_progress p = pshard_seq_progress_init();
  EXPECT_EQ(pshard_batch_get_progress(batch.b, 2, &p), PSHARD_ERROR_OUT_OF_RANGE);
  batch.run();
  ASSERT_EQ(pshard_batch_get_stats(batch.b, &st), PSHARD_OK);
  EXPECT_EQ(st.n_progress, 0u);
  pshard_seq_free(a);
  pshard_seq_free(b);
}

TEST(CApiBatch, StopStringsTopLogprobsAndTokenPieces) {
  SKIP_WITHOUT_MODEL();
  Model model;
  Batch batch(model.m, pshard_batch_default_params());
  pshard_seq_params sp = pshard_seq_default_params();
  pshard_token prompt[16];
  size_t n = 0;
  ASSERT_EQ(pshard_model_tokenize(model.m, "Once upon a time", 16, true, prompt, 16, &n),
            PSHARD_OK);
  sp.tokens = prompt;
  sp.n_tokens = n;
  const char* stops[] = {"never in the text", "Lily"};
  sp.stop_strings = stops;
  sp.n_stop_strings = 2;
  pshard_generate_params gp = pshard_generate_default_params();
  gp.temperature = 0;
  gp.n_predict = 32;
  gp.top_logprobs = 2;
  pshard_seq* seq = nullptr;
  ASSERT_EQ(pshard_batch_add(batch.b, &sp, &gp, &seq), PSHARD_OK) << pshard_last_error();
  batch.run();
  std::string text;
  pshard_seq_event e = pshard_seq_event_init();
  bool got = false;
  int32_t stop_string = -2;
  while (pshard_seq_poll(seq, &e, &got) == PSHARD_OK && got) {
    text.append(e.text, e.text_len);
    if (e.finish != PSHARD_FINISH_NONE)
      stop_string = e.stop_string;
    if (e.token >= 0) {
      ASSERT_EQ(e.n_top, 2);
      EXPECT_EQ(e.top_ids[0], e.token);
      EXPECT_FLOAT_EQ(e.top_logprobs[0], e.logprob);
    }
  }
  EXPECT_EQ(text, ", there was a little girl named ");
  EXPECT_EQ(pshard_seq_finish_reason(seq), PSHARD_FINISH_STOP);
  EXPECT_EQ(stop_string, 1) << "the last event names the stop string that ended it";
  pshard_seq_free(seq);
  char piece[16];
  size_t len = 0;
  ASSERT_EQ(pshard_model_token_to_piece(model.m, kExpected[1], piece, sizeof piece, &len),
            PSHARD_OK);
  EXPECT_EQ(std::string(piece, len), " there");
  EXPECT_EQ(pshard_model_token_to_piece(model.m, 99999, piece, sizeof piece, &len),
            PSHARD_ERROR_OUT_OF_RANGE);
}

TEST(CApiBatch, PollingWritesNoFurtherThanTheCallersEvent) {
  SKIP_WITHOUT_MODEL();
  Model model;
  Batch batch(model.m, pshard_batch_default_params());
  pshard_seq_params sp = pshard_seq_default_params();
  sp.text = "Once upon a time";
  sp.text_len = 16;
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = 2;
  pshard_seq* seq = nullptr;
  ASSERT_EQ(pshard_batch_add(batch.b, &sp, &gp, &seq), PSHARD_OK) << pshard_last_error();
  batch.run();
  // An event as an older caller knew it: everything up to n_cached, then the caller's
  // own memory, which must stay as it was.
  constexpr size_t kOld = offsetof(pshard_seq_event, n_cached);
  alignas(pshard_seq_event) unsigned char buffer[sizeof(pshard_seq_event)];
  std::memset(buffer, 0xAB, sizeof buffer);
  pshard_seq_event* old = reinterpret_cast<pshard_seq_event*>(buffer);
  old->size = kOld;
  bool got = false;
  ASSERT_EQ(pshard_seq_poll(seq, old, &got), PSHARD_OK) << pshard_last_error();
  ASSERT_TRUE(got);
  EXPECT_EQ(old->size, kOld);
  EXPECT_EQ(old->seq_id, pshard_seq_id(seq));
  EXPECT_GE(old->token, 0);
  for (size_t i = kOld; i < sizeof buffer; ++i)
    ASSERT_EQ(buffer[i], 0xAB) << "byte " << i << " past the caller's event was written";

  pshard_seq_event unsized{};
  EXPECT_EQ(pshard_seq_poll(seq, &unsized, &got), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("pshard_seq_event_init"), std::string::npos);
  pshard_seq_event e = pshard_seq_event_init();
  ASSERT_EQ(pshard_seq_poll(seq, &e, &got), PSHARD_OK);
  EXPECT_TRUE(got) << "the refused poll took no event";
  EXPECT_EQ(e.size, sizeof e);
  pshard_seq_free(seq);
}

TEST(CApiBatch, RefusalsAreStatusCodesWithAMessage) {
  SKIP_WITHOUT_MODEL();
  Model model;
  pshard_batch* b = nullptr;
  EXPECT_EQ(pshard_batch_create(nullptr, nullptr, &b), PSHARD_ERROR_INVALID_ARGUMENT);
  pshard_batch_params bad = pshard_batch_default_params();
  bad.n_seq_max = 0;
  EXPECT_EQ(pshard_batch_create(model.m, &bad, &b), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("n_seq_max"), std::string::npos);
  pshard_batch_params p = pshard_batch_default_params();
  p.n_seq_max = 1;
  p.n_queue_max = 1;
  p.n_ctx = 32;
  Batch batch(model.m, p);
  EXPECT_EQ(pshard_batch_n_ctx(batch.b), 32);
  pshard_status st;
  EXPECT_EQ(add_text(batch.b, std::string(200, 'a'), 4, nullptr, &st), nullptr);
  EXPECT_EQ(st, PSHARD_ERROR_OUT_OF_RANGE);
  EXPECT_NE(std::string(pshard_last_error()).find("context of 32"), std::string::npos);
  EXPECT_EQ(add_text(batch.b, "Once", 40, nullptr, &st), nullptr);
  EXPECT_EQ(st, PSHARD_ERROR_OUT_OF_RANGE);
  pshard_seq* one = add_text(batch.b, "Once", 4, nullptr);
  pshard_seq* two = add_text(batch.b, "Once", 4, nullptr);
  EXPECT_EQ(add_text(batch.b, "Once", 4, nullptr, &st), nullptr);
  EXPECT_EQ(st, PSHARD_ERROR_UNAVAILABLE) << "one running, one waiting: the queue is full";
  EXPECT_STREQ(pshard_status_name(PSHARD_ERROR_UNAVAILABLE), "unavailable");
  EXPECT_EQ(pshard_batch_set_vram_budget(batch.b, 1 << 20), PSHARD_ERROR_UNSUPPORTED)
      << "no schedule, no budget";
  pshard_seq_params sp = pshard_seq_default_params();
  sp.add_special = false; // no text and no BOS: nothing to start from
  pshard_generate_params four = pshard_generate_default_params();
  four.n_predict = 4;
  pshard_seq* seq = nullptr;
  EXPECT_EQ(pshard_batch_add(batch.b, &sp, &four, &seq), PSHARD_ERROR_INVALID_ARGUMENT)
      << "an empty prompt";
  // An older caller's smaller struct: the fields it lacks keep their defaults.
  pshard_seq_params old = pshard_seq_default_params();
  old.size = offsetof(pshard_seq_params, stop_strings);
  old.text = "Once";
  old.text_len = 4;
  old.stop_strings = reinterpret_cast<const char* const*>(0x1); // past its size: unread
  old.n_stop_strings = 5;
  pshard_seq_free(one);
  batch.run();
  EXPECT_EQ(pshard_batch_add(batch.b, &old, &four, &seq), PSHARD_OK) << pshard_last_error();
  batch.run();
  pshard_seq_free(seq);
  pshard_seq_free(two);
  pshard_batch_stats stats = pshard_batch_stats_init();
  ASSERT_EQ(pshard_batch_get_stats(batch.b, &stats), PSHARD_OK);
  EXPECT_EQ(stats.requests_refused, 4);
  EXPECT_EQ(stats.finished_cancelled, 1);
}

TEST(CApiBatch, ANegativeTimeLimitIsRefusedByName) {
  SKIP_WITHOUT_MODEL();
  Model model;
  pshard_batch_params p = pshard_batch_default_params();
  p.n_seq_max = 1;
  Batch batch(model.m, p);
  pshard_seq_params sp = pshard_seq_default_params();
  sp.text = "Once";
  sp.text_len = 4;
  sp.t_max_predict_ms = -5;
  pshard_seq* seq = nullptr;
  EXPECT_EQ(pshard_batch_add(batch.b, &sp, nullptr, &seq), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("t_max_predict_ms"), std::string::npos)
      << pshard_last_error();
  EXPECT_EQ(seq, nullptr);
}

// KV cache types (llama-server's -ctk / -ctv): a batch's sequences answer as a context
// with the same types, bit for bit, and a Q8_0 cache is in force (its log-probabilities
// differ from F16's); a value that is no KV type is refused; an older caller's struct
// without the fields gets the default.
TEST(CApiBatch, KvCacheTypesAnswerAsAContextWithTheSameTypes) {
  SKIP_WITHOUT_MODEL();
  {
    Model small_heads; // stories260K's heads of 8 are no whole Q8_0 block: refused, naming it
    pshard_batch_params q8 = pshard_batch_default_params();
    q8.kv_type_k = PSHARD_KV_Q8_0;
    pshard_batch* b = nullptr;
    EXPECT_EQ(pshard_batch_create(small_heads.m, &q8, &b), PSHARD_ERROR_UNSUPPORTED);
    EXPECT_NE(std::string(pshard_last_error()).find("multiple of 32"), std::string::npos)
        << pshard_last_error();
  }
  // A model whose heads are 32 wide.
  const std::string path = ::testing::TempDir() + "/capi_batch_kv_types.gguf";
  pshard::ModelSpec spec;
  spec.n_embd = 128;
  spec.n_head = 4;
  spec.n_head_kv = 2;
  ASSERT_TRUE(pshard::write_model(spec, path).ok());
  struct Loaded {
    Loaded(const std::string& p) {
      EXPECT_EQ(pshard_model_load(p.c_str(), nullptr, &m), PSHARD_OK);
    }
    ~Loaded() { pshard_model_free(m); }
    pshard_model* m = nullptr;
  } model(path);
  const std::string prompt = "Lily and Ben went to the park. They saw a big dog and";
  auto in_batch = [&](pshard_kv_type k, pshard_kv_type v, size_t params_size) {
    pshard_batch_params bp = pshard_batch_default_params();
    bp.n_seq_max = 2;
    bp.n_batch = 8;
    bp.n_threads = 1;
    bp.kv_type_k = k;
    bp.kv_type_v = v;
    bp.size = params_size;
    Batch batch(model.m, bp);
    Stream s, other;
    pshard_seq* mine = add_text(batch.b, prompt, 24, &s);
    pshard_seq* busy = add_text(batch.b, "Once upon a time", 24, &other); // a busy batch
    batch.run();
    pshard_seq_free(mine);
    pshard_seq_free(busy);
    return std::pair{s.tokens, s.logprobs};
  };
  auto in_context = [&](pshard_kv_type k, pshard_kv_type v) {
    pshard_context_params cp = pshard_context_default_params();
    cp.n_threads = 1;
    cp.kv_type_k = k;
    cp.kv_type_v = v;
    pshard_context* c = nullptr;
    EXPECT_EQ(pshard_context_create(model.m, &cp, &c), PSHARD_OK) << pshard_last_error();
    std::vector<pshard_token> ids(prompt.size() + 8);
    size_t n = 0;
    EXPECT_EQ(pshard_model_tokenize(model.m, prompt.data(), prompt.size(), true, ids.data(),
                                    ids.size(), &n),
              PSHARD_OK);
    ids.resize(n);
    pshard_generate_params gp = pshard_generate_default_params();
    gp.n_predict = 24;
    gp.temperature = 0;
    gp.top_logprobs = 1;
    std::pair<std::vector<pshard_token>, std::vector<float>> out;
    auto collect = [](const pshard_token_event* e, void* user) {
      auto* o = static_cast<std::pair<std::vector<pshard_token>, std::vector<float>>*>(user);
      if (e->token >= 0) {
        o->first.push_back(e->token);
        o->second.push_back(e->top_logprobs[0]);
      }
      return true;
    };
    EXPECT_EQ(pshard_context_generate(c, ids.data(), ids.size(), &gp, collect, &out, nullptr),
              PSHARD_OK);
    pshard_context_free(c);
    return out;
  };
  const size_t full = sizeof(pshard_batch_params);
  const auto q8 = in_batch(PSHARD_KV_Q8_0, PSHARD_KV_Q8_0, full);
  EXPECT_EQ(q8, in_context(PSHARD_KV_Q8_0, PSHARD_KV_Q8_0));
  const auto f16 = in_batch(PSHARD_KV_DEFAULT, PSHARD_KV_DEFAULT, full);
  EXPECT_EQ(f16, in_context(PSHARD_KV_F16, PSHARD_KV_F16));
  EXPECT_NE(q8.second, f16.second) << "the Q8_0 cache is in force";
  const auto mixed = in_batch(PSHARD_KV_F32, PSHARD_KV_Q8_0, full);
  EXPECT_EQ(mixed, in_context(PSHARD_KV_F32, PSHARD_KV_Q8_0));
  // An older caller's struct ends before the fields: the default (F16), whatever they hold.
  EXPECT_EQ(in_batch(PSHARD_KV_Q8_0, PSHARD_KV_Q8_0, offsetof(pshard_batch_params, kv_type_k)),
            f16);

  pshard_batch_params bad = pshard_batch_default_params();
  bad.kv_type_v = static_cast<pshard_kv_type>(2);
  pshard_batch* b = nullptr;
  EXPECT_EQ(pshard_batch_create(model.m, &bad, &b), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("not a KV cache type"), std::string::npos)
      << pshard_last_error();
}

// One thread steps; others add, cancel, free and change the budget, all at once.
TEST(CApiBatch, AddCancelFreeAndBudgetFromOtherThreadsWhileOneSteps) {
  SKIP_WITHOUT_MODEL();
  std::vector<uint64_t> budgets;
  const std::string schedule = schedule_file(&budgets);
  Model model(schedule.c_str());
  pshard_batch_params bp = pshard_batch_default_params();
  bp.backend = PSHARD_BACKEND_EMU;
  bp.vram_budget = budgets.back();
  bp.emu_pcie_gbps = 20;
  bp.n_seq_max = 3;
  bp.n_queue_max = 100;
  bp.n_threads = 1;
  bp.n_ctx = 128;
  bp.n_batch = 16;
  Batch batch(model.m, bp);
  std::atomic<bool> stop{false};
  std::thread stepper([&] {
    while (!stop) {
      if (pshard_batch_wait(batch.b, 5)) {
        EXPECT_EQ(pshard_batch_step(batch.b, nullptr), PSHARD_OK);
      }
    }
  });
  constexpr int kClients = 3, kEach = 4;
  std::vector<Stream> streams(kClients * kEach);
  std::vector<std::thread> clients;
  std::atomic<int> freed_early{0};
  for (int c = 0; c < kClients; ++c)
    clients.emplace_back([&, c] {
      for (int i = 0; i < kEach; ++i) {
        Stream& s = streams[c * kEach + i];
        pshard_seq* seq = add_text(batch.b, "Once upon a time", 16, &s);
        if (i == 1)
          pshard_seq_cancel(seq);
        if (i == 2) { // freed while it runs: no callback after free returns
          pshard_seq_free(seq);
          ++freed_early;
          continue;
        }
        while (pshard_seq_finish_reason(seq) == PSHARD_FINISH_NONE)
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        pshard_seq_free(seq);
      }
    });
  std::thread budget([&] {
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(pshard_batch_set_vram_budget(batch.b, budgets[i % budgets.size()]), PSHARD_OK)
          << pshard_last_error();
    EXPECT_EQ(pshard_batch_set_vram_budget(batch.b, budgets.front() / 2),
              PSHARD_ERROR_OUT_OF_MEMORY);
  });
  for (auto& t : clients)
    t.join();
  budget.join();
  while (pshard_batch_has_work(batch.b))
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  stop = true;
  stepper.join();

  for (size_t k = 0; k < streams.size(); ++k) {
    Stream& s = streams[k];
    std::lock_guard lock(s.mutex);
    const int i = static_cast<int>(k % kEach);
    if (i == 2) { // freed early: it either finished first or went quiet, never half-told
      EXPECT_LE(s.finals, 1);
      EXPECT_TRUE(std::equal(s.tokens.begin(), s.tokens.end(), kExpected.begin()));
      continue;
    }
    EXPECT_EQ(s.finals, 1) << "request " << k;
    if (i == 1 && s.finish == PSHARD_FINISH_CANCELLED) {
      EXPECT_TRUE(std::equal(s.tokens.begin(), s.tokens.end(), kExpected.begin()));
    } else {
      EXPECT_EQ(s.finish, PSHARD_FINISH_LENGTH) << s.error;
      EXPECT_EQ(s.tokens, kExpected) << "request " << k << ": plans change, tokens do not";
    }
  }
  pshard_batch_stats st = pshard_batch_stats_init();
  ASSERT_EQ(pshard_batch_get_stats(batch.b, &st), PSHARD_OK);
  EXPECT_EQ(st.requests_added, kClients * kEach);
  EXPECT_EQ(st.finished_stop + st.finished_length + st.finished_cancelled + st.finished_error,
            kClients * kEach);
  EXPECT_EQ(st.finished_error, 0);
  EXPECT_EQ(st.vram_budget, budgets[5 % budgets.size()]);
  EXPECT_GT(st.bytes_streamed, 0u);
  ASSERT_GE(st.n_plans, 1u);
  pshard_plan_stats ps = pshard_plan_stats_init();
  ASSERT_EQ(pshard_batch_get_plan_stats(batch.b, 0, &ps), PSHARD_OK);
  EXPECT_GT(ps.passes, 0);
  EXPECT_STREQ(ps.strategy, "gpu-only");
  EXPECT_EQ(pshard_batch_get_plan_stats(batch.b, st.n_plans, &ps), PSHARD_ERROR_OUT_OF_RANGE);
}

TEST(CApiBatch, SequencesMayOutliveTheirBatch) {
  SKIP_WITHOUT_MODEL();
  Model model;
  pshard_batch* b = nullptr;
  ASSERT_EQ(pshard_batch_create(model.m, nullptr, &b), PSHARD_OK);
  Stream s;
  pshard_seq* seq = add_text(b, "Once upon a time", 8, &s);
  ASSERT_EQ(pshard_batch_step(b, nullptr), PSHARD_OK);
  pshard_batch_free(b);
  pshard_seq_cancel(seq); // the batch is gone: nothing to cancel, nothing breaks
  EXPECT_EQ(pshard_seq_finish_reason(seq), PSHARD_FINISH_NONE);
  pshard_seq_free(seq);
  EXPECT_EQ(s.tokens.size(), 1u);
}

} // namespace
