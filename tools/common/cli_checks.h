// Range checks for the tools' numeric options, with messages a user can act on:
//   --emu-pcie: must be a positive number, got 0
//   --threads: must be between 0 and 1024, got -1
// (CLI11's own PositiveNumber prints its bound as a 300-digit double.) Header-only and
// CLI11-dependent: include it from the tools' mains only.
//
//   app.add_option("--temp", t, "temperature")->check(cli::at_least(0.0));
//   app.add_option("-t,--threads", n, "CPU threads")->check(cli::between(0, 1024));
#pragma once

#include <CLI/CLI.hpp>

#include <sstream>
#include <string>

namespace pshard::cli {

namespace detail {

inline std::string number_text(double v) {
  if (v == static_cast<double>(static_cast<long long>(v)))
    return std::to_string(static_cast<long long>(v)); // bounds are mostly integers
  std::ostringstream s;
  s << v;
  return s.str();
}

// A validator over the option's text read as a number; `ok` decides, `need` words it.
template <typename Ok>
CLI::Validator numeric(std::string need, Ok ok) {
  return CLI::Validator(
      [need, ok](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v))
          return "must be a number, got '" + text + "'";
        return ok(v) ? std::string() : "must be " + need + ", got " + text;
      },
      "", "");
}

} // namespace detail

inline CLI::Validator positive() {
  return detail::numeric("a positive number", [](double v) { return v > 0; });
}

inline CLI::Validator at_least(double lo) {
  return detail::numeric("at least " + detail::number_text(lo), [lo](double v) { return v >= lo; });
}

inline CLI::Validator between(double lo, double hi) {
  return detail::numeric("between " + detail::number_text(lo) + " and " + detail::number_text(hi),
                         [lo, hi](double v) { return v >= lo && v <= hi; });
}

// Thread counts any machine pshard runs on could have.
inline constexpr int kMaxThreads = 1024;

} // namespace pshard::cli
