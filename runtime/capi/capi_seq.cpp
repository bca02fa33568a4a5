// pshard.h: the sequence handle — events by poll, cancel, free; and a token's text.
#include "runtime/capi/capi_batch_internal.h"

#include <algorithm>
#include <cstring>

using namespace pshard;
using pshard::capi::fail;

namespace pshard::capi {

pshard_seq_event c_event(const SequenceEvent& e, std::vector<pshard_token>& ids,
                         std::vector<float>& logprobs) {
  ids.clear();
  logprobs.clear();
  for (const TokenLogprob& t : e.top) {
    ids.push_back(t.id);
    logprobs.push_back(t.logprob);
  }
  pshard_seq_event c{};
  c.size = sizeof c;
  c.seq_id = e.id;
  c.token = e.token;
  c.text = e.text.c_str();
  c.text_len = e.text.size();
  c.logprob = e.logprob;
  c.n_top = static_cast<int32_t>(ids.size());
  c.top_ids = ids.data();
  c.top_logprobs = logprobs.data();
  c.finish = static_cast<pshard_finish_reason>(static_cast<int>(e.finish));
  c.error = static_cast<pshard_status>(static_cast<int>(e.error.code()));
  c.error_message = e.error.message().c_str();
  c.n_prompt = e.n_prompt;
  c.n_cached = e.n_cached;
  c.n_generated = e.n_generated;
  c.queued_ms = e.timings.queued_ms;
  c.prompt_ms = e.timings.prompt_ms;
  c.first_token_ms = e.timings.first_token_ms;
  c.total_ms = e.timings.total_ms;
  c.embedding = e.embedding.empty() ? nullptr : e.embedding.data();
  c.n_embedding = e.embedding.size();
  c.stop_string = e.stop_string;
  return c;
}

} // namespace pshard::capi

extern "C" {

int64_t pshard_seq_id(const pshard_seq* seq) { return seq ? seq->id : -1; }

pshard_seq_event pshard_seq_event_init(void) {
  pshard_seq_event e{};
  e.size = sizeof e;
  return e;
}

pshard_status pshard_seq_poll(pshard_seq* seq, pshard_seq_event* out, bool* got) {
  if (!seq)
    return capi::null_argument("pshard_seq_poll", "seq");
  if (!out)
    return capi::null_argument("pshard_seq_poll", "out");
  if (!got)
    return capi::null_argument("pshard_seq_poll", "got");
  if (out->size == 0)
    return fail(invalid_argument("pshard_seq_poll: out->size is 0; initialise the event with "
                                 "pshard_seq_event_init() (or set size to "
                                 "sizeof(pshard_seq_event))"));
  capi::SeqChannel& ch = *seq->channel;
  std::lock_guard lock(ch.mutex);
  if (ch.callback)
    return fail(invalid_argument("pshard_seq_poll: this sequence delivers its events to its "
                                 "on_event callback; poll only sequences added without one"));
  *got = !ch.queue.empty();
  if (!*got)
    return PSHARD_OK;
  ch.polled = std::move(ch.queue.front());
  ch.queue.pop_front();
  capi::write_out(out, capi::c_event(ch.polled, ch.polled_ids, ch.polled_logprobs));
  return PSHARD_OK;
}

void pshard_seq_cancel(pshard_seq* seq) {
  if (!seq)
    return;
  if (auto batch = seq->batch.lock())
    batch->scheduler->cancel(seq->id);
}

pshard_finish_reason pshard_seq_finish_reason(const pshard_seq* seq) {
  if (!seq)
    return PSHARD_FINISH_NONE;
  std::lock_guard lock(seq->channel->mutex);
  return static_cast<pshard_finish_reason>(static_cast<int>(seq->channel->finish));
}

void pshard_seq_free(pshard_seq* seq) {
  if (!seq)
    return;
  {
    std::lock_guard lock(seq->channel->mutex); // waits for a callback running elsewhere
    seq->channel->detached = true;
  }
  pshard_seq_cancel(seq);
  delete seq;
}

pshard_status pshard_model_token_to_piece(const pshard_model* model, pshard_token token, char* text,
                                          size_t capacity, size_t* text_len) {
  if (!model)
    return capi::null_argument("pshard_model_token_to_piece", "model");
  if (!text_len)
    return capi::null_argument("pshard_model_token_to_piece", "text_len");
  if (!text && capacity > 0)
    return capi::null_argument("pshard_model_token_to_piece", "text");
  if (token < 0 || token >= model->tokenizer->n_vocab())
    return fail(out_of_range("token " + std::to_string(token) + " is outside the vocabulary of " +
                             std::to_string(model->tokenizer->n_vocab()) + " tokens"));
  const std::string piece = model->tokenizer->token_to_piece(token);
  *text_len = piece.size();
  if (text)
    std::memcpy(text, piece.data(), std::min(capacity, piece.size()));
  return PSHARD_OK;
}

} // extern "C"
