// What tokenizing costs: for each vocabulary file given (any kind pshard reads), the time
// to build its tokenizer from the file's metadata and to encode a multilingual text of
// about 64 KB, medians of 7 runs, in MB/s and tokens/s. With --unigram N it also builds
// an in-memory SentencePiece Unigram vocabulary of N pieces (XLM-RoBERTa has 250,002)
// from the text's own substrings, since no real one of that size is here.
//
//   build-test/tests/bench/tokenizer_bench ../shared/vocab/ggml-vocab-llama-spm.gguf
//       ../shared/vocab/ggml-vocab-bert-bge.gguf --unigram 250000
#include "runtime/gguf/gguf_file.h"
#include "runtime/tokenizer/tokenizer.h"
#include "runtime/tokenizer/ugm_tokenizer.h"
#include "runtime/tokenizer/utf8.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace {

using namespace pshard;

constexpr const char* kParagraph =
    "The processor computes while the weights of the next layer stream to the device, and "
    "the plan was compiled ahead of time for this machine. Der schnelle braune Fuchs springt "
    "über den faulen Hund. Le renard brun rapide saute par-dessus le chien paresseux. "
    "Быстрая коричневая лиса прыгает через ленивую собаку. 敏捷的棕色狐狸跳过了懒狗。"
    "素早い茶色の狐がのろまな犬を飛び越える。 빠른 갈색 여우가 게으른 개를 뛰어넘는다. "
    "الثعلب البني السريع يقفز فوق الكلب الكسول. 12,345.67 tokens/s; ﬁne Ｆｕｌｌ ① … \n";

std::string bench_text() {
  std::string text;
  while (text.size() < 64 * 1024)
    text += kParagraph;
  return text;
}

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Up to n pieces: every substring of 1..8 characters of the text's words, "▁" in front
// at a word's start, scored by a seeded random log-probability.
Vocabulary synthetic_unigram(const std::string& text, size_t n) {
  std::set<std::string> pieces;
  std::vector<size_t> starts; // character starts
  for (size_t i = 0; i < text.size(); i += utf8_sequence_length(static_cast<unsigned char>(text[i])))
    starts.push_back(i);
  starts.push_back(text.size());
  for (size_t a = 0; a + 1 < starts.size() && pieces.size() < n; ++a) {
    const bool word_start = a == 0 || text[starts[a] - 1] == ' ';
    for (size_t len = 1; len <= 8 && a + len < starts.size() && pieces.size() < n; ++len) {
      std::string piece = text.substr(starts[a], starts[a + len] - starts[a]);
      if (piece.find(' ') != std::string::npos || piece.find('\n') != std::string::npos)
        break;
      pieces.insert(word_start ? "\xE2\x96\x81" + piece : piece);
    }
  }
  for (int i = 0; pieces.size() < n; ++i) // filler, as a large vocabulary's rare pieces
    pieces.insert("\xE2\x96\x81rare" + std::to_string(i));
  Vocabulary v;
  v.model = "t5";
  v.tokens = {{"<s>", 0, TokenType::kControl}, {"<pad>", 0, TokenType::kControl},
              {"</s>", 0, TokenType::kControl}, {"<unk>", 0, TokenType::kUnknown}};
  v.bos_id = 0;
  v.eos_id = 2;
  v.unk_id = 3;
  v.add_eos = true;
  v.remove_extra_whitespaces = true;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> score(-16.0f, -2.0f);
  for (const std::string& p : pieces)
    v.tokens.push_back({p, score(rng) - 0.5f * static_cast<float>(p.size()), TokenType::kNormal});
  return v;
}

template <typename Build>
void measure(const char* name, const std::string& text, Build&& build) {
  std::vector<double> build_ms, encode_ms;
  size_t n_tokens = 0;
  int32_t n_vocab = 0;
  for (int run = 0; run < 7; ++run) {
    auto t0 = std::chrono::steady_clock::now();
    std::unique_ptr<Tokenizer> tok = build();
    if (!tok)
      return;
    build_ms.push_back(ms_since(t0));
    t0 = std::chrono::steady_clock::now();
    n_tokens = tok->encode(text, tok->add_bos_by_default()).size();
    encode_ms.push_back(ms_since(t0));
    n_vocab = tok->n_vocab();
  }
  const double enc = median(encode_ms);
  std::printf("%-34s %8d %9.1f %9.2f %9.1f %11.0f\n", name, n_vocab, median(build_ms), enc,
              static_cast<double>(text.size()) / enc / 1e3, static_cast<double>(n_tokens) / enc * 1e3);
}

} // namespace

int main(int argc, char** argv) {
  const std::string text = bench_text();
  std::printf("text: %zu bytes; medians of 7\n%-34s %8s %9s %9s %9s %11s\n", text.size(),
              "vocabulary", "tokens", "build ms", "encode ms", "MB/s", "tokens/s");
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--unigram") == 0 && i + 1 < argc) {
      const size_t n = std::stoul(argv[++i]);
      const Vocabulary v = synthetic_unigram(text, n);
      const std::string name = "unigram (synthetic, " + std::to_string(n) + ")";
      measure(name.c_str(), text, [&]() -> std::unique_ptr<Tokenizer> {
        auto t = UgmTokenizer::create(v);
        return t.ok() ? std::move(t).value() : nullptr;
      });
      continue;
    }
    auto file = gguf::GgufFile::open(argv[i], gguf::OpenMode::kMetadataOnly);
    if (!file.ok()) {
      std::fprintf(stderr, "%s: %s\n", argv[i], file.status().to_string().c_str());
      return 1;
    }
    const std::string name = std::strrchr(argv[i], '/') ? std::strrchr(argv[i], '/') + 1 : argv[i];
    measure(name.c_str(), text, [&]() -> std::unique_ptr<Tokenizer> {
      auto t = Tokenizer::from_gguf(**file);
      if (!t.ok())
        std::fprintf(stderr, "%s: %s\n", argv[i], t.status().to_string().c_str());
      return t.ok() ? std::move(t).value() : nullptr;
    });
  }
  return 0;
}
