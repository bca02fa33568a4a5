// A small streaming JSON writer for the tools' --json outputs: keys in the order
// written (stable, for diffs), strings escaped, floats printed round-trippable.
//
//   JsonWriter j(std::cout);
//   j.begin_object();
//   j.key("text").value("hi");
//   j.key("ids").begin_array().value(1).value(2).end_array();
//   j.end_object();
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>
#include <vector>

namespace pshard {

class JsonWriter {
public:
  explicit JsonWriter(std::ostream& out, bool pretty = true) : out_(out), pretty_(pretty) {}

  JsonWriter& begin_object();
  JsonWriter& end_object();
  // inline_items: keep the items on one line (for arrays of numbers).
  JsonWriter& begin_array(bool inline_items = false);
  JsonWriter& end_array();
  JsonWriter& key(std::string_view k);
  JsonWriter& value(std::string_view s);
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(double d);
  JsonWriter& value(int64_t i);
  JsonWriter& value(int32_t i) { return value(static_cast<int64_t>(i)); }
  JsonWriter& value(uint64_t u);
  JsonWriter& value(bool b);
  JsonWriter& null();

  static void write_escaped(std::ostream& out, std::string_view s);

private:
  void before_value();
  void newline();

  std::ostream& out_;
  bool pretty_;
  struct Level {
    bool is_object;
    bool inline_items = false;
    bool empty = true;
  };
  std::vector<Level> stack_;
  bool after_key_ = false;
};

} // namespace pshard
