// Binding a reranker's classification head (runtime/model/pooling.h's Classifier).
#pragma once

#include "runtime/gguf/gguf_file.h"
#include "runtime/model/hparams.h"
#include "runtime/model/tensor_binder.h"

#include <memory>

namespace pshard {

// The head when the file has cls.output.weight, else null; kInvalidFormat for a model
// whose pooling_type is rank without one, a malformed head or labels that do not match it.
Result<std::shared_ptr<const Classifier>> bind_classifier(const gguf::GgufFile& file,
                                                          const ModelHParams& hp, TensorBinder& b);

} // namespace pshard
