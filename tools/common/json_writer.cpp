#include "tools/common/json_writer.h"

#include <cmath>
#include <cstdio>

namespace pshard {

void JsonWriter::newline() {
  if (!pretty_)
    return;
  out_ << '\n';
  for (size_t i = 0; i < stack_.size(); ++i)
    out_ << "  ";
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (stack_.empty())
    return;
  if (!stack_.back().empty)
    out_ << (stack_.back().inline_items && pretty_ ? ", " : ",");
  stack_.back().empty = false;
  if (!stack_.back().inline_items)
    newline();
}

JsonWriter& JsonWriter::begin_object() {
  before_value();
  out_ << '{';
  stack_.push_back({true});
  return *this;
}

JsonWriter& JsonWriter::begin_array(bool inline_items) {
  before_value();
  out_ << '[';
  stack_.push_back({false, inline_items});
  return *this;
}

JsonWriter& JsonWriter::end_object() { return end_array(); }

JsonWriter& JsonWriter::end_array() {
  const Level level = stack_.back();
  stack_.pop_back();
  if (!level.empty && !level.inline_items)
    newline();
  const bool is_object = level.is_object;
  out_ << (is_object ? '}' : ']');
  if (stack_.empty() && pretty_)
    out_ << '\n';
  return *this;
}

JsonWriter& JsonWriter::key(std::string_view k) {
  before_value();
  write_escaped(out_, k);
  out_ << (pretty_ ? ": " : ":");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::value(std::string_view s) {
  before_value();
  write_escaped(out_, s);
  return *this;
}

JsonWriter& JsonWriter::value(double d) {
  before_value();
  if (!std::isfinite(d)) {
    out_ << "null"; // JSON has no inf/nan
    return *this;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", d);
  out_ << buf;
  return *this;
}

JsonWriter& JsonWriter::value(int64_t i) {
  before_value();
  out_ << i;
  return *this;
}

JsonWriter& JsonWriter::value(uint64_t u) {
  before_value();
  out_ << u;
  return *this;
}

JsonWriter& JsonWriter::value(bool b) {
  before_value();
  out_ << (b ? "true" : "false");
  return *this;
}

JsonWriter& JsonWriter::null() {
  before_value();
  out_ << "null";
  return *this;
}

namespace {

// Length of the well-formed UTF-8 sequence at s[i], or 0 when the bytes there are not
// one (a stray continuation byte, a truncated sequence, an overlong form, a surrogate,
// or past U+10FFFF). Generated text can hold such bytes: byte-fallback tokens spell a
// character over several tokens, and a generation may stop in the middle of one.
size_t utf8_sequence_length(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF; // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    lo = c == 0xE0 ? 0xA0 : 0x80; // no overlong forms
    hi = c == 0xED ? 0x9F : 0xBF; // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    lo = c == 0xF0 ? 0x90 : 0x80;
    hi = c == 0xF4 ? 0x8F : 0xBF; // nothing past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size() || byte(i + 1) < lo || byte(i + 1) > hi)
    return 0;
  for (size_t k = 2; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80)
      return 0;
  return n;
}

} // namespace

void JsonWriter::write_escaped(std::ostream& out, std::string_view s) {
  out << '"';
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) { // JSON must be valid UTF-8: a malformed byte becomes U+FFFD
      const size_t n = utf8_sequence_length(s, i);
      if (n == 0) {
        out << "\\ufffd";
        ++i;
      } else {
        out << s.substr(i, n);
        i += n;
      }
      continue;
    }
    switch (c) {
    case '"': out << "\\\""; break;
    case '\\': out << "\\\\"; break;
    case '\n': out << "\\n"; break;
    case '\r': out << "\\r"; break;
    case '\t': out << "\\t"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out << buf;
      } else {
        out << static_cast<char>(c);
      }
    }
    ++i;
  }
  out << '"';
}

} // namespace pshard
