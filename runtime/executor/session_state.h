// A session's sequence saved to a file and read back (llama.cpp's llama_state_save_file
// and _load_file): the tokens it holds and, per layer, the KV rows of those positions (a
// sliding window's ring, a recurrent layer's state) in the cache's own types, with what
// they fit: the model's fingerprint (model_fingerprint.h), the context's positions, KV
// types and each layer's rows. An app saves a long system prompt or a conversation once
// and starts from it later without decoding it again.
//
// The file is written under a temporary name and renamed when complete. Reading checks
// everything against the session before touching it, and refuses, naming what differs,
// a file of another model, another context size or KV types, or a truncated one; a
// checksum over the whole file (checksum.h) refuses a damaged one. A read that fails
// part way, or whose checksum differs, leaves the session empty (n_past 0), never half
// restored.
//
//   PSHARD_RETURN_IF_ERROR(save_session_state(session, model, held_tokens, "chat.state"));
//   PSHARD_ASSIGN_OR_RETURN(std::vector<TokenId> held,
//                           load_session_state(session, model, "chat.state"));
#pragma once

#include "runtime/core/status.h"
#include "runtime/executor/hybrid_session.h"
#include "runtime/model/model.h"

#include <span>
#include <string>
#include <vector>

namespace pshard {

// `tokens`: what the session's n_past positions hold, one each (kInvalidArgument
// otherwise). Under a schedule the device memory is released first (the KV rows come to
// the host); the next pass uploads its plan's resident set again.
Status save_session_state(HybridSession& session, const Model& model,
                          std::span<const TokenId> tokens, const std::string& path);

// The positions the file holds, after every check load_session_state makes before it
// touches the session (a caller sizing its buffer for the tokens).
Result<int64_t> saved_state_positions(HybridSession& session, const Model& model,
                                      const std::string& path);

// The saved tokens; the session then holds their positions (n_past = their count).
Result<std::vector<TokenId>> load_session_state(HybridSession& session, const Model& model,
                                                const std::string& path);

} // namespace pshard
