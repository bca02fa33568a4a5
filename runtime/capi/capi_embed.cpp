// pshard.h: embeddings through a context (pshard_context_embed) and the model's width and
// pooling.
#include "runtime/capi/capi_internal.h"
#include "runtime/generate/embedding.h"

#include <algorithm>

using namespace pshard;
using pshard::capi::fail;

int32_t pshard_model_n_embd(const pshard_model* model) {
  return model ? static_cast<int32_t>(model->model->hparams().n_embd) : 0;
}

pshard_pooling pshard_model_pooling(const pshard_model* model) {
  return model ? static_cast<pshard_pooling>(model->model->hparams().pooling)
               : PSHARD_POOLING_MODEL;
}

pshard_embed_params pshard_embed_default_params(void) {
  pshard_embed_params p{};
  p.size = sizeof p;
  p.pooling = PSHARD_POOLING_MODEL;
  p.normalize = true;
  p.dimensions = 0;
  return p;
}

pshard_status pshard_context_embed(pshard_context* c, const pshard_token* tokens, size_t n_tokens,
                                   const pshard_embed_params* params, float* out, size_t capacity,
                                   size_t* n_out) {
  constexpr const char* kFn = "pshard_context_embed";
  if (!c)
    return capi::null_argument(kFn, "context");
  if (!tokens && n_tokens > 0)
    return capi::null_argument(kFn, "tokens");
  if (!out && capacity > 0)
    return capi::null_argument(kFn, "out");
  const pshard_embed_params p = capi::read_params(params, pshard_embed_default_params());
  if (p.pooling < PSHARD_POOLING_MODEL || p.pooling > PSHARD_POOLING_LAST)
    return fail(invalid_argument("pooling " + std::to_string(static_cast<int>(p.pooling)) +
                                 " is not a pshard_pooling value"));
  const ModelHParams& hp = c->model->model->hparams();
  const Pooling pooling =
      p.pooling == PSHARD_POOLING_MODEL ? hp.pooling : static_cast<Pooling>(p.pooling);
  auto v = embed(*c->session, hp.n_embd, std::span<const TokenId>(tokens, n_tokens), pooling,
                 {.normalize = p.normalize, .dimensions = p.dimensions});
  if (!v.ok())
    return fail(v.status().with_context(kFn));
  if (n_out)
    *n_out = v->size();
  if (v->size() > capacity)
    return fail(out_of_range(std::string(kFn) + ": the embedding has " +
                             std::to_string(v->size()) + " floats, the buffer holds " +
                             std::to_string(capacity)));
  std::copy(v->begin(), v->end(), out);
  return PSHARD_OK;
}
