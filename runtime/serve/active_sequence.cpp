#include "runtime/serve/active_sequence.h"

#include "runtime/batch/cache_key.h"
#include "runtime/generate/generator.h"

#include <algorithm>
#include <cmath>

namespace pshard {
namespace {

double ms_between(SteadyTime from, SteadyTime to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

} // namespace

ActiveSequence::ActiveSequence(QueuedRequest request, SeqId seq, const Tokenizer& tokenizer,
                               uint64_t order, int64_t reused, PromptLookup lookup, int64_t n_embd,
                               std::vector<TokenId> names)
    : request_(std::move(request)), seq_(seq), tokenizer_(tokenizer), order_(order),
      sampler_(request_.params.sampling), text_(request_.params.stop_strings),
      history_(request_.params.prompt), names_(std::move(names)), prompt_done_(reused),
      reused_(reused), lookup_(lookup), admitted_(std::chrono::steady_clock::now()) {
  sampler_.set_filter(request_.params.constraint);
  if (const auto& e = request_.params.embedding)
    pooler_.emplace(e->pooling, n_embd, static_cast<int64_t>(request_.params.prompt.size()),
                    e->options);
}

int64_t ActiveSequence::draft_limit() const {
  if (!pending_ || request_.params.images || lookup_.draft_max <= 0)
    return 0;
  const int64_t max_tokens = request_.params.max_tokens; // k drafted tokens give k + 1 at most
  return std::max<int64_t>(
      0, std::min<int64_t>(lookup_.draft_max,
                           max_tokens < 0 ? lookup_.draft_max : max_tokens - n_generated_ - 1));
}

int64_t ActiveSequence::propose() {
  draft_.clear();
  if (const int64_t limit = draft_limit(); limit > 0)
    draft_ = draft_from_history(history_, lookup_, limit);
  return static_cast<int64_t>(draft_.size());
}

SequenceProgress ActiveSequence::progress() const {
  SequenceProgress p;
  p.id = request_.id;
  p.n_prompt = static_cast<int64_t>(request_.params.prompt.size());
  p.n_prompt_read = prompt_done_;
  p.n_cached = reused_;
  p.n_generated = n_generated_;
  p.generating = pending_.has_value();
  p.ms_running = ms_between(admitted_, std::chrono::steady_clock::now());
  return p;
}

int64_t ActiveSequence::prompt_left() const {
  return static_cast<int64_t>(request_.params.prompt.size()) - prompt_done_;
}

void ActiveSequence::append_entries(int64_t n, std::vector<BatchEntry>& pass) const {
  const auto& prompt = request_.params.prompt;
  const PromptImages* images = request_.params.images.get();
  const auto n_prompt = static_cast<int64_t>(prompt.size());
  // With images every entry carries its M-RoPE positions, and the images' tokens their rows.
  auto add = [&](TokenId token, int64_t slot, bool logits) {
    BatchEntry e{seq_, token, logits && !pooler_};
    e.hidden = pooler_ && pooler_->wants(slot);
    if (images) {
      e.rope = mrope_position(images->spans, slot);
      // The prompt's names (none past an unnamed image: caching ends there); a generated
      // token is named by itself.
      e.cache_key = slot >= n_prompt                             ? token
                    : slot < static_cast<int64_t>(names_.size()) ? names_[static_cast<size_t>(slot)]
                                                                 : kNoCacheKey;
      if (const int64_t i = image_at(images->spans, slot); i >= 0) {
        const ImageSpan& span = images->spans[static_cast<size_t>(i)];
        const PromptImage& image = images->images[static_cast<size_t>(i)];
        const int64_t row = (slot - span.begin) * image.n_embd;
        e.embedding = image.rows.data() + row;
        if (image.n_deepstack > 0) {
          e.deepstack = image.deepstack.data() + row;
          e.deepstack_stride = span.n_tokens() * image.n_embd;
          e.deepstack_layers = image.n_deepstack;
        }
      }
    }
    pass.push_back(e);
  };
  if (pending_) {
    const int64_t slot = n_prompt + n_generated_ - 1; // the slot after the last one fed
    add(*pending_, slot, true);
    for (int64_t j = 0; j + 1 < n && j < static_cast<int64_t>(draft_.size()); ++j)
      add(draft_[static_cast<size_t>(j)], slot + 1 + j, true);
    return;
  }
  for (int64_t i = prompt_done_; i < prompt_done_ + n; ++i)
    add(prompt[static_cast<size_t>(i)], i, i + 1 == n_prompt);
}

ActiveSequence::Advanced ActiveSequence::advance(int64_t n, std::span<const float> rows,
                                                 int64_t context_left,
                                                 std::span<const float> hidden) {
  Advanced out;
  const bool decoding = pending_.has_value();
  if (decoding) {
    pending_.reset();
  } else {
    const int64_t first = prompt_done_;
    prompt_done_ += n;
    if (prompt_left() == 0)
      prompt_done_at_ = std::chrono::steady_clock::now();
    if (pooler_) {
      pool(first, hidden);
      if (prompt_left() == 0) {
        out.events.push_back(event(FinishReason::kStop));
        out.events.back().embedding = pooler_->finish(request_.params.embedding->options);
      }
      return out;
    }
  }
  if (rows.empty())
    return out;
  const size_t n_vocab = decoding ? rows.size() / static_cast<size_t>(n) : rows.size();
  const auto checked = decoding ? static_cast<size_t>(n - 1) : 0; // drafted tokens fed
  out.checked = static_cast<int64_t>(checked);
  for (size_t j = 0;; ++j) {
    // Row j follows the pending token and j drafted ones: plain decoding would sample
    // this position with that much less context used.
    out.events.push_back(sample(rows.subspan(j * n_vocab, n_vocab),
                                context_left + static_cast<int64_t>(checked - j)));
    const SequenceEvent& e = out.events.back();
    if (e.finish != FinishReason::kNone || j == checked || e.token != draft_[j]) {
      out.drop = e.finish != FinishReason::kNone ? 0 : static_cast<int64_t>(checked - j);
      return out;
    }
    pending_.reset(); // drafted token j is already in the cache: its row is next
    ++out.accepted;
  }
}

void ActiveSequence::pool(int64_t first, std::span<const float> hidden) {
  const auto width = static_cast<size_t>(pooler_->n_embd());
  size_t at = 0;
  for (int64_t i = first; i < prompt_done_ && at + width <= hidden.size(); ++i)
    if (pooler_->wants(i)) {
      pooler_->add(i, hidden.subspan(at, width));
      at += width;
    }
}

SequenceEvent ActiveSequence::sample(std::span<const float> logits, int64_t context_left) {
  const RequestParams& p = request_.params;
  if (p.max_tokens == 0)
    return event(FinishReason::kLength);
  const TokenId t = sampler_.sample(logits, history_);
  if (t == kNoToken)
    return end(FinishReason::kError, sampler_.filter_status());
  if (n_generated_ == 0)
    first_token_at_ = std::chrono::steady_clock::now();
  const bool stop_token =
      ((!p.ignore_eos || p.constraint) && tokenizer_.is_end_of_generation(t)) ||
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
  else if ((p.max_tokens >= 0 && n_generated_ >= p.max_tokens) || context_left <= 0 ||
           past_predict_time())
    finish = FinishReason::kLength;
  newline_seen_ = newline_seen_ || piece.text.find('\n') != std::string::npos;
  SequenceEvent e = event(finish);
  e.token = t;
  e.text = std::move(piece.text);
  e.stop_string = piece.stop_index;
  if (finish == FinishReason::kLength)
    e.text += text_.flush();
  if ((p.logprobs || p.top_logprobs > 0) && p.post_sampling_probs) {
    std::vector<std::pair<TokenId, double>> top;
    e.logprob = static_cast<float>(
        std::log(sampler_.drawn_distribution(t, static_cast<size_t>(p.top_logprobs), top)));
    for (const auto& [id, prob] : top)
      e.top.push_back({id, static_cast<float>(std::log(prob))});
  } else if (p.logprobs || p.top_logprobs > 0) {
    e.logprob = static_cast<float>(logits[static_cast<size_t>(t)] - log_sum_exp(logits));
    e.top = top_logprobs(logits, p.top_logprobs);
  }
  if (finish == FinishReason::kNone)
    pending_ = t;
  return e;
}

bool ActiveSequence::past_predict_time() const {
  const int64_t limit = request_.params.max_predict_ms;
  return limit > 0 && newline_seen_ &&
         std::chrono::steady_clock::now() - first_token_at_ > std::chrono::milliseconds(limit);
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
