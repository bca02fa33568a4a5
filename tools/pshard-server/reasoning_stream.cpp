// A thinking model's answer split into reasoning and content (reasoning.h), whole and as
// it streams: text only.
#include "tools/pshard-server/reasoning.h"
#include "tools/pshard-server/text_space.h"

#include <algorithm>

namespace pshard::server {
namespace {

// The length of the longest end of `s` that begins `tag` (a tag the next text may finish).
size_t partial_tag(std::string_view s, std::string_view tag) {
  for (size_t keep = std::min(tag.size() - 1, s.size()); keep > 0; --keep)
    if (s.substr(s.size() - keep) == tag.substr(0, keep))
      return keep;
  return 0;
}

} // namespace

std::optional<ReasoningFormat> parse_reasoning_format(std::string_view name) {
  if (name == "none")
    return ReasoningFormat::kNone;
  if (name == "deepseek" || name == "auto")
    return ReasoningFormat::kDeepseek;
  return std::nullopt;
}

ReasoningStream::Piece ReasoningStream::push(std::string_view text, bool last) {
  const std::string_view kOpen = tags_->open, kClose = tags_->close, kAnswer = tags_->answer;
  auto opens = [](std::string_view text, std::string_view tag) {
    return !tag.empty() && text.substr(0, tag.size()) == tag;
  };
  auto may_open = [](std::string_view text, std::string_view tag) {
    return !tag.empty() && tag.substr(0, text.size()) == text;
  };
  Piece p;
  pending_ += text;
  for (bool more = true; more;) {
    more = false;
    switch (state_) {
    case State::kStart: {
      const std::string_view rest = std::string_view(pending_).substr(skip_space(pending_));
      if (rest.substr(0, kOpen.size()) == kOpen) {
        pending_.erase(0, pending_.size() - rest.size() + kOpen.size());
        state_ = State::kReasoning;
        more = true;
      } else if (opens(rest, kClose) || opens(rest, kAnswer)) { // no thought, or an empty one
        pending_.erase(0, pending_.size() - rest.size() +
                              (opens(rest, kClose) ? kClose.size() : kAnswer.size()));
        state_ = State::kContentStart;
        more = true;
      } else if (!last &&
                 (may_open(rest, kOpen) || may_open(rest, kClose) || may_open(rest, kAnswer))) {
        // Whitespace or the start of a tag: wait for more.
      } else {
        state_ = State::kContent;
        more = true;
      }
      break;
    }
    case State::kReasoning: {
      if (!reasoning_sent_)
        pending_.erase(0, skip_space(pending_));
      const size_t close = pending_.find(kClose);
      std::string_view sendable = pending_;
      if (close != std::string::npos)
        sendable = sendable.substr(0, close);
      else if (!last)
        sendable.remove_suffix(partial_tag(sendable, kClose));
      // Whitespace at the end waits for what follows it (dropped if it is the end).
      size_t end = sendable.size();
      while (end > 0 && is_space(sendable[end - 1]))
        --end;
      p.reasoning += sendable.substr(0, end);
      reasoning_sent_ = reasoning_sent_ || end > 0;
      if (close != std::string::npos) {
        pending_.erase(0, close + kClose.size());
        state_ = State::kContentStart;
        more = true;
      } else {
        pending_.erase(0, last ? pending_.size() : end);
      }
      break;
    }
    case State::kContentStart:
      pending_.erase(0, skip_space(pending_));
      if (!pending_.empty()) {
        state_ = State::kContent;
        more = true;
      }
      break;
    case State::kContent:
      p.content += pending_;
      pending_.clear();
      break;
    }
  }
  return p;
}

ReasoningSplit split_reasoning(std::string_view text, bool opened, const ThoughtTags& tags) {
  const std::string_view kOpen = tags.open, kClose = tags.close;
  ReasoningStream stream(opened, tags);
  ReasoningStream::Piece p = stream.push(text, /*last=*/true);
  ReasoningSplit s;
  s.content = std::move(p.content);
  const std::string_view rest = text.substr(skip_space(text));
  if (opened || rest.substr(0, kOpen.size()) == kOpen || rest.substr(0, kClose.size()) == kClose)
    s.reasoning = std::move(p.reasoning);
  return s;
}

int64_t ThoughtCounter::count() const {
  const std::string_view kOpen = tags_->open, kClose = tags_->close;
  const std::string_view text = text_;
  const size_t start = skip_space(text);
  const std::string_view rest = text.substr(start);
  size_t end = 0; // just past the thought's closing tag
  if (opened_) {
    const size_t close = text.find(kClose);
    end = close == std::string_view::npos ? text.size() : close + kClose.size();
  } else if (rest.substr(0, kOpen.size()) == kOpen) {
    const size_t close = text.find(kClose, start + kOpen.size());
    end = close == std::string_view::npos ? text.size() : close + kClose.size();
  } else if (rest.substr(0, kClose.size()) == kClose) {
    end = start + kClose.size();
  }
  if (end == 0)
    return 0;
  return std::upper_bound(token_ends_.begin(), token_ends_.end(), end) - token_ends_.begin();
}

} // namespace pshard::server
