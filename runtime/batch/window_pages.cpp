#include "runtime/batch/window_pages.h"

#include <algorithm>
#include <string>

namespace pshard {

WindowPages::WindowPages(int64_t window, int64_t max_pass, int64_t page_tokens, int64_t n_pages,
                         int64_t full_pages, int64_t max_sequences, int64_t pages_per_sequence)
    : window_(window), max_pass_(max_pass), page_tokens_(page_tokens), n_pages_(window > 0 ? n_pages : 0),
      per_seq_(pages_per_sequence) {
  if (!enabled())
    return;
  held_.resize(static_cast<size_t>(max_sequences));
  tables_.assign(static_cast<size_t>(max_sequences * per_seq_), 0);
  users_.assign(static_cast<size_t>(n_pages_), 0);
  full_.assign(static_cast<size_t>(n_pages_), -1);
  full_generation_.assign(static_cast<size_t>(n_pages_), 0);
  idle_at_.resize(static_cast<size_t>(n_pages_));
  is_idle_.assign(static_cast<size_t>(n_pages_), 0);
  window_of_.assign(static_cast<size_t>(full_pages), -1);
  for (int64_t page = n_pages_ - 1; page >= 0; --page)
    free_.push_back(static_cast<int32_t>(page));
}

int64_t WindowPages::first_needed(int64_t length) const {
  return std::max<int64_t>(0, length - window_ + 1) / page_tokens_;
}

int64_t WindowPages::net_new(SeqId seq, int64_t start, int64_t pages_after) const {
  if (!enabled())
    return 0;
  const Held& h = held_[static_cast<size_t>(seq)];
  const int32_t* t = tables_.data() + seq * per_seq_;
  const int64_t first = first_needed(start);
  int64_t freed = 0;
  for (int64_t i = h.first; i < std::min(first, h.end); ++i)
    freed += users_[static_cast<size_t>(t[i])] == 1;
  return std::max<int64_t>(0, pages_after - std::max(h.end, first)) - freed;
}

int64_t WindowPages::append_need(SeqId seq, int64_t length, int64_t n) const {
  const int64_t end = length + n;
  return net_new(seq, end - std::min(n, max_pass_), (end + page_tokens_ - 1) / page_tokens_);
}

void WindowPages::trim(SeqId seq, int64_t length) {
  if (!enabled())
    return;
  Held& h = held_[static_cast<size_t>(seq)];
  int32_t* t = table(seq);
  const int64_t first = std::min(std::max(h.first, first_needed(length)), h.end);
  for (; h.first < first; ++h.first) {
    drop_page(t[h.first]);
    t[h.first] = 0;
  }
}

void WindowPages::take(SeqId seq, int64_t length, int64_t pages_after) {
  if (!enabled())
    return;
  trim(seq, length);
  Held& h = held_[static_cast<size_t>(seq)];
  if (h.end == h.first) // nothing held: the held run starts where the pass writes
    h.first = h.end = std::max(h.end, first_needed(length));
  int32_t* t = table(seq);
  while (h.end < pages_after)
    t[h.end++] = take_page();
}

Status WindowPages::rewind(SeqId seq, int64_t length, int64_t pages) {
  if (!enabled())
    return Status::ok_status();
  Held& h = held_[static_cast<size_t>(seq)];
  if (length > 0 && first_needed(length) < h.first)
    return out_of_range("cannot rewind sequence " + std::to_string(seq) + " to " +
                        std::to_string(length) +
                        " positions: its sliding-window layers have let go of the positions "
                        "that window reads; rewind at most to the start of its last pass, or "
                        "keep whole caches (--swa-full)");
  if (length == 0) {
    close(seq);
    return Status::ok_status();
  }
  drop_after(seq, pages);
  return Status::ok_status();
}

void WindowPages::drop_after(SeqId seq, int64_t pages) {
  if (!enabled())
    return;
  Held& h = held_[static_cast<size_t>(seq)];
  int32_t* t = table(seq);
  while (h.end > std::max(pages, h.first)) {
    drop_page(t[--h.end]);
    t[h.end] = 0;
  }
  if (h.end == h.first)
    h.first = h.end = std::min(h.first, pages);
}

void WindowPages::close(SeqId seq) {
  if (!enabled())
    return;
  Held& h = held_[static_cast<size_t>(seq)];
  int32_t* t = table(seq);
  for (int64_t i = h.end - 1; i >= h.first; --i) { // later pages first: evicted first
    drop_page(t[i]);
    t[i] = 0;
  }
  h = Held{};
}

void WindowPages::link(SeqId seq, int64_t index, int32_t full, uint32_t generation) {
  if (!enabled())
    return;
  const Held& h = held_[static_cast<size_t>(seq)];
  if (index < h.first || index >= h.end)
    return;
  const int32_t page = table(seq)[index];
  full_[static_cast<size_t>(page)] = full;
  full_generation_[static_cast<size_t>(page)] = generation;
  window_of_[static_cast<size_t>(full)] = page;
}

void WindowPages::unlink(SeqId seq, int64_t index) {
  if (!enabled())
    return;
  const Held& h = held_[static_cast<size_t>(seq)];
  if (index >= h.first && index < h.end)
    full_[static_cast<size_t>(table(seq)[index])] = -1;
}

bool WindowPages::linked(int32_t page, int32_t full, uint32_t generation) const {
  return page >= 0 && full_[static_cast<size_t>(page)] == full &&
         full_generation_[static_cast<size_t>(page)] == generation;
}

int64_t WindowPages::share(SeqId seq, std::span<const int32_t> full,
                           std::span<const uint32_t> generations) {
  if (!enabled())
    return static_cast<int64_t>(full.size());
  auto cached = [&](int64_t k) { // are pages [first_needed(k pages), k) all still cached?
    for (int64_t i = first_needed(k * page_tokens_); i < k; ++i) {
      const int32_t f = full[static_cast<size_t>(i)];
      if (!linked(window_of_[static_cast<size_t>(f)], f, generations[static_cast<size_t>(i)]))
        return false;
    }
    return true;
  };
  auto k = static_cast<int64_t>(full.size());
  while (k > 0 && !cached(k))
    --k;
  Held& h = held_[static_cast<size_t>(seq)];
  int32_t* t = table(seq);
  h.first = h.end = first_needed(k * page_tokens_);
  for (; h.end < k; ++h.end) {
    const int32_t page = window_of_[static_cast<size_t>(full[static_cast<size_t>(h.end)])];
    if (users_[static_cast<size_t>(page)]++ == 0 && is_idle_[static_cast<size_t>(page)]) {
      idle_.erase(idle_at_[static_cast<size_t>(page)]);
      is_idle_[static_cast<size_t>(page)] = 0;
    }
    t[h.end] = page;
  }
  return k;
}

int32_t WindowPages::take_page() {
  int32_t page = -1;
  if (!free_.empty()) {
    page = free_.back();
    free_.pop_back();
  } else { // net_new counted it
    page = idle_.front();
    idle_.pop_front();
    is_idle_[static_cast<size_t>(page)] = 0;
  }
  full_[static_cast<size_t>(page)] = -1; // other positions from now on
  users_[static_cast<size_t>(page)] = 1;
  return page;
}

void WindowPages::drop_page(int32_t page) {
  if (--users_[static_cast<size_t>(page)] > 0)
    return;
  if (full_[static_cast<size_t>(page)] < 0) {
    free_.push_back(page);
    return;
  }
  idle_at_[static_cast<size_t>(page)] = idle_.insert(idle_.end(), page);
  is_idle_[static_cast<size_t>(page)] = 1;
}

int64_t WindowPages::rows_spanned() const {
  for (int64_t page = n_pages_ - 1; page >= 0; --page)
    if (users_[static_cast<size_t>(page)] || is_idle_[static_cast<size_t>(page)])
      return (page + 1) * page_tokens_;
  return 0;
}

} // namespace pshard
