#include "tools/pshard-bench/model_bench.h"

#include "runtime/core/file_bytes.h"
#include "runtime/tokenizer/tokenizer.h"

#include <chrono>
#include <cstdio>
#include <random>

namespace pshard::bench {
namespace {

uint64_t matrix_bytes(const MatrixView& m) { return static_cast<uint64_t>(m.rows) * m.row_bytes; }
uint64_t matrix_params(const MatrixView& m) {
  return static_cast<uint64_t>(m.rows) * static_cast<uint64_t>(m.cols);
}

std::string params_label(uint64_t n) {
  char buf[32];
  if (n >= 1000000000ull)
    std::snprintf(buf, sizeof buf, "%.1fB", static_cast<double>(n) / 1e9);
  else if (n >= 1000000ull)
    std::snprintf(buf, sizeof buf, "%.0fM", static_cast<double>(n) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.0fK", static_cast<double>(n) / 1e3);
  return buf;
}

std::vector<TokenId> random_tokens(int64_t n, int64_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int64_t> pick(1, n_vocab - 1);
  std::vector<TokenId> t(static_cast<size_t>(n));
  for (TokenId& id : t)
    id = static_cast<TokenId>(pick(rng));
  return t;
}

// n tokens of `text` from its start, cycled.
std::vector<TokenId> cycled(const std::vector<TokenId>& text, int64_t n) {
  std::vector<TokenId> t(static_cast<size_t>(n));
  for (size_t i = 0; i < t.size(); ++i)
    t[i] = text[i % text.size()];
  return t;
}

} // namespace

Result<std::vector<TokenId>> text_tokens(const Model& model, const std::string& path) {
  PSHARD_ASSIGN_OR_RETURN(std::string text, read_text_file(path, "--text"));
  PSHARD_ASSIGN_OR_RETURN(auto tok, Tokenizer::from_gguf(model.file()));
  std::vector<TokenId> ids = tok->encode(text, /*add_bos=*/false);
  if (ids.empty())
    return invalid_argument("--text " + path + " gives no tokens: name a file with some text");
  return ids;
}

ModelFacts describe_model(const Model& model, const std::string& filename) {
  const ModelHParams& hp = model.hparams();
  const ModelWeights& w = model.weights();
  ModelFacts f;
  f.filename = filename;
  f.size_bytes = model.weight_bytes();
  f.n_params = model.n_params();
  // Experts: a token reads only the ones it is routed to.
  const double expert_share =
      hp.is_moe() ? static_cast<double>(hp.n_expert_used) / static_cast<double>(hp.n_expert) : 1.0;
  double bytes = 0, params = 0;
  for (size_t il = 0; il < w.layers.size(); ++il) {
    const LayerWeights& l = w.layers[il];
    for (const MatrixView* m : {&l.attn.wq, &l.attn.wk, &l.attn.wv, &l.attn.wo}) {
      bytes += matrix_bytes(*m);
      params += matrix_params(*m);
    }
    if (hp.is_moe_layer(static_cast<int64_t>(il))) {
      bytes += matrix_bytes(l.moe.router);
      params += matrix_params(l.moe.router);
      for (const ExpertWeights* e : {&l.moe.gate, &l.moe.up, &l.moe.down}) {
        bytes += expert_share * matrix_bytes(e->first) * e->n_expert;
        params += expert_share * matrix_params(e->first) * e->n_expert;
      }
    } else {
      for (const MatrixView* m : {&l.ffn.gate, &l.ffn.up, &l.ffn.down}) {
        bytes += matrix_bytes(*m);
        params += matrix_params(*m);
      }
    }
  }
  f.layer_matmul_params = static_cast<uint64_t>(params);
  f.head_params = matrix_params(w.output);
  // The head reads the whole output matrix; the embedding only one row.
  f.bytes_per_token =
      static_cast<uint64_t>(bytes) + matrix_bytes(w.output) + w.token_embd.row_bytes;
  const FfnWeights& ffn = w.layers.front().ffn;
  const MatrixView& typical = hp.is_moe()     ? w.layers.back().moe.gate.first // past dense leads
                              : ffn.gate.data ? ffn.gate
                                              : ffn.up; // BERT: no gate
  f.weight_type = tensor_type_name(typical.type);
  std::string upper = f.weight_type;
  for (char& c : upper)
    c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  f.type_label = std::string(hp.family->name) + " " + params_label(f.n_params) + " " + upper;
  return f;
}

Status run_test(const Model& model, const HybridTarget& target, int repetitions, BenchRow& row,
                const std::vector<TokenId>& text, const std::function<void(int rep)>& progress) {
  const int64_t n_vocab = model.hparams().n_vocab;
  const int64_t n_ctx = std::max<int64_t>(row.n_prompt + row.n_gen, 16);
  row.n_batch = std::max<int64_t>(row.n_prompt, 1);
  PSHARD_ASSIGN_OR_RETURN(auto session,
                          BenchSession::open(model, target, n_ctx, row.n_threads, row.n_batch));
  row.backend = session->label();
  Decoder& decoder = session->decoder();
  const std::vector<TokenId> prompt =
      text.empty() ? random_tokens(row.n_prompt, n_vocab, 1) : cycled(text, row.n_prompt);
  const std::vector<TokenId> gen =
      text.empty() ? random_tokens(row.n_gen, n_vocab, 2) : cycled(text, row.n_gen);

  // An encoder's prompt is embedded (one pass); a decoder's decoded for its logits.
  const bool embeds = !model.hparams().causal;
  auto read_prompt = [&]() -> Status {
    if (embeds)
      return decoder.decode_embeddings(prompt).status();
    return decoder.decode(prompt).status();
  };
  auto run_once = [&]() -> Result<double> {
    session->reset();
    const auto start = std::chrono::steady_clock::now();
    if (row.n_prompt > 0)
      PSHARD_RETURN_IF_ERROR(read_prompt());
    for (int64_t i = 0; i < row.n_gen; ++i) {
      PSHARD_ASSIGN_OR_RETURN(auto logits, decoder.decode(std::span(&gen[i], 1)));
      (void)logits;
    }
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
        .count();
  };

  progress(0);
  { // warm-up: page in the mapped weights, spin up the pool; under a schedule, the
    // test's plan is entered (its resident set uploaded) here, untimed
    session->reset();
    if (row.n_prompt > 0) {
      PSHARD_RETURN_IF_ERROR(read_prompt());
    } else {
      PSHARD_ASSIGN_OR_RETURN(auto l, decoder.decode(std::span(&gen[0], 1)));
      (void)l;
    }
  }
  session->reset_stats();
  row.samples_ns.clear();
  for (int rep = 1; rep <= repetitions; ++rep) {
    progress(rep);
    PSHARD_ASSIGN_OR_RETURN(double ns, run_once());
    row.samples_ns.push_back(ns);
  }
  row.plans = session->plans();
  return Status::ok_status();
}

} // namespace pshard::bench
