// What the tools built on the C API (pshard-run, pshard-server) share: RAII holders for
// its handles and its failures as a Status. Header-only: the C API's shared library is
// the only thing it needs.
//
//   PSHARD_C_CALL(pshard_model_load(path, &mp, &raw));   // returns last_error() on failure
//   ModelHandle model(raw);
#pragma once

#include "pshard/pshard.h"
#include "runtime/core/status.h"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

struct ModelFree {
  void operator()(pshard_model* m) const { pshard_model_free(m); }
};
struct ContextFree {
  void operator()(pshard_context* c) const { pshard_context_free(c); }
};
struct BatchFree {
  void operator()(pshard_batch* b) const { pshard_batch_free(b); }
};
struct SeqFree {
  void operator()(pshard_seq* s) const { pshard_seq_free(s); }
};
struct ImageFree {
  void operator()(pshard_image* i) const { pshard_image_free(i); }
};
using ModelHandle = std::unique_ptr<pshard_model, ModelFree>;
using ContextHandle = std::unique_ptr<pshard_context, ContextFree>;
using BatchHandle = std::unique_ptr<pshard_batch, BatchFree>;
using SeqHandle = std::unique_ptr<pshard_seq, SeqFree>;
using ImageHandle = std::unique_ptr<pshard_image, ImageFree>;

// Pointers into `strings` (which must outlive them), as the C API takes lists.
inline std::vector<const char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<const char*> out;
  for (const std::string& s : strings)
    out.push_back(s.c_str());
  return out;
}

// A failed C API call's code and pshard_last_error() as a Status (the message reads
// "<kind>: <message>"; the Status adds the kind back).
inline Status last_error(pshard_status code) {
  std::string message = pshard_last_error();
  const std::string kind = std::string(pshard_status_name(code)) + ": ";
  if (message.rfind(kind, 0) == 0)
    message.erase(0, kind.size());
  return Status(static_cast<StatusCode>(static_cast<int>(code)), message);
}

// Tokens from a C API call that fills a buffer and says how many it needs
// (call(tokens, capacity, &n)): a first try with room for `guess`, a second with the
// count it asked for (normalization can spell a character in more tokens than bytes).
template <typename Call> Result<std::vector<pshard_token>> tokens_from(size_t guess, Call&& call) {
  std::vector<pshard_token> ids(guess);
  size_t n = 0;
  pshard_status code = call(ids.data(), ids.size(), &n);
  if (code == PSHARD_ERROR_OUT_OF_RANGE && n > ids.size()) {
    ids.resize(n);
    code = call(ids.data(), ids.size(), &n);
  }
  if (code != PSHARD_OK)
    return last_error(code);
  ids.resize(n);
  return ids;
}

// `text` tokenized as `params` say.
inline Result<std::vector<pshard_token>> tokenize_text(const pshard_model* model,
                                                       std::string_view text,
                                                       const pshard_tokenize_params& params) {
  return tokens_from(text.size() + 8, [&](pshard_token* ids, size_t cap, size_t* n) {
    return pshard_model_tokenize_ex(model, text.data(), text.size(), &params, ids, cap, n);
  });
}

// The tokens a reranker scores for `query` and `document` (pshard_model_rerank_tokenize).
inline Result<std::vector<pshard_token>>
rerank_tokens(const pshard_model* model, std::string_view query, std::string_view document) {
  return tokens_from(
      query.size() + document.size() + 8, [&](pshard_token* ids, size_t cap, size_t* n) {
        return pshard_model_rerank_tokenize(model, query.data(), query.size(), document.data(),
                                            document.size(), ids, cap, n);
      });
}

// --backend's names: cpu, emu, cuda, or auto (emu with a schedule, else cpu).
inline Result<pshard_backend> parse_backend(const std::string& name, bool has_schedule) {
  if (name == "cpu")
    return PSHARD_BACKEND_CPU;
  if (name == "emu")
    return PSHARD_BACKEND_EMU;
  if (name == "cuda")
    return PSHARD_BACKEND_CUDA;
  if (name == "auto")
    return has_schedule ? PSHARD_BACKEND_EMU : PSHARD_BACKEND_CPU;
  return invalid_argument("unknown --backend '" + name + "' (expected cpu, emu, cuda or auto)");
}

inline const char* backend_name(pshard_backend b) {
  return b == PSHARD_BACKEND_EMU ? "emu" : b == PSHARD_BACKEND_CUDA ? "cuda" : "cpu";
}

} // namespace pshard

#define PSHARD_C_CALL(expr)                                                                        \
  do {                                                                                             \
    const pshard_status code_ = (expr);                                                            \
    if (code_ != PSHARD_OK)                                                                        \
      return ::pshard::last_error(code_);                                                          \
  } while (0)
