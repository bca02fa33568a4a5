// pshard.h: a context's sequence saved to a file and read back (runtime/executor/
// session_state.h does the work).
#include "runtime/capi/capi_internal.h"
#include "runtime/executor/session_state.h"

#include <algorithm>

using namespace pshard;
using pshard::capi::fail;

extern "C" {

pshard_status pshard_context_state_save_file(pshard_context* c, const char* path,
                                             const pshard_token* tokens, size_t n_tokens) {
  constexpr const char* kFn = "pshard_context_state_save_file";
  if (!c)
    return capi::null_argument(kFn, "context");
  if (!path)
    return capi::null_argument(kFn, "path");
  if (!tokens && n_tokens > 0)
    return capi::null_argument(kFn, "tokens");
  const Status st = save_session_state(*c->session, *c->model->model,
                                       std::span<const TokenId>(tokens, n_tokens), path);
  return st.ok() ? capi::ok() : fail(st);
}

pshard_status pshard_context_state_load_file(pshard_context* c, const char* path,
                                             pshard_token* tokens_out, size_t capacity,
                                             size_t* n_tokens) {
  constexpr const char* kFn = "pshard_context_state_load_file";
  if (!c)
    return capi::null_argument(kFn, "context");
  if (!path)
    return capi::null_argument(kFn, "path");
  if (!n_tokens)
    return capi::null_argument(kFn, "n_tokens");
  if (!tokens_out && capacity > 0)
    return capi::null_argument(kFn, "tokens_out");
  auto size = saved_state_positions(*c->session, *c->model->model, path);
  if (!size.ok())
    return fail(size.status());
  *n_tokens = static_cast<size_t>(*size);
  if (*n_tokens > capacity)
    return fail(out_of_range(std::string(kFn) + ": the state holds " + std::to_string(*n_tokens) +
                             " tokens, more than the capacity of " + std::to_string(capacity)));
  auto tokens = load_session_state(*c->session, *c->model->model, path);
  if (!tokens.ok())
    return fail(tokens.status());
  *n_tokens = tokens->size();
  std::copy(tokens->begin(), tokens->end(), tokens_out);
  return capi::ok();
}

} // extern "C"
