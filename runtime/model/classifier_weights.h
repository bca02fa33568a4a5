// Binding what follows pooling (runtime/model/pooling.h): a reranker's classification head
// (Classifier) and sentence-transformers' Dense modules (EmbeddingProjection).
#pragma once

#include "runtime/gguf/gguf_file.h"
#include "runtime/model/hparams.h"
#include "runtime/model/tensor_binder.h"

#include <memory>

namespace pshard {

// The head when the file has cls.output.weight, else null; kInvalidFormat for a model
// whose pooling_type is rank without one, a malformed head or labels that do not match it.
// The Dense modules when the file has dense_2.weight, else null; kInvalidFormat for a
// malformed pair, one whose output is not n_embd wide, or dense_3 without dense_2.
Result<std::shared_ptr<const EmbeddingProjection>>
bind_embedding_projection(const gguf::GgufFile& file, const ModelHParams& hp, TensorBinder& b);

Result<std::shared_ptr<const Classifier>> bind_classifier(const gguf::GgufFile& file,
                                                          const ModelHParams& hp, TensorBinder& b);

} // namespace pshard
