// llama.cpp's sampler flags: --temp, --top-k, --top-p, --min-p, the penalties, and
// typical, top-n-sigma, XTC, dynamic temperature, Mirostat, DRY and the stages' order
// (--samplers, --sampling-seq; runtime/sampler/sampler.h says what each does). pshard-run
// samples with them; pshard-server takes them as what a request does not say.
// Header-only and CLI11-dependent: include it from the mains.
//
//   cli::add_sampler_options(app, o.sampling, o.dry_breaker_args);
//   PSHARD_ASSIGN_OR_RETURN(o.dry_breakers, cli::dry_breakers(o.dry_breaker_args));
#pragma once

#include "runtime/core/status.h"
#include "runtime/sampler/sampler.h"
#include "runtime/sampler/sampler_order.h"
#include "tools/common/cli_checks.h"

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pshard::cli {

inline void add_sampler_stage_options(CLI::App& app, SamplerParams& s,
                                      std::vector<std::string>& dry_breaker_args) {
  app.add_option("--typical", s.typical_p,
                 "locally typical sampling: keep the tokens whose surprise is nearest the "
                 "entropy, up to this probability mass (1: off)")
      ->check(between(0, 1));
  app.add_option("--top-nsigma", s.top_n_sigma,
                 "keep the tokens whose logit is within N standard deviations of the "
                 "largest (<= 0: off)");
  app.add_option("--xtc-probability", s.xtc_probability,
                 "XTC: how often to drop every token at or above --xtc-threshold but the "
                 "least likely of them (0: off)")
      ->check(between(0, 1));
  app.add_option("--xtc-threshold", s.xtc_threshold, "XTC's probability threshold")
      ->check(between(0, 1))
      ->capture_default_str();
  app.add_option("--dynatemp-range", s.dynatemp_range,
                 "dynamic temperature: --temp +- this, by the distribution's entropy (0: off)")
      ->check(at_least(0));
  app.add_option("--dynatemp-exp", s.dynatemp_exponent,
                 "dynamic temperature's exponent of the normalised entropy")
      ->check(positive())
      ->capture_default_str();
  app.add_option("--mirostat", s.mirostat,
                 "Mirostat's version, 1 or 2, instead of top-k, top-p, typical, min-p and XTC "
                 "(0: off)")
      ->check(between(0, 2));
  app.add_option("--mirostat-lr", s.mirostat_params.eta, "Mirostat's learning rate, eta")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--mirostat-ent", s.mirostat_params.tau, "Mirostat's target surprise in bits, tau")
      ->check(at_least(0))
      ->capture_default_str();
  app.add_option("--dry-multiplier", s.dry.multiplier,
                 "DRY: a token that would extend a repeat of N >= --dry-allowed-length tokens "
                 "loses this x --dry-base^(N - allowed length) of its logit (0: off)")
      ->check(at_least(0));
  app.add_option("--dry-base", s.dry.base, "DRY's base")->check(at_least(1))->capture_default_str();
  app.add_option("--dry-allowed-length", s.dry.allowed_length, "DRY: longest repeat left free")
      ->check(at_least(1))
      ->capture_default_str();
  app.add_option("--dry-penalty-last-n", s.dry.penalty_last_n,
                 "DRY: how many last tokens to look for repeats in (-1: all, 0: off)")
      ->check(at_least(-1))
      ->capture_default_str();
  auto order_flag = [&s](const char* flag, auto parse) {
    return [&s, flag, parse](const std::string& text) {
      Result<SamplerOrder> order = parse(text);
      if (!order.ok())
        throw CLI::ValidationError(flag, order.status().message());
      s.order = std::move(*order);
    };
  };
  auto* samplers = app.add_option_function<std::string>(
      "--samplers",
      order_flag("--samplers", [](const std::string& t) { return parse_sampler_names(t); }),
      "the sampler stages in order, separated by ';' (llama.cpp's names; a stage left out "
      "does not run); llama.cpp's order: "
      "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature. Default: " +
          sampler_order_names(default_sampler_order()));
  app.add_option_function<std::string>(
         "--sampling-seq,--sampler-seq",
         order_flag("--sampling-seq",
                    [](const std::string& t) { return parse_sampler_letters(t); }),
         "--samplers by letters: e(penalties) d(ry) s(top_n_sigma) k(top_k) y(typ_p) "
         "p(top_p) m(in_p) x(tc) t(emperature); llama.cpp's order: edskypmxt")
      ->excludes(samplers);
  app.add_option("--dry-sequence-breaker", dry_breaker_args,
                 "DRY: text that ends a repeat (\\n, \\t, \\\\ and \\\" escapes); repeatable; "
                 "replaces the defaults \\n : \" *; \"none\": no breakers");
}

// --dry-sequence-breaker's values as the C API takes them: nullopt for the defaults (none
// given), an empty list for "none", else each unescaped.
inline Result<std::optional<std::vector<std::string>>>
dry_breakers(const std::vector<std::string>& args) {
  if (args.empty())
    return std::optional<std::vector<std::string>>();
  if (args.size() == 1 && args[0] == "none")
    return std::optional<std::vector<std::string>>(std::vector<std::string>{});
  std::vector<std::string> out;
  for (const std::string& arg : args) {
    std::string text;
    for (size_t i = 0; i < arg.size(); ++i) {
      if (arg[i] != '\\' || i + 1 == arg.size()) {
        text += arg[i];
        continue;
      }
      const char c = arg[++i];
      if (c == 'n')
        text += '\n';
      else if (c == 't')
        text += '\t';
      else if (c == '\\' || c == '"')
        text += c;
      else
        return invalid_argument("--dry-sequence-breaker \"" + arg + "\": unknown escape \\" +
                                std::string(1, c) + "; use \\n, \\t, \\\\ or \\\"");
    }
    if (text.empty())
      return invalid_argument("--dry-sequence-breaker: an empty breaker matches nothing; give "
                              "text, or \"none\" for no breakers");
    out.push_back(std::move(text));
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

// Every flag above, and the basic ones first.
inline void add_sampler_options(CLI::App& app, SamplerParams& s,
                                std::vector<std::string>& dry_breaker_args) {
  app.add_option("--temp", s.temperature, "temperature (0: greedy)")->check(at_least(0));
  app.add_option("--top-k", s.top_k, "top-k sampling (0: off)")->check(at_least(0));
  app.add_option("--top-p", s.top_p, "top-p sampling (1: off)")->check(between(0, 1));
  app.add_option("--min-p", s.min_p, "min-p sampling (0: off)")->check(between(0, 1));
  app.add_option("--repeat-penalty", s.repeat_penalty, "repetition penalty (1: off)")
      ->check(positive());
  app.add_option("--repeat-last-n", s.repeat_last_n, "tokens the penalty looks back over")
      ->check(at_least(0));
  app.add_option("--frequency-penalty", s.frequency_penalty,
                 "subtract this from a token's logit per occurrence in the last "
                 "--repeat-last-n tokens (0: off)");
  app.add_option("--presence-penalty", s.presence_penalty,
                 "subtract this once from the logit of a token that occurs there (0: off)");
  add_sampler_stage_options(app, s, dry_breaker_args);
}

} // namespace pshard::cli
