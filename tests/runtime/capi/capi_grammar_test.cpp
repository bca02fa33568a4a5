// Structured output and the OpenAI sampling fields through the C API: a context and a
// batch under one JSON Schema give the same answer, which follows the schema; grammars
// end generation; bad grammars and schemas are status codes with a message; the
// schema-to-grammar call's buffer contract; penalties and logit biases change the answer
// the same way in contexts and batches.
#include "pshard/pshard.h"
#include "tests/runtime/capi/capi_test_util.h"

#include <cmath>
#include <gtest/gtest.h>
#include <regex>
#include <string>
#include <vector>

namespace {

using namespace pshard::capi_test;

constexpr const char* kPerson = R"({"type": "object", "required": ["name", "age"],
  "properties": {"name": {"type": "string", "maxLength": 12},
                 "age": {"type": "integer", "minimum": 1, "maximum": 9}}})";

bool append_text(const pshard_token_event* e, void* user) {
  static_cast<std::string*>(user)->append(e->text, e->text_len);
  return true;
}

struct Loaded {
  Loaded() {
    EXPECT_EQ(pshard_model_load(kModel.c_str(), nullptr, &m), PSHARD_OK) << pshard_last_error();
    EXPECT_EQ(pshard_context_create(m, nullptr, &ctx), PSHARD_OK) << pshard_last_error();
  }
  ~Loaded() {
    pshard_context_free(ctx);
    pshard_model_free(m);
  }
  // The context's greedy answer to "Once upon a time" under `gp`, or the failure status.
  pshard_status answer(pshard_generate_params gp, std::string* text) {
    pshard_token prompt[16];
    size_t n = 0;
    EXPECT_EQ(pshard_model_tokenize(m, "Once upon a time", 16, true, prompt, 16, &n), PSHARD_OK);
    pshard_context_reset(ctx);
    gp.temperature = 0;
    return pshard_context_generate(ctx, prompt, n, &gp, append_text, text, nullptr);
  }
  // The same prompt in a batch of one.
  std::string batch_answer(pshard_generate_params gp) {
    pshard_batch_params bp = pshard_batch_default_params();
    bp.n_seq_max = 2;
    pshard_batch* b = nullptr;
    EXPECT_EQ(pshard_batch_create(m, &bp, &b), PSHARD_OK) << pshard_last_error();
    pshard_seq_params sp = pshard_seq_default_params();
    sp.text = "Once upon a time";
    sp.text_len = 16;
    gp.temperature = 0;
    pshard_seq* seq = nullptr;
    EXPECT_EQ(pshard_batch_add(b, &sp, &gp, &seq), PSHARD_OK) << pshard_last_error();
    while (pshard_batch_has_work(b))
      EXPECT_EQ(pshard_batch_step(b, nullptr), PSHARD_OK);
    std::string text;
    pshard_seq_event e = pshard_seq_event_init();
    bool got = false;
    while (pshard_seq_poll(seq, &e, &got) == PSHARD_OK && got)
      text.append(e.text, e.text_len);
    pshard_seq_free(seq);
    pshard_batch_free(b);
    return text;
  }
  pshard_model* m = nullptr;
  pshard_context* ctx = nullptr;
};

TEST(CApiGrammar, ASchemasAnswerFollowsItInContextsAndBatches) {
  SKIP_WITHOUT_MODEL();
  Loaded l;
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = 80;
  gp.json_schema = kPerson;
  std::string text;
  ASSERT_EQ(l.answer(gp, &text), PSHARD_OK) << pshard_last_error();
  // {"name": <at most 12 characters>, "age": <1..9>}, spaces as the grammar allows.
  const std::regex person(R"(\{\s*"name"\s*:\s*"[^"]{0,12}"\s*,\s*"age"\s*:\s*[1-9]\s*\})");
  EXPECT_TRUE(std::regex_match(text, person)) << text;
  EXPECT_EQ(l.batch_answer(gp), text);
  // Without the schema the story model writes prose.
  std::string plain;
  gp.json_schema = nullptr;
  ASSERT_EQ(l.answer(gp, &plain), PSHARD_OK);
  EXPECT_NE(plain.substr(0, 1), "{");
}

TEST(CApiGrammar, AGrammarEndsGenerationEvenWithIgnoreEos) {
  SKIP_WITHOUT_MODEL();
  Loaded l;
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = 100;
  gp.ignore_eos = true;
  gp.grammar = R"(root ::= ("yes" | "no") ", because " [a-z ]{5,30} ".")";
  std::string text;
  ASSERT_EQ(l.answer(gp, &text), PSHARD_OK) << pshard_last_error();
  EXPECT_TRUE(std::regex_match(text, std::regex(R"((yes|no), because [a-z ]{5,30}\.)"))) << text;
  EXPECT_EQ(l.batch_answer(gp), text);
}

TEST(CApiGrammar, BadGrammarsAndSchemasAreStatusCodesWithAMessage) {
  SKIP_WITHOUT_MODEL();
  Loaded l;
  pshard_generate_params gp = pshard_generate_default_params();
  std::string text;
  gp.grammar = "root ::= \"a\" | item";
  EXPECT_EQ(l.answer(gp, &text), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("`item` is used but not defined"),
            std::string::npos)
      << pshard_last_error();
  gp.json_schema = kPerson;
  EXPECT_EQ(l.answer(gp, &text), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("not both"), std::string::npos);
  gp.grammar = nullptr;
  gp.json_schema = R"({"type": "integer", "multipleOf": 3})";
  EXPECT_EQ(l.answer(gp, &text), PSHARD_ERROR_UNSUPPORTED);
  EXPECT_NE(std::string(pshard_last_error()).find("multipleOf"), std::string::npos);
  gp.json_schema = "{not json";
  EXPECT_EQ(l.answer(gp, &text), PSHARD_ERROR_INVALID_ARGUMENT);
  gp.json_schema = "";
  EXPECT_EQ(l.answer(gp, &text), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_TRUE(text.empty()) << "nothing generated before the refusal";
  EXPECT_EQ(pshard_grammar_validate("root ::= [a-z]+"), PSHARD_OK);
  EXPECT_EQ(pshard_grammar_validate("root ::= x\nx ::= x \"a\""), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("left-recursive"), std::string::npos);
  EXPECT_EQ(pshard_grammar_validate(nullptr), PSHARD_ERROR_INVALID_ARGUMENT);
}

// A thought's tags reach the triggered grammar (triggered_filter.h tests what they do):
// half a thought, or one without a trigger, is refused by name; with both and a trigger an
// answer that opens with no thought is the answer without them.
TEST(CApiGrammar, AThoughtNeedsBothTagsAndATrigger) {
  SKIP_WITHOUT_MODEL();
  Loaded l;
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = 24;
  gp.grammar = "root ::= \"<call>\" [a-z]+ \"</call>\"";
  gp.grammar_trigger = "<call>";
  std::string plain;
  ASSERT_EQ(l.answer(gp, &plain), PSHARD_OK) << pshard_last_error();
  gp.thought_open = "<think>";
  std::string text;
  EXPECT_EQ(l.answer(gp, &text), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("needs its closing tag"), std::string::npos)
      << pshard_last_error();
  gp.thought_close = "</think>";
  gp.grammar_trigger = nullptr;
  EXPECT_EQ(l.answer(gp, &text), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("give the trigger too"), std::string::npos)
      << pshard_last_error();
  gp.grammar_trigger = "<call>";
  text.clear();
  ASSERT_EQ(l.answer(gp, &text), PSHARD_OK) << pshard_last_error();
  EXPECT_EQ(text, plain);
  EXPECT_EQ(l.batch_answer(gp), plain);
}

TEST(CApiGrammar, SchemaToGrammarWritesWhatFitsAndSaysHowMuchIsNeeded) {
  size_t length = 0;
  EXPECT_EQ(pshard_json_schema_to_grammar(kPerson, nullptr, 0, &length), PSHARD_ERROR_OUT_OF_RANGE);
  ASSERT_GT(length, 0u);
  std::string small(length, 'x'); // one byte short: the NUL does not fit
  EXPECT_EQ(pshard_json_schema_to_grammar(kPerson, small.data(), small.size(), &length),
            PSHARD_ERROR_OUT_OF_RANGE);
  std::vector<char> buf(length + 1);
  ASSERT_EQ(pshard_json_schema_to_grammar(kPerson, buf.data(), buf.size(), &length), PSHARD_OK);
  const std::string gbnf(buf.data());
  EXPECT_EQ(gbnf.size(), length);
  EXPECT_NE(gbnf.find("root ::="), std::string::npos);
  EXPECT_EQ(pshard_grammar_validate(gbnf.c_str()), PSHARD_OK);
  EXPECT_EQ(pshard_json_schema_to_grammar(nullptr, nullptr, 0, &length),
            PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(pshard_json_schema_to_grammar(R"({"type": "date"})", nullptr, 0, &length),
            PSHARD_ERROR_INVALID_ARGUMENT);
}

TEST(CApiGrammar, PenaltiesAndLogitBiasChangeTheAnswerAlikeInContextsAndBatches) {
  SKIP_WITHOUT_MODEL();
  Loaded l;
  pshard_generate_params gp = pshard_generate_default_params();
  gp.n_predict = 24;
  std::string plain;
  ASSERT_EQ(l.answer(gp, &plain), PSHARD_OK);
  const pshard_logit_bias ban[] = {{kExpected[0], -INFINITY}}; // the reference's first token
  gp.logit_bias = ban;
  gp.n_logit_bias = 1;
  gp.frequency_penalty = 0.8f;
  gp.presence_penalty = 0.4f;
  std::string biased;
  ASSERT_EQ(l.answer(gp, &biased), PSHARD_OK) << pshard_last_error();
  EXPECT_NE(biased, plain);
  EXPECT_EQ(l.batch_answer(gp), biased);
  gp.logit_bias = nullptr; // a count without an array
  EXPECT_EQ(l.answer(gp, &biased), PSHARD_ERROR_INVALID_ARGUMENT);
  gp.n_logit_bias = 0;
  gp.frequency_penalty = NAN;
  EXPECT_EQ(l.answer(gp, &biased), PSHARD_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(pshard_last_error()).find("frequency_penalty"), std::string::npos);
}

} // namespace
