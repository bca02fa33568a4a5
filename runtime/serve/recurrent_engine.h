// make_sequence_engine's engine for a model with recurrent layers on a device
// (recurrent_engine.cpp says why and what it costs).
#pragma once

#include "runtime/serve/sequence_engine.h"

namespace pshard {

Result<std::unique_ptr<BatchDecoder>> make_recurrent_engine(const Model& model,
                                                            const Schedule* schedule,
                                                            const SequenceEngineOptions& options);

} // namespace pshard
