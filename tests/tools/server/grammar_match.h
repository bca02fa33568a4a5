// Whether a tool grammar matches a text whole (the server's tool-format tests).
#pragma once

#include "runtime/grammar/grammar.h"
#include "runtime/grammar/grammar_matcher.h"

#include <gtest/gtest.h>
#include <memory>
#include <string>

namespace pshard::server {

inline bool grammar_matches(const std::string& gbnf, const std::string& text) {
  auto g = parse_gbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().message();
  if (!g.ok())
    return false;
  GrammarMatcher m(std::make_shared<const Grammar>(std::move(*g)));
  return m.accept(text) && m.can_end();
}

} // namespace pshard::server
