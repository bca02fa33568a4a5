#include "runtime/serve/active_sequence.h"

#include "runtime/generate/generator.h"

#include <algorithm>

namespace pshard {
namespace {

double ms_between(SteadyTime from, SteadyTime to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

} // namespace

ActiveSequence::ActiveSequence(QueuedRequest request, SeqId seq, const Tokenizer& tokenizer,
                               uint64_t order, int64_t reused)
    : request_(std::move(request)), seq_(seq), tokenizer_(tokenizer), order_(order),
      sampler_(request_.params.sampling), text_(request_.params.stop_strings),
      history_(request_.params.prompt), prompt_done_(reused), reused_(reused),
      admitted_(std::chrono::steady_clock::now()) {}

int64_t ActiveSequence::prompt_left() const {
  return static_cast<int64_t>(request_.params.prompt.size()) - prompt_done_;
}

void ActiveSequence::append_entries(int64_t n, std::vector<BatchEntry>& pass) const {
  const auto& prompt = request_.params.prompt;
  const PromptImage* image = request_.params.image.get();
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  // With an image every entry carries its M-RoPE positions, and the image's tokens their rows.
  auto add = [&](TokenId token, int64_t slot, bool logits) {
    BatchEntry e{seq_, token, logits};
    if (image) {
      e.rope = mrope_position(image->span, slot);
      if (slot >= image->span.begin && slot < image->span.end())
        e.embedding = image->rows.data() + (slot - image->span.begin) * image->n_embd;
    }
    pass.push_back(e);
  };
  if (pending_) {
    add(*pending_, n_prompt + n_generated_ - 1, true); // the slot after the last one fed
    return;
  }
  for (int64_t i = prompt_done_; i < prompt_done_ + n; ++i)
    add(prompt[static_cast<size_t>(i)], i, i + 1 == n_prompt);
}

std::optional<SequenceEvent> ActiveSequence::advance(int64_t n, std::span<const float> logits,
                                                     int64_t context_left) {
  if (pending_) {
    pending_.reset();
  } else {
    prompt_done_ += n;
    if (prompt_left() == 0)
      prompt_done_at_ = std::chrono::steady_clock::now();
  }
  if (logits.empty())
    return std::nullopt;
  return sample(logits, context_left);
}

SequenceEvent ActiveSequence::sample(std::span<const float> logits, int64_t context_left) {
  const RequestParams& p = request_.params;
  if (p.max_tokens == 0)
    return event(FinishReason::kLength);
  const TokenId t = sampler_.sample(logits, history_);
  if (n_generated_ == 0)
    first_token_at_ = std::chrono::steady_clock::now();
  const bool stop_token =
      (!p.ignore_eos && tokenizer_.is_end_of_generation(t)) ||
      std::find(p.stop_tokens.begin(), p.stop_tokens.end(), t) != p.stop_tokens.end();
  if (stop_token) {
    SequenceEvent e = event(FinishReason::kStop);
    e.text = text_.flush();
    return e;
  }
  ++n_generated_;
  history_.push_back(t);
  TextStream::Piece piece = text_.push(tokenizer_.token_to_piece(t));
  FinishReason finish = FinishReason::kNone;
  if (piece.stopped)
    finish = FinishReason::kStop;
  else if ((p.max_tokens >= 0 && n_generated_ >= p.max_tokens) || context_left <= 0)
    finish = FinishReason::kLength;
  SequenceEvent e = event(finish);
  e.token = t;
  e.text = std::move(piece.text);
  if (finish == FinishReason::kLength)
    e.text += text_.flush();
  if (p.logprobs || p.top_logprobs > 0) {
    e.logprob = static_cast<float>(logits[static_cast<size_t>(t)] - log_sum_exp(logits));
    e.top = top_logprobs(logits, p.top_logprobs);
  }
  if (finish == FinishReason::kNone)
    pending_ = t;
  return e;
}

SequenceEvent ActiveSequence::end(FinishReason reason, Status error) {
  SequenceEvent e = event(reason);
  e.error = std::move(error);
  if (reason != FinishReason::kError)
    e.text = text_.flush();
  return e;
}

SequenceEvent ActiveSequence::event(FinishReason finish) {
  SequenceEvent e;
  e.id = request_.id;
  e.finish = finish;
  e.n_prompt = static_cast<int64_t>(request_.params.prompt.size());
  e.n_cached = reused_;
  e.n_generated = n_generated_;
  const SteadyTime now = std::chrono::steady_clock::now();
  const SteadyTime submitted = request_.submitted;
  e.timings.queued_ms = ms_between(submitted, admitted_);
  if (prompt_left() == 0)
    e.timings.prompt_ms = ms_between(admitted_, prompt_done_at_);
  if (n_generated_ > 0)
    e.timings.first_token_ms = ms_between(submitted, first_token_at_);
  e.timings.total_ms = ms_between(submitted, now);
  return e;
}

} // namespace pshard
