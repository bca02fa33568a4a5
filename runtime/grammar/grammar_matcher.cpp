#include "runtime/grammar/grammar_matcher.h"

#include <algorithm>
#include <cstring>

namespace pshard {
namespace {

constexpr GrammarMatcher::State kUnknown = -2;

std::string key_of(const std::vector<std::vector<int32_t>>& stacks) {
  std::string key;
  for (const auto& s : stacks) {
    const auto n = static_cast<int32_t>(s.size());
    key.append(reinterpret_cast<const char*>(&n), sizeof n);
    key.append(reinterpret_cast<const char*>(s.data()), s.size() * sizeof(int32_t));
  }
  return key;
}

} // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar)
    : grammar_(std::move(grammar)) {
  current_ = start_state();
}

GrammarMatcher::State GrammarMatcher::start_state() {
  StackSet start;
  for (int32_t alt : grammar_->alternatives[grammar_->root])
    if (!expand(Stack{alt}, start))
      return kDead;
  std::sort(start.begin(), start.end());
  start.erase(std::unique(start.begin(), start.end()), start.end());
  return start.empty() ? kDead : intern(std::move(start));
}

void GrammarMatcher::reset() {
  states_.clear();
  index_.clear();
  ++epoch_;
  current_ = start_state();
}

bool GrammarMatcher::expand(Stack stack, StackSet& out) const {
  const auto& elements = grammar_->elements;
  std::vector<Stack> work{std::move(stack)};
  while (!work.empty()) {
    Stack s = std::move(work.back());
    work.pop_back();
    if (s.size() > kMaxDepth)
      return false;
    if (s.empty()) { // root is complete
      out.push_back(std::move(s));
      continue;
    }
    const int32_t p = s.back();
    const GrammarElement& e = elements[p];
    if (e.kind == GrammarElement::kBytes) {
      out.push_back(std::move(s));
    } else if (e.kind == GrammarElement::kEnd) { // return to the caller, past its reference
      s.pop_back();
      if (!s.empty())
        ++s.back();
      work.push_back(std::move(s));
    } else {
      // A reference last in its alternative needs no return position: the callee
      // returns straight to our caller. This keeps `x*` (x star) from growing the stack.
      if (elements[p + 1].kind == GrammarElement::kEnd)
        s.pop_back();
      for (int32_t alt : grammar_->alternatives[e.index]) {
        Stack next = s;
        next.push_back(alt);
        work.push_back(std::move(next));
      }
    }
    if (out.size() > kMaxStacks)
      return false;
  }
  return true;
}

GrammarMatcher::State GrammarMatcher::intern(StackSet stacks) {
  std::string key = key_of(stacks);
  if (auto it = index_.find(key); it != index_.end())
    return it->second;
  StateInfo info;
  for (const Stack& s : stacks) {
    info.can_end = info.can_end || s.empty();
    info.can_continue = info.can_continue || !s.empty();
  }
  info.stacks = std::move(stacks);
  const auto id = static_cast<State>(states_.size());
  states_.push_back(std::move(info));
  index_.emplace(std::move(key), id);
  return id;
}

GrammarMatcher::State GrammarMatcher::step(State from, uint8_t byte) {
  if (from < 0)
    return kDead;
  if (states_[from].next.empty())
    states_[from].next.assign(256, kUnknown);
  if (const State known = states_[from].next[byte]; known != kUnknown)
    return known;
  StackSet out;
  bool within_guards = true;
  for (const Stack& s : states_[from].stacks) {
    if (s.empty() || !grammar_->byte_sets[grammar_->elements[s.back()].index].has(byte))
      continue;
    Stack moved = s;
    ++moved.back();
    if (!expand(std::move(moved), out)) {
      within_guards = false;
      break;
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  const State to = within_guards && !out.empty() ? intern(std::move(out)) : kDead;
  states_[from].next[byte] = to; // intern() may have moved states_
  return to;
}

bool GrammarMatcher::can_end(State s) const { return s >= 0 && states_[s].can_end; }
bool GrammarMatcher::can_continue(State s) const { return s >= 0 && states_[s].can_continue; }

bool GrammarMatcher::accept(std::string_view bytes) {
  if (states_.size() > static_cast<size_t>(kMaxStates))
    start_over();
  State s = current_;
  for (char c : bytes) {
    s = step(s, static_cast<uint8_t>(c));
    if (s == kDead)
      return false;
  }
  current_ = s;
  return true;
}

void GrammarMatcher::start_over() {
  if (current_ < 0)
    return;
  StackSet keep = std::move(states_[current_].stacks);
  states_.clear();
  index_.clear();
  ++epoch_;
  current_ = intern(std::move(keep));
}

} // namespace pshard
