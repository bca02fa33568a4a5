#include "runtime/batch/batch_decoder.h"

#include <algorithm>
#include <string>

namespace pshard {

Status check_text_only(std::span<const BatchEntry> batch, const char* engine) {
  if (std::any_of(batch.begin(), batch.end(), [](const BatchEntry& e) { return e.multimodal(); }))
    return unsupported(std::string(engine) +
                       " takes token ids only; image prompts (embedding rows, M-RoPE positions) "
                       "run on the batched engines (pshard_batch, pshard-server)");
  if (std::any_of(batch.begin(), batch.end(), [](const BatchEntry& e) { return e.hidden; }))
    return unsupported(std::string(engine) +
                       " returns logits only; embeddings (BatchEntry::hidden) come from the "
                       "batched engines (pshard_batch, pshard-server)");
  return Status::ok_status();
}

Status BatchDecoder::rewind_sequence(SeqId, std::span<const TokenId>) {
  return unsupported("this engine cannot drop a sequence's positions (no speculative decoding)");
}

} // namespace pshard
