// Helpers of the batch-invariance tests: a script of mixed-length prompts, each sequence
// decoded alone by a reference Decoder, and the same sequences driven through a
// BatchDecoder — every pass the decoding sequences' tokens first, then prompt chunks —
// recording every logits row.
#pragma once

#include "runtime/batch/batch_decoder.h"
#include "runtime/model/decoder.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <gtest/gtest.h>
#include <memory>
#include <random>
#include <vector>

namespace pshard::testing {

using Rows = std::vector<std::vector<std::vector<float>>>; // [sequence][step][vocab]

struct Script {
  std::vector<std::vector<TokenId>> prompts;
  int generate = 0;
};

inline Script make_script(int n_seq, int generate, int64_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  Script s;
  s.generate = generate;
  for (int i = 0; i < n_seq; ++i) {
    std::vector<TokenId> p(1 + rng() % 40);
    for (TokenId& t : p)
      t = static_cast<TokenId>(rng() % static_cast<uint32_t>(n_vocab));
    s.prompts.push_back(std::move(p));
  }
  return s;
}

inline TokenId batch_argmax(std::span<const float> l) {
  return static_cast<TokenId>(std::max_element(l.begin(), l.end()) - l.begin());
}

// Every sequence alone: the logits after its prompt and after each greedy token.
inline Rows alone(const std::function<Result<std::unique_ptr<Decoder>>()>& make, const Script& s) {
  Rows out;
  for (const auto& prompt : s.prompts) {
    auto session = make();
    EXPECT_TRUE(session.ok()) << session.status().to_string();
    if (!session.ok())
      return out;
    std::vector<std::vector<float>> rows;
    auto l = (*session)->decode(prompt);
    EXPECT_TRUE(l.ok()) << l.status().to_string();
    rows.emplace_back(l->begin(), l->end());
    for (int g = 1; g < s.generate; ++g) {
      const TokenId next = batch_argmax(rows.back());
      l = (*session)->decode(std::span<const TokenId>(&next, 1));
      EXPECT_TRUE(l.ok());
      rows.emplace_back(l->begin(), l->end());
    }
    out.push_back(std::move(rows));
  }
  return out;
}

// Each prompt of `base` followed by 1 to 24 more random tokens: prompts whose starts an
// engine's prefix cache holds after `base` ran.
inline Script extend_script(const Script& base, int64_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  Script s = base;
  for (auto& p : s.prompts)
    for (uint32_t i = 0, more = 1 + rng() % 24; i < more; ++i)
      p.push_back(static_cast<TokenId>(rng() % static_cast<uint32_t>(n_vocab)));
  return s;
}

// The same sequences batched: each pass takes every decoding sequence's one token first,
// then prompt chunks in order until `per_pass` tokens. With `reused`, sequences open with
// their prompts (BatchDecoder::open_sequence_with_prefix), skip what the engine's prefix
// cache holds, and *reused adds it up.
inline Rows batched(BatchDecoder& engine, const Script& s, int64_t per_pass,
                    int64_t* reused = nullptr) {
  const size_t n = s.prompts.size();
  std::vector<SeqId> ids(n);
  std::vector<std::deque<TokenId>> pending(n);
  Rows rows(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t skip = 0;
    if (reused) {
      auto opened = engine.open_sequence_with_prefix(s.prompts[i]);
      EXPECT_TRUE(opened.ok()) << opened.status().to_string();
      if (!opened.ok())
        return rows;
      ids[i] = opened->seq;
      skip = opened->reused;
      *reused += skip;
    } else {
      auto id = engine.open_sequence();
      EXPECT_TRUE(id.ok()) << id.status().to_string();
      ids[i] = *id;
    }
    pending[i].assign(s.prompts[i].begin() + skip, s.prompts[i].end());
  }
  auto done = [&](size_t i) { return static_cast<int>(rows[i].size()) == s.generate; };
  auto all_done = [&] {
    for (size_t i = 0; i < n; ++i)
      if (!done(i))
        return false;
    return true;
  };
  while (!all_done()) {
    std::vector<BatchEntry> pass;
    std::vector<size_t> row_owner;
    for (int phase = 0; phase < 2; ++phase)
      for (size_t i = 0; i < n && static_cast<int64_t>(pass.size()) < per_pass; ++i) {
        const bool decoding = !rows[i].empty();
        if (done(i) || pending[i].empty() || decoding != (phase == 0))
          continue;
        while (!pending[i].empty() && static_cast<int64_t>(pass.size()) < per_pass) {
          const bool last = pending[i].size() == 1;
          pass.push_back({ids[i], pending[i].front(), last});
          pending[i].pop_front();
          if (last)
            row_owner.push_back(i);
        }
      }
    auto out = engine.decode(pass);
    EXPECT_TRUE(out.ok()) << out.status().to_string();
    if (!out.ok())
      return rows;
    for (size_t r = 0; r < row_owner.size(); ++r) {
      const size_t i = row_owner[r];
      const auto row = out->row(static_cast<int64_t>(r));
      rows[i].emplace_back(row.begin(), row.end());
      if (!done(i))
        pending[i].push_back(batch_argmax(rows[i].back()));
    }
  }
  for (SeqId id : ids)
    engine.close_sequence(id);
  return rows;
}

// Every sequence's rows equal bit for bit; the message names the first difference.
inline ::testing::AssertionResult same_rows(const Rows& want, const Rows& got) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (i >= got.size() || got[i].size() != want[i].size())
      return ::testing::AssertionFailure() << "sequence " << i << " has another step count";
    for (size_t g = 0; g < want[i].size(); ++g)
      if (got[i][g] != want[i][g])
        return ::testing::AssertionFailure() << "sequence " << i << " step " << g << " differs";
  }
  return ::testing::AssertionSuccess();
}

} // namespace pshard::testing
