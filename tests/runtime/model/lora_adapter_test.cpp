// LoRA adapters merged at load (lora_adapter.h): each updated matrix holds W + s·B·A,
// s = scale · alpha / rank, checked against the sum computed here in double — to float
// rounding for F32 weights, to the type's rounding for Q8_0 ones; two adapters add up;
// the model answers otherwise than without; the file on disk, and a model loaded without
// adapters, stay as they were. Adapters that do not fit are refused, naming why, before
// any weight changes.
#include "runtime/gguf/gguf_writer.h"
#include "runtime/kernels/quantize.h"
#include "runtime/model/model.h"
#include "runtime/schedule/model_fingerprint.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <numeric>

namespace pshard {
namespace {

std::string temp(const std::string& name) { return ::testing::TempDir() + "/" + name; }

std::string base_model(const std::string& name, TensorType type) {
  ModelSpec s;
  s.n_embd = 64;
  s.n_head = 4;
  s.n_head_kv = 2;
  s.n_ff = 128;
  s.n_layer = 2;
  s.type = type;
  const std::string path = temp(name + ".gguf");
  EXPECT_TRUE(write_model(s, path).ok());
  return path;
}

struct Update {
  std::string name;
  int64_t n_in, n_out, rank;
};

// A(k, i) and B(o, k) of an update, values the test can recompute.
float a_value(const Update& u, int64_t k, int64_t i) {
  return 0.15f * std::sin(0.7f * static_cast<float>(k * u.n_in + i) + u.n_in);
}
float b_value(const Update& u, int64_t o, int64_t k) {
  return 0.15f * std::cos(0.3f * static_cast<float>(o * u.rank + k) + u.n_out);
}

std::string adapter(const std::string& name, const std::vector<Update>& updates, float alpha,
                    const std::string& arch = "llama") {
  gguf::GgufWriter w;
  w.set("general.architecture", {arch});
  w.set("general.type", {std::string("adapter")});
  w.set("adapter.type", {std::string("lora")});
  w.set("adapter.lora.alpha", {alpha});
  for (const Update& u : updates) {
    auto fill = [](std::span<uint8_t> out, int64_t rows, int64_t cols, auto value) {
      std::vector<float> v;
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
          v.push_back(value(r, c));
      std::memcpy(out.data(), v.data(), out.size());
      return Status::ok_status();
    };
    EXPECT_TRUE(w.add_tensor(u.name + ".lora_a", TensorType::kF32, {u.n_in, u.rank},
                             [=](std::span<uint8_t> out) {
                               return fill(out, u.rank, u.n_in,
                                           [&](int64_t k, int64_t i) { return a_value(u, k, i); });
                             })
                    .ok());
    EXPECT_TRUE(w.add_tensor(u.name + ".lora_b", TensorType::kF32, {u.rank, u.n_out},
                             [=](std::span<uint8_t> out) {
                               return fill(out, u.n_out, u.rank,
                                           [&](int64_t o, int64_t k) { return b_value(u, o, k); });
                             })
                    .ok());
  }
  const std::string path = temp(name + ".gguf");
  EXPECT_TRUE(w.write(path).ok());
  return path;
}

std::vector<float> weights_of(const Model& m, const std::string& name) {
  const gguf::TensorInfo* t = m.file().find_tensor(name);
  EXPECT_NE(t, nullptr) << name;
  std::vector<float> out(static_cast<size_t>(t->n_values()));
  const size_t row_bytes = tensor_row_bytes(t->type, t->dims[0]);
  for (int64_t r = 0; r < t->dims[1]; ++r)
    dequantize_row(t->type, m.file().tensor_data(*t) + r * row_bytes, out.data() + r * t->dims[0],
                   t->dims[0]);
  return out;
}

std::vector<float> logits(const Model& m) {
  auto s = CpuSession::create(m, {64, 1, 16});
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  std::vector<TokenId> ids(12);
  std::iota(ids.begin(), ids.end(), TokenId{7});
  auto out = (*s)->decode(ids);
  EXPECT_TRUE(out.ok());
  return out.ok() ? std::vector<float>(out->begin(), out->end()) : std::vector<float>{};
}

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), {}};
}

const std::vector<Update> kUpdates = {{"blk.0.attn_q.weight", 64, 64, 4},
                                      {"blk.1.ffn_down.weight", 128, 64, 4}};

// `q8`: the weights are Q8_0, so each value may sit up to half its block's step (the
// block's largest magnitude / 127, itself stored as F16) from the exact sum; else within
// float rounding.
void expect_merged(TensorType type, bool q8) {
  const std::string base = base_model(std::string("lora_base_") + tensor_type_name(type), type);
  const std::string lora = adapter("lora_ab", kUpdates, /*alpha=*/8.0f);
  const std::string before = file_bytes(base);
  auto plain = Model::load(base);
  const LoraAdapter a{lora, 0.5f};
  auto merged = Model::load(base, gguf::OpenMode::kMapData, {}, {&a, 1});
  ASSERT_TRUE(plain.ok() && merged.ok()) << merged.status().to_string();
  const double s = 0.5 * 8.0 / 4.0; // scale · alpha / rank
  for (const Update& u : kUpdates) {
    SCOPED_TRACE(u.name);
    const std::vector<float> w0 = weights_of(**plain, u.name), w1 = weights_of(**merged, u.name);
    std::vector<double> want(w0.size());
    double moved = 0;
    for (int64_t o = 0; o < u.n_out; ++o)
      for (int64_t i = 0; i < u.n_in; ++i) {
        double delta = 0;
        for (int64_t k = 0; k < u.rank; ++k)
          delta += double(b_value(u, o, k)) * a_value(u, k, i);
        want[static_cast<size_t>(o * u.n_in + i)] =
            w0[static_cast<size_t>(o * u.n_in + i)] + s * delta;
        moved = std::max(moved, std::abs(s * delta));
      }
    int64_t off = 0;
    for (size_t b = 0; b < want.size(); b += 32) {
      double block_max = 0;
      for (size_t j = b; j < b + 32; ++j)
        block_max = std::max(block_max, std::abs(want[j]));
      // Half a step, and the step's own rounding to F16 (2^-11 of up to 127 steps).
      const double allowed = q8 ? block_max / 127 * (0.5 + 127.0 / 2048) + 1e-6
                                : 1e-6 * (1 + block_max);
      for (size_t j = b; j < b + 32; ++j)
        off += std::abs(w1[j] - want[j]) > allowed;
    }
    EXPECT_EQ(off, 0) << "values off the exact sum by more than the type's rounding";
    EXPECT_GT(moved, 0.01) << "the update is large enough to be seen";
  }
  // An untouched matrix is the file's.
  EXPECT_EQ(weights_of(**merged, "blk.1.attn_q.weight"),
            weights_of(**plain, "blk.1.attn_q.weight"));
  EXPECT_NE(logits(**merged), logits(**plain));
  // The file and its fingerprint are as they were; a model loaded afterwards without
  // the adapter is the plain one.
  EXPECT_EQ(file_bytes(base), before);
  EXPECT_EQ(model_fingerprint((*merged)->file()), model_fingerprint((*plain)->file()));
  auto again = Model::load(base);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(logits(**again), logits(**plain));
}

TEST(LoraAdapter, F32MatricesHoldTheUpdateToFloatRounding) {
  expect_merged(TensorType::kF32, false);
}

TEST(LoraAdapter, Q8MatricesHoldItToTheirRounding) { expect_merged(TensorType::kQ8_0, true); }

TEST(LoraAdapter, TwoAdaptersAddUp) {
  const std::string base = base_model("lora_base_sum", TensorType::kF32);
  const std::string lora = adapter("lora_sum", kUpdates, 0.0f); // no alpha: s = scale
  const LoraAdapter halves[] = {{lora, 0.5f}, {lora, 0.5f}};
  const LoraAdapter whole{lora, 1.0f};
  auto two = Model::load(base, gguf::OpenMode::kMapData, {}, halves);
  auto one = Model::load(base, gguf::OpenMode::kMapData, {}, {&whole, 1});
  ASSERT_TRUE(two.ok() && one.ok());
  const std::vector<float> a = weights_of(**two, kUpdates[0].name),
                           b = weights_of(**one, kUpdates[0].name);
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_NEAR(a[i], b[i], 1e-6f) << i;
}

TEST(LoraAdapter, WhatDoesNotFitIsRefusedNamingIt) {
  const std::string base = base_model("lora_base_bad", TensorType::kF32);
  auto refused = [&](const std::string& path, const std::string& says) {
    const LoraAdapter a{path, 1.0f};
    auto m = Model::load(base, gguf::OpenMode::kMapData, {}, {&a, 1});
    ASSERT_FALSE(m.ok()) << path;
    EXPECT_NE(m.status().message().find(says), std::string::npos) << m.status().to_string();
  };
  refused(adapter("lora_qwen3", kUpdates, 8, "qwen3"), "qwen3 model");
  refused(adapter("lora_missing", {{"blk.9.attn_q.weight", 64, 64, 4}}, 8), "lacks");
  refused(adapter("lora_shape", {{"blk.0.attn_q.weight", 64, 32, 4}}, 8), "64 x 64");
  refused(adapter("lora_embd", {{"token_embd.weight", 64, 512, 4}}, 8), "token embedding");
  refused(base, "not a LoRA adapter");
  refused(temp("no_such_adapter.gguf"), "no_such_adapter");
  // A refusal changes no weight: the same base then loads as it is.
  const LoraAdapter good{adapter("lora_good", kUpdates, 8), 1.0f};
  const LoraAdapter both[] = {good, {temp("no_such_adapter.gguf"), 1.0f}};
  ASSERT_FALSE(Model::load(base, gguf::OpenMode::kMapData, {}, both).ok());
}

} // namespace
} // namespace pshard
