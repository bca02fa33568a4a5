#include "runtime/tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

namespace pshard {
namespace {

// Unicode's White_Space property, as items of a character class.
constexpr std::string_view kWhiteSpaceItems =
    R"(\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

// UTF-8 patterns and subjects, \p{..} and \w etc. by Unicode properties, `$`
// only at the very end, and invalid UTF-8 in the subject allowed (it never
// matches) instead of an error.
constexpr uint32_t kCompileOptions =
    PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY | PCRE2_MATCH_INVALID_UTF;

// The JIT's stack grows on demand up to this; a pattern that needs more (long
// backtracking runs) falls back to the interpreter, which keeps its state on
// the heap.
constexpr size_t kJitStackStart = 32 * 1024;
constexpr size_t kJitStackMax = 1024 * 1024;

std::string pcre2_message(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0)
    return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

// What one split() call allocates once for all its matches: per call rather
// than per PreTokenizer, so that threads never share them.
class MatchScratch {
public:
  MatchScratch()
      : data_(pcre2_match_data_create(1, nullptr)), context_(pcre2_match_context_create(nullptr)),
        stack_(pcre2_jit_stack_create(kJitStackStart, kJitStackMax, nullptr)) {
    if (context_ && stack_)
      pcre2_jit_stack_assign(context_, nullptr, stack_);
  }
  ~MatchScratch() {
    pcre2_jit_stack_free(stack_);
    pcre2_match_context_free(context_);
    pcre2_match_data_free(data_);
  }
  MatchScratch(const MatchScratch&) = delete;
  MatchScratch& operator=(const MatchScratch&) = delete;

  bool ok() const { return data_ && context_ && stack_; }
  pcre2_match_data* data() { return data_; }
  pcre2_match_context* context() { return context_; }

private:
  pcre2_match_data* data_;
  pcre2_match_context* context_;
  pcre2_jit_stack* stack_;
};

} // namespace

struct PreTokenizer::Expression {
  pcre2_code* code = nullptr;
  ~Expression() { pcre2_code_free(code); }

  // The next match in `subject` at or after `start`: [begin, end), or false
  // when there is none. Matches are never empty.
  bool next_match(std::string_view subject, size_t start, MatchScratch& scratch, size_t* begin,
                  size_t* end) const {
    const auto* bytes = reinterpret_cast<PCRE2_SPTR>(subject.data());
    int rc = pcre2_match(code, bytes, subject.size(), start, PCRE2_NOTEMPTY, scratch.data(),
                         scratch.context());
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT)
      rc = pcre2_match(code, bytes, subject.size(), start, PCRE2_NOTEMPTY | PCRE2_NO_JIT,
                       scratch.data(), scratch.context());
    // No match, or one the interpreter's limits stopped: the rest stays whole.
    if (rc < 0)
      return false;
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.data());
    *begin = ovector[0];
    *end = ovector[1];
    return *end > *begin;
  }

  void split(std::string_view piece, MatchScratch& scratch,
             std::vector<std::string_view>& out) const {
    size_t gap_start = 0;
    size_t begin = 0;
    size_t end = 0;
    while (gap_start < piece.size() && next_match(piece, gap_start, scratch, &begin, &end)) {
      if (begin > gap_start)
        out.push_back(piece.substr(gap_start, begin - gap_start));
      out.push_back(piece.substr(begin, end - begin));
      gap_start = end;
    }
    if (gap_start < piece.size())
      out.push_back(piece.substr(gap_start));
  }
};

std::string with_white_space_classes(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() * 2);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char escaped = pattern[++i];
      if (escaped == 's')
        out += in_class ? std::string(kWhiteSpaceItems) : "[" + std::string(kWhiteSpaceItems) + "]";
      else if (escaped == 'S' && !in_class) // \S inside [...] keeps PCRE2's meaning
        out += "[^" + std::string(kWhiteSpaceItems) + "]";
      else
        out.append({c, escaped});
      continue;
    }
    out.push_back(c);
    if (!in_class && c == '[') {
      in_class = true;
      // "[^]..." and "[]...": a ']' first in the class is a literal.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^')
        out.push_back(pattern[++i]);
      if (i + 1 < pattern.size() && pattern[i + 1] == ']')
        out.push_back(pattern[++i]);
    } else if (in_class && c == ']') {
      in_class = false;
    }
  }
  return out;
}

Result<PreTokenizer> PreTokenizer::create(std::span<const std::string_view> patterns) {
  PreTokenizer pre;
  for (std::string_view pattern : patterns) {
    const std::string rewritten = with_white_space_classes(pattern);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    auto expression = std::make_unique<Expression>();
    expression->code =
        pcre2_compile(reinterpret_cast<PCRE2_SPTR>(rewritten.data()), rewritten.size(),
                      kCompileOptions, &error, &error_offset, nullptr);
    if (expression->code == nullptr)
      return invalid_argument("the pre-tokenizer expression \"" + std::string(pattern) +
                              "\" does not compile (at offset " + std::to_string(error_offset) +
                              " of its PCRE2 form): " + pcre2_message(error));
    // Without JIT support (some platforms) the interpreter gives the same result.
    (void)pcre2_jit_compile(expression->code, PCRE2_JIT_COMPLETE);
    pre.expressions_.push_back(std::move(expression));
  }
  return pre;
}

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::split(std::string_view text, std::vector<std::string_view>& pieces) const {
  if (text.empty())
    return;
  MatchScratch scratch;
  std::vector<std::string_view> current{text};
  if (scratch.ok()) {
    std::vector<std::string_view> next;
    for (const auto& expression : expressions_) {
      next.clear();
      for (std::string_view piece : current)
        expression->split(piece, scratch, next);
      current.swap(next);
    }
  }
  pieces.insert(pieces.end(), current.begin(), current.end());
}

} // namespace pshard
