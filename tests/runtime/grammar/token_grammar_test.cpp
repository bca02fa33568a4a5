// A grammar over a vocabulary: the allowed set found through the token trie equals
// checking every token one by one, end-of-generation comes only when the text is
// whole, and a Sampler with the filter draws only allowed tokens.
#include "runtime/grammar/output_constraint.h"
#include "runtime/grammar/token_grammar.h"
#include "runtime/grammar/triggered_filter.h"
#include "runtime/sampler/sampler.h"
#include "runtime/tokenizer/vocabulary.h"

#include <gtest/gtest.h>
#include <map>
#include <random>

namespace pshard {
namespace {

// Token i's text is pieces[i]; empty texts are control tokens; `eog` ends generation.
class PieceTokenizer final : public Tokenizer {
public:
  PieceTokenizer(std::vector<std::string> pieces, TokenId eog)
      : pieces_(std::move(pieces)), eog_(eog) {}
  std::vector<TokenId> encode(std::string_view, bool, bool) const override { return {}; }
  std::string token_to_piece(TokenId id) const override {
    return id >= 0 && id < n_vocab() ? pieces_[id] : "";
  }
  std::string decode(std::span<const TokenId> ids) const override {
    std::string s;
    for (TokenId id : ids)
      s += token_to_piece(id);
    return s;
  }
  int32_t n_vocab() const override { return static_cast<int32_t>(pieces_.size()); }
  TokenId bos() const override { return kNoToken; }
  TokenId eos() const override { return eog_; }
  bool add_bos_by_default() const override { return false; }
  bool is_end_of_generation(TokenId id) const override { return id == eog_; }
  const Vocabulary& vocabulary() const override { return vocab_; }

private:
  std::vector<std::string> pieces_;
  TokenId eog_;
  Vocabulary vocab_;
};

// Every byte alone, then random strings of 2 to 6 bytes drawn from a JSON-ish
// alphabet (with multi-byte characters and their halves), duplicates included, then
// an empty control token and the EOG token.
std::unique_ptr<PieceTokenizer> random_vocab(uint32_t seed, int n_extra) {
  std::vector<std::string> pieces;
  for (int b = 0; b < 256; ++b)
    pieces.emplace_back(1, static_cast<char>(b));
  const std::vector<std::string> parts = {"{", "}", "[", "]", "\"", ":", ",", " ", "\n", "a",
                                          "b", "n", "u", "l", "t", "r", "e", "1", "0", "-",
                                          ".", "é", "\xC3", "\xA9", "\\", "name", "true"};
  std::mt19937 rng(seed);
  for (int i = 0; i < n_extra; ++i) {
    std::string s;
    const int n = 2 + static_cast<int>(rng() % 5);
    while (static_cast<int>(s.size()) < n)
      s += parts[rng() % parts.size()];
    pieces.push_back(s);
  }
  pieces.push_back(pieces[300]); // a duplicate text
  pieces.emplace_back("");       // a control token
  pieces.emplace_back("");       // EOG
  const auto eog = static_cast<TokenId>(pieces.size() - 1);
  return std::make_unique<PieceTokenizer>(std::move(pieces), eog);
}

std::shared_ptr<const Grammar> compile(std::string_view gbnf) {
  Result<Grammar> g = parse_gbnf(gbnf);
  EXPECT_TRUE(g.ok()) << g.status().to_string();
  return g.ok() ? std::make_shared<const Grammar>(std::move(g).value()) : nullptr;
}

constexpr std::string_view kJsonish = R"(
root ::= value
value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" ( [^"\\] | "\\" ["\\nt] )* "\""
number ::= "-"? [0-9]+ ( "." [0-9]+ )?
ws ::= [ \n]{0,3}
)";

// The slow truth: a copy of a matcher that read the text so far, fed the token.
bool brute_allows(const GrammarMatcher& after_text, const Tokenizer& tok, TokenId id) {
  if (tok.is_end_of_generation(id))
    return after_text.can_end();
  GrammarMatcher m = after_text;
  const std::string piece = tok.token_to_piece(id);
  return !piece.empty() && m.accept(piece);
}

TEST(TokenTrie, HoldsEveryNonEmptyTokenOnceUnderItsBytes) {
  auto tok = random_vocab(1, 2000);
  auto trie = TokenTrie::build(*tok);
  std::map<TokenId, std::string> found;
  // Walk the trie, spelling each node's path.
  std::vector<std::pair<int32_t, std::string>> work{{0, ""}};
  while (!work.empty()) {
    auto [node, text] = work.back();
    work.pop_back();
    const auto& n = trie->nodes()[node];
    for (int32_t t = n.tokens_begin; t < n.tokens_end; ++t)
      EXPECT_TRUE(found.emplace(trie->tokens()[t], text).second);
    int prev = -1;
    for (int32_t c = n.first_child; c >= 0; c = trie->nodes()[c].next_sibling) {
      EXPECT_GT(trie->nodes()[c].byte, prev); // children in byte order, no repeats
      prev = trie->nodes()[c].byte;
      work.emplace_back(c, text + static_cast<char>(trie->nodes()[c].byte));
    }
  }
  for (TokenId id = 0; id < tok->n_vocab(); ++id) {
    const std::string piece = tok->token_to_piece(id);
    if (piece.empty())
      EXPECT_EQ(found.count(id), 0u);
    else
      EXPECT_EQ(found[id], piece) << id;
  }
  EXPECT_EQ(trie->end_of_generation(), std::vector<TokenId>{tok->n_vocab() - 1});
}

TEST(GrammarTokenFilter, AllowedSetEqualsCheckingEveryTokenAlongAGeneration) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto tok = random_vocab(seed, 1500);
    auto g = compile(kJsonish);
    auto filter = GrammarTokenFilter::create(g, TokenTrie::build(*tok));
    ASSERT_TRUE(filter.ok()) << filter.status().to_string();
    std::mt19937 rng(seed);
    std::string so_far;
    for (int step = 0; step < 30; ++step) {
      GrammarMatcher after_text(g);
      ASSERT_TRUE(after_text.accept(so_far));
      const auto bits = (*filter)->allowed();
      std::vector<TokenId> allowed;
      for (TokenId id = 0; id < tok->n_vocab(); ++id) {
        const bool bit = token_bit(bits, id);
        ASSERT_EQ(bit, brute_allows(after_text, *tok, id))
            << "seed " << seed << " after '" << so_far << "' token " << id << " '"
            << tok->token_to_piece(id) << "'";
        ASSERT_EQ(bit, (*filter)->allows(id)) << id;
        if (bit)
          allowed.push_back(id);
      }
      ASSERT_FALSE(allowed.empty()) << so_far;
      // Walk on through a random allowed token (prefer text over ending).
      TokenId next = allowed[rng() % allowed.size()];
      if (tok->is_end_of_generation(next) && allowed.size() > 1)
        next = allowed.front();
      if (tok->is_end_of_generation(next))
        break;
      ASSERT_TRUE((*filter)->accept(next).ok());
      so_far += tok->token_to_piece(next);
    }
  }
}

TEST(GrammarTokenFilter, EndOfGenerationOnlyOnceTheTextIsWhole) {
  auto tok = random_vocab(4, 100);
  auto filter = GrammarTokenFilter::create(compile(R"(root ::= "ab" "c"?)"), TokenTrie::build(*tok));
  ASSERT_TRUE(filter.ok());
  auto& f = **filter;
  const TokenId eog = tok->eos();
  EXPECT_FALSE(f.allows(eog));
  EXPECT_FALSE(f.accept(eog).ok());
  ASSERT_TRUE(f.accept('a').ok());
  ASSERT_TRUE(f.accept('b').ok());
  EXPECT_TRUE(f.allows(eog));
  EXPECT_TRUE(token_bit(f.allowed(), eog));
  EXPECT_FALSE(f.finished());
  ASSERT_TRUE(f.accept('c').ok());
  EXPECT_TRUE(f.finished());
  // Only EOG is left.
  const auto bits = f.allowed();
  for (TokenId id = 0; id < tok->n_vocab(); ++id)
    EXPECT_EQ(token_bit(bits, id), id == eog) << id;
  EXPECT_FALSE(f.accept('c').ok());
  EXPECT_FALSE(f.allows(tok->n_vocab() - 2)); // the empty control token, never
}

std::vector<float> flat_logits(int n, std::initializer_list<std::pair<TokenId, float>> set) {
  std::vector<float> l(static_cast<size_t>(n), 0.0f);
  for (auto [id, v] : set)
    l[id] = v;
  return l;
}

TEST(SamplerWithFilter, GreedyTakesTheBestAllowedToken) {
  auto tok = random_vocab(5, 50);
  auto filter = GrammarTokenFilter::create(compile(R"(root ::= [xy] "!")"), TokenTrie::build(*tok));
  ASSERT_TRUE(filter.ok());
  SamplerParams sp;
  sp.temperature = 0;
  Sampler s(sp);
  s.set_filter(*filter);
  const int n = tok->n_vocab();
  // 'z' is the model's favourite but not allowed; 'y' beats 'x'.
  EXPECT_EQ(s.sample(flat_logits(n, {{'z', 9}, {'y', 5}, {'x', 3}}), {}), 'y');
  EXPECT_EQ(s.sample(flat_logits(n, {{'!', -5}, {'z', 9}}), {}), '!');
  EXPECT_TRUE((*filter)->finished());
  EXPECT_EQ(s.sample(flat_logits(n, {{'z', 9}}), {}), tok->eos());
}

TEST(SamplerWithFilter, DrawsOnlyAllowedTokensInTheModelsProportions) {
  auto tok = random_vocab(6, 50);
  const int n = tok->n_vocab();
  std::map<TokenId, int> counts;
  for (uint64_t seed = 0; seed < 2000; ++seed) {
    auto filter = GrammarTokenFilter::create(compile(R"(root ::= [ab])"), TokenTrie::build(*tok));
    ASSERT_TRUE(filter.ok());
    SamplerParams sp;
    sp.temperature = 1;
    sp.top_k = 0;
    sp.top_p = 1;
    sp.min_p = 0;
    sp.seed = seed;
    Sampler s(sp);
    s.set_filter(*filter);
    // 'c' holds most of the mass but is refused; a : b = e^1 : 1.
    ++counts[s.sample(flat_logits(n, {{'a', 1}, {'b', 0}, {'c', 8}}), {})];
  }
  EXPECT_EQ(counts.size(), 2u);
  const double ratio = static_cast<double>(counts['a']) / counts['b'];
  EXPECT_NEAR(ratio, std::exp(1.0), 0.35);
}

TEST(SamplerWithFilter, NothingAllowedIsAnErrorNotAToken) {
  // A vocabulary without the byte the grammar needs.
  std::vector<std::string> pieces = {"a", "b", ""};
  PieceTokenizer tok(pieces, 2);
  auto filter = GrammarTokenFilter::create(compile(R"(root ::= "q")"), TokenTrie::build(tok));
  ASSERT_TRUE(filter.ok());
  SamplerParams sp;
  sp.temperature = 0;
  Sampler s(sp);
  s.set_filter(*filter);
  EXPECT_EQ(s.sample(std::vector<float>{1, 2, 3}, {}), kNoToken);
  EXPECT_FALSE(s.filter_status().ok());
  EXPECT_NE(s.filter_status().message().find("allows no token"), std::string::npos);
}

} // namespace
} // namespace pshard

namespace pshard {
namespace {

TEST(TriggeredTokenFilter, FreeUntilTheTriggerThenTheGrammarFromItsFirstByte) {
  // Texts that split the trigger "<call>" across tokens and carry text after it.
  std::vector<std::string> pieces = {"ab", "<ca", "ll>x", "y", "</call>", "1", "<call>", "", "z"};
  PieceTokenizer tok(pieces, 7);
  auto grammar = compile(R"(root ::= "<call>" [a-z]{1,5} "</call>")");
  auto f = TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "<call>");
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  auto& filter = **f;
  for (TokenId id = 0; id < tok.n_vocab(); ++id) // before: everything, EOG too
    EXPECT_TRUE(filter.allows(id) && token_bit(filter.allowed(), id)) << id;
  ASSERT_TRUE(filter.accept(5).ok()); // "1": free text
  ASSERT_TRUE(filter.accept(0).ok()); // "ab"
  ASSERT_TRUE(filter.accept(1).ok()); // "<ca": not yet
  EXPECT_FALSE(filter.triggered());
  ASSERT_TRUE(filter.accept(2).ok()); // "ll>x": the trigger, and "x" after it
  EXPECT_TRUE(filter.triggered());
  EXPECT_TRUE(filter.allows(3));  // "y"
  EXPECT_FALSE(filter.allows(5)); // "1"
  EXPECT_FALSE(filter.allows(7)); // EOG: the call is not closed
  EXPECT_TRUE(filter.allows(4));  // "</call>"
  ASSERT_TRUE(filter.accept(4).ok());
  const auto bits = filter.allowed();
  for (TokenId id = 0; id < tok.n_vocab(); ++id)
    EXPECT_EQ(token_bit(bits, id), id == 7) << id; // only the end is left
}

TEST(TriggeredTokenFilter, ATriggerTheGrammarCannotStartWithIsRefused) {
  PieceTokenizer tok({"a", ""}, 1);
  auto grammar = compile(R"(root ::= "{" [a-z]* "}")");
  auto f = TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "<call>");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("must begin with the trigger"), std::string::npos);
  EXPECT_FALSE(TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "").ok());
}

TEST(TriggeredTokenFilter, ATriggerInsideTheThoughtDoesNotCountOneAfterItDoes) {
  // The thought's tags split across tokens, whitespace before the opening, a call drafted
  // inside the thought, then the answer's call.
  std::vector<std::string> pieces = {"\n",   "<thi",   "nk>",    "<call>",  "x",
                                     "</th", "ink>\n", "<call>", "</call>", ""};
  PieceTokenizer tok(pieces, 9);
  auto grammar = compile(R"(root ::= "<call>" [a-z]{1,5} "</call>")");
  auto f = TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "<call>",
                                        Thought{"<think>", "</think>"});
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  auto& filter = **f;
  for (TokenId id : {0, 1, 2}) // "\n<think>"
    ASSERT_TRUE(filter.accept(id).ok());
  EXPECT_TRUE(filter.in_thought());
  ASSERT_TRUE(filter.accept(3).ok()); // "<call>" inside the thought: free
  EXPECT_FALSE(filter.triggered());
  EXPECT_TRUE(filter.allows(9)); // even the end
  for (TokenId id : {4, 5, 6})   // "x</think>\n"
    ASSERT_TRUE(filter.accept(id).ok());
  EXPECT_FALSE(filter.in_thought());
  EXPECT_FALSE(filter.triggered());
  ASSERT_TRUE(filter.accept(7).ok()); // the answer's "<call>"
  EXPECT_TRUE(filter.triggered());
  EXPECT_FALSE(filter.allows(8)); // "</call>" needs a name first
  EXPECT_TRUE(filter.allows(4));
}

// A thought the prompt opened (Thought without its opening): the text starts inside it.
TEST(TriggeredTokenFilter, AThoughtThePromptOpenedStartsTheText) {
  std::vector<std::string> pieces = {"<call>", "x", "</th", "ink>\n", "</call>", ""};
  PieceTokenizer tok(pieces, 5);
  auto grammar = compile(R"(root ::= "<call>" [a-z]{1,5} "</call>")");
  auto f = TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "<call>",
                                        Thought{"", "</think>"});
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  auto& filter = **f;
  EXPECT_TRUE(filter.in_thought());
  for (TokenId id : {0, 1, 2}) // "<call>x</th": drafted inside the thought, free
    ASSERT_TRUE(filter.accept(id).ok());
  EXPECT_FALSE(filter.triggered());
  EXPECT_TRUE(filter.allows(4));
  ASSERT_TRUE(filter.accept(3).ok()); // "ink>\n" closes it
  EXPECT_FALSE(filter.in_thought());
  ASSERT_TRUE(filter.accept(0).ok()); // the answer's "<call>"
  EXPECT_TRUE(filter.triggered());
  EXPECT_FALSE(filter.allows(4)); // "</call>" needs a name first
}

TEST(TriggeredTokenFilter, ATextWithoutAThoughtIsWatchedFromItsFirstByte) {
  // "<" could begin both the opening and the trigger: undecided until "call>" says which.
  std::vector<std::string> pieces = {" ", "<", "call>", "x", "</call>", "<think>", ""};
  PieceTokenizer tok(pieces, 6);
  auto grammar = compile(R"(root ::= "<call>" [a-z]{1,5} "</call>")");
  for (bool with_thought : {false, true}) {
    auto f =
        TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "<call>",
                                     with_thought ? Thought{"<think>", "</think>"} : Thought{});
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    auto& filter = **f;
    for (TokenId id : {0, 1})
      ASSERT_TRUE(filter.accept(id).ok());
    EXPECT_FALSE(filter.triggered());
    ASSERT_TRUE(filter.accept(2).ok());
    EXPECT_TRUE(filter.triggered()) << with_thought;
    EXPECT_TRUE(filter.allows(3));
    EXPECT_FALSE(filter.allows(5));
  }
  // A thought that comes later than the text's opening is no thought: its call counts.
  auto f = TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "<call>",
                                        Thought{"<think>", "</think>"});
  ASSERT_TRUE(f.ok());
  for (TokenId id : {3, 5, 1, 2}) // "x<think><call>"
    ASSERT_TRUE((*f)->accept(id).ok());
  EXPECT_TRUE((*f)->triggered());
}

TEST(TriggeredTokenFilter, AThoughtNeedsBothTagsAndATrigger) {
  PieceTokenizer tok({"a", ""}, 1);
  auto grammar = compile(R"(root ::= "<call>" [a-z]* "</call>")");
  auto half = TriggeredTokenFilter::create(grammar, TokenTrie::build(tok), "<call>",
                                           Thought{"<think>", ""});
  ASSERT_FALSE(half.ok());
  EXPECT_NE(half.status().message().find("needs its closing tag"), std::string::npos);
  OutputConstraint c;
  c.grammar = R"(root ::= "<call>" [a-z]* "</call>")";
  c.thought = {"<think>", "</think>"};
  auto untriggered = make_token_filter(c, TokenTrie::build(tok));
  ASSERT_FALSE(untriggered.ok());
  EXPECT_NE(untriggered.status().message().find("give the trigger too"), std::string::npos);
  c.trigger = "<call>";
  EXPECT_TRUE(make_token_filter(c, TokenTrie::build(tok)).ok());
}

} // namespace
} // namespace pshard
