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

void JsonWriter::write_escaped(std::ostream& out, std::string_view s) {
  out << '"';
  for (unsigned char c : s) {
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
        out << static_cast<char>(c); // UTF-8 passes through
      }
    }
  }
  out << '"';
}

} // namespace pshard
