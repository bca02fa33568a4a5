// What a grammar costs per generated token on a real vocabulary: for each vocabulary
// file given, builds the token trie, then walks a JSON answer token by token under a JSON
// Schema (the answer cut into the vocabulary's longest tokens, as a model writing it
// might) and times at each step
//   - allows(): the greedy check of one token (the usual case: the model's choice fits),
//   - allowed() cold: the whole allowed set with the caches emptied,
//   - allowed() warm: the whole set as the filter keeps it (a state seen before is free),
// printing medians and 90th percentiles in microseconds.
//
//   build-test/tests/bench/grammar_mask_bench ../shared/vocab/ggml-vocab-qwen2.gguf ...
#include "runtime/gguf/gguf_file.h"
#include "runtime/grammar/output_constraint.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace pshard;

constexpr const char* kSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer", "minimum": 0},
    "email": {"type": "string"},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 8},
    "address": {"type": "object", "properties": {
      "street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string"}},
      "required": ["street", "city"]},
    "active": {"type": "boolean"}
  },
  "required": ["name", "age", "tags", "address", "active"]
})";

constexpr const char* kAnswer =
    R"({"name": "Ada Lovelace", "age": 36, "email": "ada@example.org", "tags": ["math", )"
    R"("poetry", "engines"], "address": {"street": "12 St James's Square", "city": "London", )"
    R"("zip": "SW1Y 4JH"}, "active": true})";

double us_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
}

double quantile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

// The text as the vocabulary's longest matching tokens, left to right.
std::vector<TokenId> longest_tokens(const TokenTrie& trie, std::string_view text) {
  std::vector<TokenId> out;
  const auto& nodes = trie.nodes();
  for (size_t pos = 0; pos < text.size();) {
    int32_t node = 0, best = -1;
    size_t best_len = 0;
    for (size_t i = pos; i < text.size(); ++i) {
      int32_t c = nodes[node].first_child;
      while (c >= 0 && nodes[c].byte != static_cast<uint8_t>(text[i]))
        c = nodes[c].next_sibling;
      if (c < 0)
        break;
      node = c;
      if (nodes[c].tokens_end > nodes[c].tokens_begin) {
        best = trie.tokens()[nodes[c].tokens_begin];
        best_len = i + 1 - pos;
      }
    }
    if (best < 0)
      return {};
    out.push_back(best);
    pos += best_len;
  }
  return out;
}

int bench(const char* path) {
  auto file = gguf::GgufFile::open(path);
  if (!file.ok()) {
    std::fprintf(stderr, "%s: %s\n", path, file.status().to_string().c_str());
    return 1;
  }
  auto tok = Tokenizer::from_gguf(**file);
  if (!tok.ok()) {
    std::fprintf(stderr, "%s: %s\n", path, tok.status().to_string().c_str());
    return 1;
  }
  auto t0 = std::chrono::steady_clock::now();
  auto trie = TokenTrie::build(**tok);
  const double trie_ms = us_since(t0) / 1e3;
  auto grammar = compile_output_constraint({"", kSchema, "", {}});
  if (!grammar.ok()) {
    std::fprintf(stderr, "schema: %s\n", grammar.status().to_string().c_str());
    return 1;
  }
  const std::vector<TokenId> answer = longest_tokens(*trie, kAnswer);
  auto walker = GrammarTokenFilter::create(*grammar, trie);   // keeps its caches
  if (!walker.ok()) {
    std::fprintf(stderr, "%s\n", walker.status().to_string().c_str());
    return 1;
  }
  std::vector<double> check_us, cold_us, warm_us;
  for (size_t i = 0; i < answer.size(); ++i) {
    GrammarTokenFilter& w = **walker;
    t0 = std::chrono::steady_clock::now();
    const bool fits = w.allows(answer[i]);
    check_us.push_back(us_since(t0));
    // Cold: a fresh filter brought to the same place, so no cache holds this state.
    auto cold = GrammarTokenFilter::create(*grammar, trie);
    for (size_t j = 0; j < i; ++j)
      (void)(*cold)->accept(answer[j]);
    t0 = std::chrono::steady_clock::now();
    (void)(*cold)->allowed();
    cold_us.push_back(us_since(t0));
    t0 = std::chrono::steady_clock::now();
    const auto bits = w.allowed();
    warm_us.push_back(us_since(t0));
    if (!fits || !token_bit(bits, answer[i])) {
      std::fprintf(stderr, "%s: token %zu of the answer does not fit the schema's grammar\n", path,
                   i);
      return 1;
    }
    (void)w.accept(answer[i]);
  }
  std::printf("| %s | %d | %zu | %.0f | %.1f | %.1f | %.0f | %.0f | %.0f | %.0f |\n",
              std::string(path).substr(std::string(path).rfind('/') + 1).c_str(), (*tok)->n_vocab(),
              trie->nodes().size(), trie_ms, quantile(check_us, 0.5), quantile(check_us, 0.9),
              quantile(cold_us, 0.5), quantile(cold_us, 0.9), quantile(warm_us, 0.5),
              quantile(warm_us, 0.9));
  std::printf("|   (%zu answer tokens) | | | | | | | | | |\n", answer.size());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: grammar_mask_bench VOCAB.gguf...\n");
    return 2;
  }
  std::printf("| vocabulary | tokens | trie nodes | trie build ms | allows() p50 us | p90 | "
              "allowed() cold p50 us | p90 | warm p50 us | p90 |\n|---|--:|--:|--:|--:|--:|--:|"
              "--:|--:|--:|\n");
  int rc = 0;
  for (int i = 1; i < argc; ++i)
    rc |= bench(argv[i]);
  return rc;
}
