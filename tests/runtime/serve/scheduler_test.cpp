// The scheduler against a scripted engine: outputs that do not depend on the batch,
// chunked prompts interleaved with decoding, FIFO admission, the bounded queue, cancel,
// stop conditions, logprobs, seeds, KV exhaustion and failed passes.
#include "runtime/serve/scheduler.h"
#include "tests/runtime/serve/fake_engine.h"
#include "tests/runtime/serve/scheduler_test_util.h"

#include <cmath>
#include <gtest/gtest.h>

namespace pshard::testing {
namespace {

struct Fixture {
  explicit Fixture(SchedulerOptions o = {}, int64_t max_seq = 8, int64_t pass = 64,
                   int64_t n_ctx = 128, int64_t page = 16, int64_t pages = 1000)
      : engine(max_seq, pass, n_ctx, page, pages), scheduler(engine, tokenizer, o) {}
  FakeEngine engine;
  FakeTokenizer tokenizer;
  Scheduler scheduler;
  Collector got;
};

TEST(Scheduler, EachRequestGetsItsOwnScriptWhateverSharesThePass) {
  Fixture f({.max_active = 4});
  const std::vector<std::vector<TokenId>> prompts = {{1, 2, 3}, {4}, {5, 6, 7, 8, 9, 10}, {2, 2}};
  std::vector<RequestId> ids;
  for (size_t i = 0; i < prompts.size(); ++i)
    ids.push_back(
        submit_ok(f.scheduler, greedy_request(prompts[i], 10 + static_cast<int>(i)), f.got.sink()));
  step_until_idle(f.scheduler);
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Collector::Run r = f.got.run(ids[i]);
    EXPECT_EQ(r.tokens, scripted_greedy(prompts[i], 10 + static_cast<int>(i))) << "request " << i;
    EXPECT_EQ(r.text, f.tokenizer.decode(r.tokens));
    EXPECT_EQ(r.finals, 1);
    EXPECT_EQ(r.finish, FinishReason::kLength);
    EXPECT_EQ(r.events.back().n_generated, 10 + static_cast<int64_t>(i));
  }
  EXPECT_EQ(f.engine.open_count(), 0) << "every sequence is closed when its request ends";
  // They really ran together: some pass carried all four.
  bool all_four = false;
  for (const auto& pass : f.engine.passes) {
    std::set<SeqId> seqs;
    for (const BatchEntry& e : pass)
      seqs.insert(e.seq);
    all_four |= seqs.size() == 4;
  }
  EXPECT_TRUE(all_four);
}

TEST(Scheduler, ALongPromptIsChunkedAroundTheOthersDecodeSteps) {
  Fixture f({.max_active = 2, .pass_tokens = 8});
  const RequestId a = submit_ok(f.scheduler, greedy_request({1, 2}, 30), f.got.sink());
  f.scheduler.step(); // a's prompt; a decodes from now on
  const SeqId sa = f.engine.passes[0][0].seq;
  std::vector<TokenId> long_prompt;
  for (int i = 0; i < 50; ++i)
    long_prompt.push_back(static_cast<TokenId>(1 + i % 29));
  const RequestId b = submit_ok(f.scheduler, greedy_request(long_prompt, 5), f.got.sink());
  const size_t first = f.engine.passes.size();
  step_until_idle(f.scheduler);
  // While b's prompt was read, 7 tokens a pass, every pass also carried a's next token.
  int64_t b_prompt = 0;
  int prompt_passes = 0;
  for (size_t p = first; p < f.engine.passes.size() && b_prompt < 50; ++p) {
    const auto& pass = f.engine.passes[p];
    const auto a_entries =
        std::count_if(pass.begin(), pass.end(), [&](const BatchEntry& e) { return e.seq == sa; });
    EXPECT_EQ(a_entries, 1) << "pass " << p;
    EXPECT_LE(pass.size(), 8u);
    b_prompt += static_cast<int64_t>(pass.size()) - a_entries;
    ++prompt_passes;
  }
  EXPECT_EQ(prompt_passes, 8) << "50 prompt tokens in chunks of 7";
  EXPECT_EQ(f.got.run(a).tokens, scripted_greedy({1, 2}, 30));
  EXPECT_EQ(f.got.run(b).tokens, scripted_greedy(long_prompt, 5));
}

TEST(Scheduler, AdmissionIsFirstComeFirstServed) {
  Fixture f({.max_active = 1, .max_queued = 8});
  std::vector<RequestId> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(
        submit_ok(f.scheduler, greedy_request({static_cast<TokenId>(i + 1)}, 3), f.got.sink()));
  std::vector<RequestId> finish_order;
  while (f.scheduler.wait_for_work(std::chrono::milliseconds(0))) {
    f.scheduler.step();
    for (RequestId id : ids)
      if (f.got.run(id).finals &&
          std::find(finish_order.begin(), finish_order.end(), id) == finish_order.end())
        finish_order.push_back(id);
    EXPECT_LE(f.engine.open_count(), 1);
  }
  EXPECT_EQ(finish_order, ids);
  for (size_t i = 1; i < ids.size(); ++i)
    EXPECT_GT(f.got.run(ids[i]).events.back().timings.queued_ms, 0.0);
}

TEST(Scheduler, AFullQueueRefusesWithUnavailableAndRecovers) {
  Fixture f({.max_active = 1, .max_queued = 1});
  submit_ok(f.scheduler, greedy_request({1}, 4), f.got.sink());
  submit_ok(f.scheduler, greedy_request({2}, 4), f.got.sink());
  auto third = f.scheduler.submit(greedy_request({3}, 4), f.got.sink());
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(third.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(third.status().message().find("--queue"), std::string::npos)
      << third.status().message();
  EXPECT_EQ(f.scheduler.stats().refused, 1);
  step_until_idle(f.scheduler);
  EXPECT_EQ(f.got.finished(), 2u);
  EXPECT_TRUE(f.scheduler.submit(greedy_request({3}, 4), f.got.sink()).ok());
}

TEST(Scheduler, RequestsThatCanNeverRunAreRefusedAtSubmit) {
  Fixture f({}, 8, 64, /*n_ctx=*/16);
  auto too_long = f.scheduler.submit(greedy_request(std::vector<TokenId>(17, 1), 1), {});
  EXPECT_EQ(too_long.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(too_long.status().message().find("context of 16"), std::string::npos);
  auto past = f.scheduler.submit(greedy_request(std::vector<TokenId>(10, 1), 7), {});
  EXPECT_EQ(past.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(past.status().message().find("at most 6 new tokens"), std::string::npos);
  EXPECT_FALSE(f.scheduler.submit(greedy_request({}, 1), {}).ok());
  EXPECT_FALSE(f.scheduler.submit(greedy_request({kFakeVocab}, 1), {}).ok());
  RequestParams bad = greedy_request({1}, 1);
  bad.sampling.top_p = 2;
  EXPECT_EQ(f.scheduler.submit(bad, {}).status().code(), StatusCode::kInvalidArgument);
  RequestParams empty_stop = greedy_request({1}, 1);
  empty_stop.stop_strings = {""};
  EXPECT_FALSE(f.scheduler.submit(empty_stop, {}).ok());
  EXPECT_EQ(f.scheduler.stats().refused, 6);
  EXPECT_FALSE(f.scheduler.wait_for_work(std::chrono::milliseconds(0)));
}

// Images must lie in the prompt in order, without overlapping, with a row per token.
TEST(Scheduler, ImagesThatDoNotFitThePromptAreRefusedAtSubmit) {
  Fixture f({}, 8, 64, /*n_ctx=*/32);
  auto with_images = [](std::vector<ImageSpan> spans) {
    RequestParams r = greedy_request(std::vector<TokenId>(10, 1), 1);
    auto images = std::make_shared<PromptImages>();
    for (const ImageSpan& s : spans) {
      images->spans.push_back(s);
      PromptImage image;
      image.n_embd = 2;
      image.rows.resize(static_cast<size_t>(2 * s.n_tokens()));
      images->images.push_back(std::move(image));
    }
    r.images = std::move(images);
    return r;
  };
  const auto refused = [&](const RequestParams& r, const std::string& says) {
    const Status st = f.scheduler.submit(r, {}).status();
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << st.to_string();
    EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
  };
  refused(with_images({{1, 2, 2}, {4, 1, 1}}), "in order, each inside it");   // overlapping
  refused(with_images({{6, 1, 1}, {1, 2, 2}}), "in order, each inside it");   // out of order
  refused(with_images({{8, 2, 2}}), "do not lie in the prompt of 10 tokens"); // past the end
  RequestParams short_rows = with_images({{1, 2, 2}, {6, 2, 1}});
  auto images = std::make_shared<PromptImages>(*short_rows.images);
  images->images[1].rows.pop_back();
  short_rows.images = images;
  refused(short_rows, "image 1 (2 x 1 tokens at position 6) does not have one embedding row");
  EXPECT_TRUE(f.scheduler.submit(with_images({{1, 2, 2}, {5, 2, 1}, {7, 1, 3}}), {}).ok());
}

TEST(Scheduler, ARequestWithoutMaxTokensEndsWhenTheContextIsFull) {
  Fixture f({}, 8, 64, /*n_ctx=*/12);
  const RequestId id = submit_ok(f.scheduler, greedy_request({1, 2, 3, 4}, -1), f.got.sink());
  step_until_idle(f.scheduler);
  // 8 positions left, and the token sampled at the last position needs none.
  EXPECT_EQ(f.got.run(id).tokens, scripted_greedy({1, 2, 3, 4}, 9));
  EXPECT_EQ(f.got.run(id).finish, FinishReason::kLength);
}

TEST(Scheduler, CancelEndsQueuedAndRunningRequestsOnce) {
  Fixture f({.max_active = 1, .max_queued = 4});
  const RequestId running = submit_ok(f.scheduler, greedy_request({1}, 50), f.got.sink());
  const RequestId queued = submit_ok(f.scheduler, greedy_request({2}, 50), f.got.sink());
  const RequestId after = submit_ok(f.scheduler, greedy_request({3}, 2), f.got.sink());
  f.scheduler.step();
  f.scheduler.step();
  f.scheduler.cancel(running);
  f.scheduler.cancel(queued);
  f.scheduler.cancel(12345); // unknown: ignored
  step_until_idle(f.scheduler);
  EXPECT_EQ(f.got.run(running).finish, FinishReason::kCancelled);
  EXPECT_EQ(f.got.run(running).finals, 1);
  EXPECT_EQ(f.got.run(running).tokens.size(), 2u);
  EXPECT_EQ(f.got.run(queued).finish, FinishReason::kCancelled);
  EXPECT_TRUE(f.got.run(queued).tokens.empty());
  EXPECT_EQ(f.got.run(after).tokens, scripted_greedy({3}, 2));
  f.scheduler.cancel(running); // finished: ignored
  EXPECT_FALSE(f.scheduler.wait_for_work(std::chrono::milliseconds(0)));
  const SchedulerStats st = f.scheduler.stats();
  EXPECT_EQ(st.finished[static_cast<int>(FinishReason::kCancelled)], 2);
  EXPECT_EQ(st.finished[static_cast<int>(FinishReason::kLength)], 1);
  EXPECT_EQ(f.engine.open_count(), 0);
}

TEST(Scheduler, ASinkReturningFalseCancelsItsRequest) {
  Fixture f;
  std::vector<FinishReason> seen;
  submit_ok(f.scheduler, greedy_request({1}, 40), [&](const SequenceEvent& e) {
    seen.push_back(e.finish);
    return e.n_generated < 3; // the client went away after three tokens
  });
  const RequestId other = submit_ok(f.scheduler, greedy_request({2}, 6), f.got.sink());
  step_until_idle(f.scheduler);
  EXPECT_EQ(seen, (std::vector<FinishReason>{FinishReason::kNone, FinishReason::kNone,
                                             FinishReason::kNone, FinishReason::kCancelled}));
  EXPECT_EQ(f.got.run(other).tokens, scripted_greedy({2}, 6));
  EXPECT_EQ(f.engine.open_count(), 0);
}

TEST(Scheduler, StopStringsStopTokensAndEndOfGeneration) {
  Fixture f;
  // The script after {1}: find where two known letters follow each other.
  const std::vector<TokenId> script = scripted_greedy({1}, 12);
  const std::string text = f.tokenizer.decode(script);
  RequestParams by_string = greedy_request({1}, 12);
  by_string.stop_strings = {"zzzz", text.substr(5, 2)};
  const RequestId s = submit_ok(f.scheduler, by_string, f.got.sink());
  RequestParams by_token = greedy_request({1}, 12);
  by_token.stop_tokens = {script[3]};
  const RequestId t = submit_ok(f.scheduler, by_token, f.got.sink());
  step_until_idle(f.scheduler);
  const size_t cut = text.find(text.substr(5, 2));
  EXPECT_EQ(f.got.run(s).text, text.substr(0, cut));
  EXPECT_EQ(f.got.run(s).finish, FinishReason::kStop);
  const size_t first_stop = std::find(script.begin(), script.end(), script[3]) - script.begin();
  EXPECT_EQ(f.got.run(t).tokens, std::vector<TokenId>(script.begin(), script.begin() + first_stop));
  EXPECT_EQ(f.got.run(t).finish, FinishReason::kStop);

  // EOS ends a request unless ignore_eos.
  f.engine.next = [](const std::vector<TokenId>& h) {
    return h.size() >= 4 ? kFakeEos : TokenId{3};
  };
  const RequestId eos = submit_ok(f.scheduler, greedy_request({1, 1}, 10), f.got.sink());
  RequestParams ignoring = greedy_request({1, 1}, 5);
  ignoring.ignore_eos = true;
  const RequestId ign = submit_ok(f.scheduler, ignoring, f.got.sink());
  step_until_idle(f.scheduler);
  EXPECT_EQ(f.got.run(eos).tokens, (std::vector<TokenId>{3, 3}));
  EXPECT_EQ(f.got.run(eos).finish, FinishReason::kStop);
  EXPECT_EQ(f.got.run(ign).tokens.size(), 5u);
  EXPECT_EQ(f.got.run(ign).finish, FinishReason::kLength);
}

TEST(Scheduler, AStopStringIsNeverShownEvenInPart) {
  Fixture f;
  f.engine.next = [](const std::vector<TokenId>& h) {
    static const TokenId word[] = {0, 1, 2, 0, 1, 3}; // "abcabd"
    return word[(h.size() - 1) % 6];
  };
  RequestParams r = greedy_request({4}, 6);
  r.stop_strings = {"abd"};
  std::vector<std::string> pieces;
  submit_ok(f.scheduler, r, [&](const SequenceEvent& e) {
    pieces.push_back(e.text);
    return true;
  });
  step_until_idle(f.scheduler);
  // "ab" is held back until "c" shows it is not "abd"; the second "ab" never shows.
  EXPECT_EQ(pieces, (std::vector<std::string>{"", "", "abc", "", "", ""}));
}

TEST(Scheduler, LogprobsAreTheLogSoftmaxOfTheRowSampled) {
  Fixture f;
  RequestParams r = greedy_request({1, 2}, 3);
  r.top_logprobs = 3;
  const RequestId id = submit_ok(f.scheduler, r, f.got.sink());
  step_until_idle(f.scheduler);
  const auto& events = f.got.run(id).events;
  ASSERT_EQ(events.size(), 3u);
  for (const SequenceEvent& e : events) {
    ASSERT_EQ(e.top.size(), 3u);
    EXPECT_EQ(e.top[0].id, e.token) << "greedy takes the most likely";
    EXPECT_FLOAT_EQ(e.top[0].logprob, e.logprob);
    EXPECT_GT(e.top[0].logprob, e.top[1].logprob);
    EXPECT_GE(e.top[1].logprob, e.top[2].logprob);
    // The fake's row: 5 - 0.5 |t - peak|; its log-softmax at the peak.
    double z = 0;
    for (int t = 0; t < kFakeVocab; ++t)
      z += std::exp(5.0 - 0.5 * std::abs(t - e.token));
    EXPECT_NEAR(e.logprob, 5.0 - std::log(z), 1e-5);
  }
}

TEST(Scheduler, SeededSamplingIsTheSameAloneAndInABusyBatch) {
  auto sampled = [](uint64_t seed, bool busy) {
    Fixture f({.max_active = 4});
    if (busy)
      for (int i = 0; i < 3; ++i) {
        RequestParams noise = greedy_request({static_cast<TokenId>(5 + i)}, 20);
        noise.sampling.temperature = 1.0f;
        noise.sampling.seed = 99 + i;
        submit_ok(f.scheduler, noise, {});
      }
    RequestParams r = greedy_request({1, 2, 3}, 20);
    r.sampling.temperature = 1.5f;
    r.sampling.top_k = 0;
    r.sampling.min_p = 0;
    r.sampling.seed = seed;
    const RequestId id = submit_ok(f.scheduler, r, f.got.sink());
    step_until_idle(f.scheduler);
    return f.got.run(id).tokens;
  };
  EXPECT_EQ(sampled(7, false), sampled(7, true));
  EXPECT_NE(sampled(7, false), sampled(8, false));
  EXPECT_NE(sampled(7, false), scripted_greedy({1, 2, 3}, 20)) << "the draws really sample";
}

TEST(Scheduler, DecodersBeyondTheBudgetTakeTurnsAndPromptsStillGetIn) {
  Fixture f({.max_active = 4, .pass_tokens = 2});
  std::vector<RequestId> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(
        submit_ok(f.scheduler, greedy_request({static_cast<TokenId>(i + 1)}, 8), f.got.sink()));
  step_until_idle(f.scheduler);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(f.got.run(ids[i]).tokens, scripted_greedy({static_cast<TokenId>(i + 1)}, 8));
  // All four are in within a few passes although two decoders could fill every pass...
  std::map<SeqId, size_t> first_seen, last_seen;
  for (size_t p = 0; p < f.engine.passes.size(); ++p)
    for (const BatchEntry& e : f.engine.passes[p])
      first_seen.try_emplace(e.seq, p);
  size_t all_in = 0;
  for (const auto& [seq, p] : first_seen)
    all_in = std::max(all_in, p);
  EXPECT_LE(all_in, 4u);
  // ...and once the turns settle no decoder waits more than two passes for its turn.
  for (size_t p = 0; p < f.engine.passes.size(); ++p) {
    EXPECT_LE(f.engine.passes[p].size(), 2u);
    for (const BatchEntry& e : f.engine.passes[p]) {
      if (p > all_in + 2 && last_seen.count(e.seq)) {
        EXPECT_LE(p - last_seen[e.seq], 2u) << "sequence " << e.seq << " at pass " << p;
      }
      last_seen[e.seq] = p;
    }
  }
}

TEST(Scheduler, ARequestWaitsForKvSpaceThenRunsUnchanged) {
  // 5 pages of 4 tokens: a (8 + 8) takes up to 4; b's prompt of 16 needs 4 of its own.
  Fixture f({.max_active = 2}, 8, 64, 64, /*page=*/4, /*pages=*/5);
  const std::vector<TokenId> pa(8, 2), pb(16, 3);
  const RequestId a = submit_ok(f.scheduler, greedy_request(pa, 8), f.got.sink());
  f.scheduler.step();
  const RequestId b = submit_ok(f.scheduler, greedy_request(pb, 4), f.got.sink());
  f.scheduler.step();
  EXPECT_EQ(f.scheduler.stats().queued, 1) << "b waits for pages";
  EXPECT_EQ(f.scheduler.stats().active, 1);
  step_until_idle(f.scheduler);
  EXPECT_EQ(f.got.run(a).tokens, scripted_greedy(pa, 8));
  EXPECT_EQ(f.got.run(b).tokens, scripted_greedy(pb, 4));
  EXPECT_EQ(f.got.run(b).finish, FinishReason::kLength);
  EXPECT_EQ(f.engine.open_count(), 0);
}

TEST(Scheduler, WhenPagesRunOutTheNewestEndsAndTheOthersFinish) {
  // Both prompts fit (2 pages each of 5), but both generations cannot.
  Fixture f({.max_active = 2}, 8, 64, 64, /*page=*/4, /*pages=*/5);
  const std::vector<TokenId> pa(8, 2), pb(8, 3);
  const RequestId a = submit_ok(f.scheduler, greedy_request(pa, 12), f.got.sink());
  const RequestId b = submit_ok(f.scheduler, greedy_request(pb, 12), f.got.sink());
  step_until_idle(f.scheduler);
  EXPECT_EQ(f.got.run(a).tokens, scripted_greedy(pa, 12));
  EXPECT_EQ(f.got.run(b).finish, FinishReason::kError);
  EXPECT_EQ(f.got.run(b).error.code(), StatusCode::kOutOfMemory);
  EXPECT_NE(f.got.run(b).error.message().find("newest"), std::string::npos);
  const std::vector<TokenId> want_b = scripted_greedy(pb, 12);
  const auto got_b = f.got.run(b).tokens;
  EXPECT_TRUE(std::equal(got_b.begin(), got_b.end(), want_b.begin()));
  // A prompt that does not fit even alone is an error at admission.
  const RequestId huge =
      submit_ok(f.scheduler, greedy_request(std::vector<TokenId>(30, 1), 1), f.got.sink());
  step_until_idle(f.scheduler);
  EXPECT_EQ(f.got.run(huge).finish, FinishReason::kError);
  EXPECT_NE(f.got.run(huge).error.message().find("no room for a prompt of 30"), std::string::npos)
      << f.got.run(huge).error.message();
}

TEST(Scheduler, AFailedPassEndsItsRequestsAndServingGoesOn) {
  Fixture f({.max_active = 2});
  const RequestId a = submit_ok(f.scheduler, greedy_request({1}, 5), f.got.sink());
  f.scheduler.step();
  f.engine.fail_next = Status(StatusCode::kDeviceError, "fake: the device fell off the bus");
  f.scheduler.step();
  EXPECT_EQ(f.got.run(a).finish, FinishReason::kError);
  EXPECT_NE(f.got.run(a).error.message().find("fell off"), std::string::npos);
  EXPECT_EQ(f.engine.open_count(), 0);
  const RequestId b = submit_ok(f.scheduler, greedy_request({1}, 5), f.got.sink());
  step_until_idle(f.scheduler);
  EXPECT_EQ(f.got.run(b).tokens, scripted_greedy({1}, 5));
}

TEST(Scheduler, StatsCountTokensPassesAndPages) {
  Fixture f({.max_active = 2});
  submit_ok(f.scheduler, greedy_request({1, 2, 3}, 4), f.got.sink());
  submit_ok(f.scheduler, greedy_request({4, 5}, 6), f.got.sink());
  f.scheduler.step();
  SchedulerStats mid = f.scheduler.stats();
  EXPECT_EQ(mid.active, 2);
  EXPECT_EQ(mid.kv.used_pages, 2);
  step_until_idle(f.scheduler);
  const SchedulerStats st = f.scheduler.stats();
  EXPECT_EQ(st.prompt_tokens, 5);
  EXPECT_EQ(st.generated_tokens, 10);
  EXPECT_EQ(st.passes, static_cast<int64_t>(f.engine.passes.size()));
  EXPECT_EQ(st.submitted, 2);
  EXPECT_EQ(st.active, 0);
  EXPECT_EQ(st.kv.used_pages, 0);
  EXPECT_GT(st.generated_tokens_per_s, 0);
}

TEST(Scheduler, ABudgetChangeWithoutAStepperIsAppliedAtOnce) {
  Fixture f;
  ASSERT_TRUE(f.scheduler.set_vram_budget(123).ok());
  EXPECT_EQ(f.engine.budget, 123u);
  f.scheduler.step(); // nothing to run; publishes the engine's statistics
  EXPECT_EQ(f.scheduler.stats().engine.vram_budget, 123u);
}

} // namespace
} // namespace pshard::testing

namespace pshard::testing {
namespace {

TEST(Scheduler, CancelAllEndsEverythingAndDestructionClosesWhatRuns) {
  FakeEngine engine(4, 64, 128, 16, 1000);
  FakeTokenizer tokenizer;
  Collector got;
  {
    Scheduler s(engine, tokenizer, {.max_active = 2, .max_queued = 4});
    std::vector<RequestId> ids;
    for (int i = 0; i < 4; ++i)
      ids.push_back(submit_ok(s, greedy_request({1}, 50), got.sink()));
    s.step();
    s.cancel_all();
    step_until_idle(s);
    for (RequestId id : ids) {
      EXPECT_EQ(got.run(id).finish, FinishReason::kCancelled);
      EXPECT_EQ(got.run(id).finals, 1);
    }
    EXPECT_EQ(engine.open_count(), 0);
    submit_ok(s, greedy_request({2}, 50), got.sink());
    s.step();
    EXPECT_EQ(engine.open_count(), 1);
  } // destroyed while a request runs: its sequence is closed, no event
  EXPECT_EQ(engine.open_count(), 0);
  EXPECT_EQ(got.finished(), 4u);
}

} // namespace
} // namespace pshard::testing
