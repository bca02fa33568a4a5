// pshard.h: embeddings through a context (pshard_context_embed) and the model's width and
// pooling.
#include "runtime/capi/capi_internal.h"
#include "runtime/generate/embedding.h"

#include <algorithm>
#include <cstring>

using namespace pshard;
using pshard::capi::fail;

int32_t pshard_model_n_embd(const pshard_model* model) {
  return model ? static_cast<int32_t>(model->model->hparams().n_embd) : 0;
}

pshard_pooling pshard_model_pooling(const pshard_model* model) {
  return model ? static_cast<pshard_pooling>(model->model->hparams().pooling)
               : PSHARD_POOLING_MODEL;
}

int32_t pshard_model_n_cls_labels(const pshard_model* model) {
  const Classifier* c = model ? model->model->weights().classifier.get() : nullptr;
  return c ? static_cast<int32_t>(c->n_labels()) : 0;
}

const char* pshard_model_rerank_template(const pshard_model* model) {
  return model && model->rerank_template ? model->rerank_template->c_str() : nullptr;
}

pshard_embed_params pshard_embed_default_params(void) {
  pshard_embed_params p{};
  p.size = sizeof p;
  p.pooling = PSHARD_POOLING_MODEL;
  p.normalize = true;
  p.dimensions = 0;
  return p;
}

namespace pshard::capi {

Result<RequestParams::Embedding> embedding_request(const pshard_model& model,
                                                   const pshard_embed_params& params) {
  const pshard_embed_params p = read_params(&params, pshard_embed_default_params());
  // A C caller may store any int in the enum; reading one outside its values as the enum
  // is undefined in C++, so the bytes are read as the int they are.
  static_assert(sizeof(pshard_pooling) == sizeof(int32_t));
  int32_t pooling = 0;
  std::memcpy(&pooling, &p.pooling, sizeof pooling);
  if (pooling < PSHARD_POOLING_MODEL || pooling > PSHARD_POOLING_RANK)
    return invalid_argument("pooling " + std::to_string(pooling) +
                            " is not a pshard_pooling value");
  const ModelHParams& hp = model.model->hparams();
  RequestParams::Embedding e;
  e.pooling = pooling == PSHARD_POOLING_MODEL ? hp.pooling : static_cast<Pooling>(pooling);
  if (e.pooling == Pooling::kUnspecified)
    return invalid_argument("the model names no pooling (its pooling_type: it is not an "
                            "embedding model); set pshard_embed_params.pooling");
  e.options = {.normalize = p.normalize,
               .dimensions = p.dimensions,
               .classifier = nullptr,
               .projection = model.model->weights().projection.get()};
  if (e.pooling == Pooling::kRank) {
    e.options.classifier = model.model->weights().classifier.get();
    if (!e.options.classifier)
      return invalid_argument("rank pooling needs the model's classification head "
                              "(cls.output.weight), which this model has not: it is not a "
                              "reranker; pool by mean, cls or last");
  }
  PSHARD_RETURN_IF_ERROR(check_embedding_options(e.options, hp.n_embd));
  return e;
}

} // namespace pshard::capi

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
  const pshard_embed_params defaults = pshard_embed_default_params();
  auto e = capi::embedding_request(*c->model, params ? *params : defaults);
  if (!e.ok())
    return fail(e.status().with_context(kFn));
  auto v = embed(*c->session, c->model->model->hparams().n_embd,
                 std::span<const TokenId>(tokens, n_tokens), e->pooling, e->options);
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
