// Numeric bounds and the digit patterns between them (json_number_ranges.h).
#include "runtime/grammar/json_number_ranges.h"

#include "runtime/grammar/gbnf_text.h"

#include <algorithm>
#include <cmath>

namespace pshard::json_grammar {
namespace {

constexpr int kIntDigits = 16; // integer digits a number may have

uint64_t pow10(int n) {
  uint64_t v = 1;
  while (n-- > 0)
    v *= 10;
  return v;
}
int digit_count(uint64_t v) { return static_cast<int>(std::to_string(v).size()); }

std::string digit_class(char lo, char hi) {
  return lo == hi ? literal(std::string(1, lo)) : std::string("[") + lo + "-" + hi + "]";
}
std::string any_digits(int64_t min, int64_t max) {
  if (max == 0)
    return "";
  return repeat("[0-9]", min, max);
}

// Alternatives matching the decimal strings from `lo` to `hi` (as long as each other),
// after the fixed digits `prefix`; disjoint, so the grammar stays unambiguous.
void same_length_range(std::string lo, std::string hi, std::string prefix,
                       std::vector<std::string>& alts) {
  size_t i = 0;
  while (i < lo.size() && lo[i] == hi[i])
    ++i;
  prefix += lo.substr(0, i);
  lo.erase(0, i);
  hi.erase(0, i);
  const std::string head = prefix.empty() ? "" : literal(prefix);
  if (lo.empty()) {
    alts.push_back(head);
    return;
  }
  const size_t rest = lo.size() - 1;
  const bool lo_zeros = lo.find_first_not_of('0', 1) == std::string::npos;
  const bool hi_nines = hi.find_first_not_of('9', 1) == std::string::npos;
  char first = lo[0], last = hi[0];
  if (!lo_zeros) { // lo..l99: its own tail
    same_length_range(lo, std::string(1, lo[0]) + std::string(rest, '9'), prefix, alts);
    ++first;
  }
  if (!hi_nines)
    --last;
  if (first <= last)
    alts.push_back(seq({head, digit_class(first, last),
                        any_digits(static_cast<int64_t>(rest), static_cast<int64_t>(rest))}));
  if (!hi_nines) // h00..hi
    same_length_range(std::string(1, hi[0]) + std::string(rest, '0'), hi, prefix, alts);
}

// Alternatives matching the naturals in [lo, hi] written without leading zeros (hi none:
// up to kIntDigits digits, or lo's length if longer). lo <= hi < 10^18.
std::vector<std::string> natural_range(uint64_t lo, std::optional<uint64_t> hi) {
  std::vector<std::string> alts;
  const int max_len = hi ? digit_count(*hi) : std::max(kIntDigits, digit_count(lo));
  if (lo == 0) {
    alts.push_back(literal("0"));
    if (hi && *hi == 0)
      return alts;
    lo = 1;
  }
  for (int len = digit_count(lo); len <= max_len; ++len) {
    const uint64_t first = pow10(len - 1), last = pow10(len) - 1;
    const uint64_t a = std::max(lo, first), b = hi ? std::min(*hi, last) : last;
    if (a > b)
      continue;
    if (a == first && b == last) { // whole lengths len..len2: [1-9] [0-9]{len-1,len2-1}
      int len2 = len;
      while (len2 < max_len && (!hi || *hi >= pow10(len2 + 1) - 1))
        ++len2;
      alts.push_back(seq({"[1-9]", any_digits(len - 1, len2 - 1)}));
      len = len2;
      continue;
    }
    same_length_range(std::to_string(a), std::to_string(b), "", alts);
  }
  return alts;
}

// Alternatives matching decimals `I` or `I.F` (F up to 16 digits) whose value is above
// `lower` and below `upper` (none: unbounded), 0 <= lower.value. Integer parts in
// [lower+1 or lower, upper-1] take any fraction, upper itself only zeros, and an
// exclusive lower bound itself only a fraction that is not zero (its first non-zero digit
// among the first 8, so that it stays within 16 digits).
std::vector<std::string> decimal_range(Bound lower, std::optional<Bound> upper) {
  std::vector<std::string> alts;
  const int64_t ilo = lower.exclusive ? lower.value + 1 : lower.value;
  const std::optional<int64_t> ihi =
      upper ? std::optional<int64_t>(upper->value - 1) : std::optional<int64_t>();
  if (!ihi || ilo <= *ihi) {
    const auto ints =
        natural_range(static_cast<uint64_t>(ilo),
                      ihi ? std::optional<uint64_t>(static_cast<uint64_t>(*ihi)) : std::nullopt);
    alts.push_back(seq({group(ints), R"(( "." [0-9]{1,16} )?)"}));
  }
  if (upper && !upper->exclusive &&
      (lower.exclusive ? upper->value > lower.value : upper->value >= lower.value))
    alts.push_back(seq({literal(std::to_string(upper->value)), R"(( "." "0"{1,16} )?)"}));
  if (lower.exclusive && (!upper || upper->value > lower.value))
    alts.push_back(seq({literal(std::to_string(lower.value)), R"("." "0"{0,7} [1-9] [0-9]{0,8})"}));
  return alts;
}

} // namespace

// ---------------------------------------------------------------------------------------
// Bounds

Result<std::optional<Bound>> BoundReader::read(bool lower) {
  const char* plain = lower ? "minimum" : "maximum";
  const char* excl = lower ? "exclusiveMinimum" : "exclusiveMaximum";
  std::optional<Bound> best;
  const Json* p = member(s_, plain);
  const Json* e = member(s_, excl);
  if (p && !p->is_number())
    return bad_keyword(ptr_, plain, "must be a number");
  if (e && !e->is_number() && !e->is_boolean())
    return bad_keyword(ptr_, excl, "must be a number (or, in draft 4, a boolean)");
  const bool draft4_exclusive = e && e->is_boolean() && e->get<bool>();
  if (e && e->is_boolean() && !p && draft4_exclusive)
    return bad_keyword(ptr_, excl, std::string("is true without '") + plain + "'");
  if (p)
    PSHARD_RETURN_IF_ERROR(tighten(best, *p, draft4_exclusive, lower, plain));
  if (e && e->is_number())
    PSHARD_RETURN_IF_ERROR(tighten(best, *e, true, lower, excl));
  return best;
}

Status BoundReader::tighten(std::optional<Bound>& best, const Json& v, bool exclusive, bool lower,
                            const char* key) {
  // long double holds every int64 and every double exactly.
  long double x = v.is_number_unsigned()  ? static_cast<long double>(v.get<uint64_t>())
                  : v.is_number_integer() ? static_cast<long double>(v.get<int64_t>())
                                          : static_cast<long double>(v.get<double>());
  if (!std::isfinite(x))
    return bad_keyword(ptr_, key, "must be finite");
  Bound b;
  if (integer_) { // the nearest integer inside, inclusive
    x = lower ? (exclusive ? std::floor(x) + 1 : std::ceil(x))
              : (exclusive ? std::ceil(x) - 1 : std::floor(x));
    exclusive = false;
  } else if (std::floor(x) != x) {
    return unsupported_keyword(ptr_, key, "a number's bounds must be whole numbers");
  }
  const long double reach = static_cast<long double>(pow10(kIntDigits));
  if (lower ? x <= -reach : x >= reach)
    return Status::ok_status(); // looser than the digit limit: no bound
  if (lower ? x >= reach : x <= -reach)
    return unsupported_keyword(ptr_, key, "it needs numbers longer than 16 digits");
  b.value = static_cast<int64_t>(x);
  b.exclusive = exclusive;
  const bool tighter = !best || (lower ? b.value > best->value : b.value < best->value) ||
                       (b.value == best->value && b.exclusive);
  if (tighter)
    best = b;
  return Status::ok_status();
}

// ---------------------------------------------------------------------------------------
// Ranges

std::vector<std::string> integer_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
  std::vector<std::string> alts;
  if (!hi || *hi >= 0) {
    const uint64_t from = lo && *lo > 0 ? static_cast<uint64_t>(*lo) : 0;
    auto nat = natural_range(from, hi ? std::optional<uint64_t>(*hi) : std::nullopt);
    alts.insert(alts.end(), nat.begin(), nat.end());
  }
  if (!lo || *lo < 0) { // magnitudes of the negatives
    const uint64_t from = hi && *hi < 0 ? static_cast<uint64_t>(-*hi) : 1;
    auto nat = natural_range(from, lo ? std::optional<uint64_t>(-*lo) : std::nullopt);
    alts.push_back(seq({literal("-"), group(nat)}));
  }
  return alts;
}

std::vector<std::string> number_range(std::optional<Bound> lower, std::optional<Bound> upper) {
  std::vector<std::string> alts;
  const bool has_nonnegative =
      !upper || upper->value > 0 || (upper->value == 0 && !upper->exclusive);
  if (has_nonnegative) {
    const Bound from = lower && lower->value >= 0 ? *lower : Bound{0, false};
    auto d = decimal_range(from, upper);
    alts.insert(alts.end(), d.begin(), d.end());
  }
  if (!lower || lower->value < 0) { // magnitudes of the negatives, above zero
    const Bound from =
        upper && upper->value < 0 ? Bound{-upper->value, upper->exclusive} : Bound{0, true};
    std::optional<Bound> to;
    if (lower)
      to = Bound{-lower->value, lower->exclusive};
    auto d = decimal_range(from, to);
    if (!d.empty())
      alts.push_back(seq({literal("-"), group(d)}));
  }
  return alts;
}

} // namespace pshard::json_grammar
