// What each sampler stage costs per token on a real vocabulary: finds the tokens holding
// DRY's default breakers once (what a model pays on its first DRY request), then samples
// from logits shaped like a model's (normal, a few strong candidates) with the default
// chain, with each stage added and in other orders, DRY over 4K- and 32K-token histories, and top-k
// off against what it cost when the whole vocabulary was sorted, printing medians of per-token
// microseconds and the ratio to the default chain, measured side by side in rounds.
//
//   build-test/tests/bench/sampler_bench ../shared/vocab/ggml-vocab-qwen2.gguf
#include "runtime/gguf/gguf_file.h"
#include "runtime/sampler/sampler.h"
#include "runtime/sampler/sampler_stages.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/tokens_containing.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

using namespace pshard;
using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Case {
  const char* name;
  std::function<void(SamplerParams&)> set;
  size_t history = 256;
};

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s VOCAB.gguf\n", argv[0]);
    return 2;
  }
  auto file = gguf::GgufFile::open(argv[1], gguf::OpenMode::kMetadataOnly);
  if (!file.ok()) {
    std::fprintf(stderr, "%s\n", file.status().to_string().c_str());
    return 1;
  }
  auto tokenizer = Tokenizer::from_gguf(**file);
  if (!tokenizer.ok()) {
    std::fprintf(stderr, "%s\n", tokenizer.status().to_string().c_str());
    return 1;
  }
  const Tokenizer& tok = **tokenizer;
  const auto n_vocab = static_cast<size_t>(tok.n_vocab());
  std::vector<double> breaker_ms;
  std::shared_ptr<const std::vector<bool>> breakers;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    breakers = std::make_shared<const std::vector<bool>>(
        tokens_containing(tok, default_dry_sequence_breakers()));
    breaker_ms.push_back(us_since(t0) / 1000);
  }
  size_t n_breakers = 0;
  for (bool b : *breakers)
    n_breakers += b;
  std::printf("%s: %zu tokens, %zu hold a default DRY breaker, found in %.2f ms (median of 5)\n",
              argv[1], n_vocab, n_breakers, median(breaker_ms));

  // A request's own breakers, one of which may span tokens (a character's name), are found
  // per request: the tokens holding one and those where one begins, in one pass.
  std::vector<double> spanning_ms;
  size_t n_starts = 0;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    n_starts = tokens_of_texts(tok, std::vector<std::string>{" Seraphina", "\n"}).starting.size();
    spanning_ms.push_back(us_since(t0) / 1000);
  }
  std::printf("breakers \" Seraphina\" and \\n: %zu tokens may begin the name, all found in "
              "%.2f ms (median of 5)\n",
              n_starts, median(spanning_ms));

  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<std::vector<float>> logits(16, std::vector<float>(n_vocab));
  for (auto& row : logits) {
    for (float& x : row)
      x = normal(rng);
    for (int k = 0; k < 8; ++k)
      row[rng() % n_vocab] += 12.0f - static_cast<float>(k);
  }
  // Histories that loop, as text a model repeats: a 64-token phrase over and over.
  std::vector<TokenId> history(32768);
  for (size_t i = 0; i < history.size(); ++i)
    history[i] = static_cast<TokenId>((i % 64) * 997 % n_vocab);

  const std::vector<Case> cases = {
      {"default (top-k 40, top-p 0.95, min-p 0.05, T 0.8)", [](SamplerParams&) {}},
      {"+ DRY, 4K history", [](SamplerParams& p) { p.dry.multiplier = 0.8f; }, 4096},
      {"+ DRY, 32K history", [](SamplerParams& p) { p.dry.multiplier = 0.8f; }, 32768},
      {"+ typical 0.9", [](SamplerParams& p) { p.typical_p = 0.9f; }},
      {"+ top-nsigma 1", [](SamplerParams& p) { p.top_n_sigma = 1.0f; }},
      {"+ XTC 0.5", [](SamplerParams& p) { p.xtc_probability = 0.5f; }},
      {"+ dynatemp 0.5", [](SamplerParams& p) { p.dynatemp_range = 0.5f; }},
      {"mirostat 2 (whole vocabulary)", [](SamplerParams& p) { p.mirostat = 2; }},
      {"mirostat 1 (whole vocabulary)", [](SamplerParams& p) { p.mirostat = 1; }},
      {"llama.cpp's order (temperature last)",
       [](SamplerParams& p) { p.order = llama_cpp_sampler_order(); }},
      {"top-k 0 (top-p 0.95, min-p 0.05)", [](SamplerParams& p) { p.top_k = 0; }},
      {"top-k 0, llama.cpp's order",
       [](SamplerParams& p) {
         p.top_k = 0;
         p.order = llama_cpp_sampler_order();
       }},
      {"top-k 0, min-p before top-p",
       [](SamplerParams& p) {
         p.top_k = 0;
         p.order = {SamplerStage::kTemperature, SamplerStage::kMinP, SamplerStage::kTopP};
       }},
      {"top-k 0, typical 0.9",
       [](SamplerParams& p) {
         p.top_k = 0;
         p.typical_p = 0.9f;
       }},
      {"top-k 0, top-p 1, min-p 0.1",
       [](SamplerParams& p) {
         p.top_k = 0;
         p.top_p = 1.0f;
         p.min_p = 0.1f;
       }},
      {"top-k 0, top-p 0.9, min-p 0",
       [](SamplerParams& p) {
         p.top_k = 0;
         p.top_p = 0.9f;
         p.min_p = 0.0f;
       }},
      {"top-k 0, top-p 1, min-p 0 (no cut)",
       [](SamplerParams& p) {
         p.top_k = 0;
         p.top_p = 1.0f;
         p.min_p = 0.0f;
       }},
  };
  // What every top-k 0 chain did before (the whole vocabulary sorted), side by side.
  std::vector<Candidate> scratch;
  Pcg32 reference_rng(3);
  auto sorted_whole = [&](std::span<const float> row) {
    scratch.clear();
    for (size_t i = 0; i < row.size(); ++i)
      scratch.push_back({static_cast<TokenId>(i), row[i], 0.0});
    sort_most_likely(scratch);
    softmax(scratch, 0.8);
    keep_top_p(scratch, 0.95f);
    keep_min_p(scratch, 0.05f);
    double total = 0;
    for (const Candidate& c : scratch)
      total += c.prob;
    return draw(scratch, total, reference_rng);
  };
  const int rounds = 5, per_round = 40;
  std::vector<std::vector<double>> us(cases.size());
  std::vector<double> reference_us;
  for (int r = 0; r < rounds; ++r) {
    const auto t_ref = Clock::now();
    for (int i = 0; i < per_round; ++i)
      sorted_whole(logits[static_cast<size_t>(i) % logits.size()]);
    reference_us.push_back(us_since(t_ref) / per_round);
    for (size_t c = 0; c < cases.size(); ++c) {
      SamplerParams p;
      p.seed = 3;
      p.dry_breakers = breakers;
      cases[c].set(p);
      Sampler s(p);
      const std::span<const TokenId> h(history.data(), cases[c].history);
      const auto t0 = Clock::now();
      for (int i = 0; i < per_round; ++i)
        s.sample(logits[static_cast<size_t>(i) % logits.size()], h);
      us[c].push_back(us_since(t0) / per_round);
    }
  }
  const double base = median(us[0]);
  std::printf("%-52s %10s %8s\n", "chain", "us/token", "ratio");
  for (size_t c = 0; c < cases.size(); ++c)
    std::printf("%-52s %10.1f %7.2fx\n", cases[c].name, median(us[c]), median(us[c]) / base);
  std::printf("%-52s %10.1f %7.2fx\n", "before: top-k 0 sorted the whole vocabulary",
              median(reference_us), median(reference_us) / base);
  return 0;
}
