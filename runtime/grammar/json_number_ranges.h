// Numeric bounds for json_schema_grammar.cpp: a schema's minimum / maximum (and their
// exclusive forms) read as whole-number bounds, and the integers or decimals between
// them as GBNF digit patterns. Private to runtime/grammar; GBNF has no arithmetic, so a
// range like [95, 1234] has to be spelled out digit by digit:
//
//   integer_range(95, 1234) // -> "9" [5-9] | [1-9] [0-9]{2} | "1" [0-1] [0-9]{2} | ...
//
// The alternatives are disjoint, so the grammar stays unambiguous, and numbers have at
// most 16 integer digits (as the shared `integer` and `number` rules).
#pragma once

#include "runtime/core/status.h"
#include "runtime/grammar/json_schema_keywords.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pshard::json_grammar {

struct Bound {
  int64_t value = 0;
  bool exclusive = false;
};

// Reads minimum / exclusiveMinimum (or the maximums) as whole-number bounds.
class BoundReader {
public:
  BoundReader(const Json& s, const std::string& ptr, bool integer)
      : s_(s), ptr_(ptr), integer_(integer) {}

  // The tightest bound on one side; none when there is none or it lies past what
  // 16 digits can reach anyway.
  Result<std::optional<Bound>> read(bool lower);

private:
  Status tighten(std::optional<Bound>& best, const Json& v, bool exclusive, bool lower,
                 const char* key);

  const Json& s_;
  const std::string& ptr_;
  bool integer_;
};

// Alternatives matching the integers in [lo, hi] (none: unbounded).
std::vector<std::string> integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi);

// Alternatives matching the decimals (no exponent) between the bounds; at least one
// bound is given.
std::vector<std::string> number_range(std::optional<Bound> lower, std::optional<Bound> upper);

} // namespace pshard::json_grammar
