// Every chat template renders one conversation — a system prompt, two exchanges with an
// answer padded by spaces (which shows who trims), a last question — into exactly the
// text the format documents (the model makers' published formats; Mistral's tokenization
// guide; the Llama 3 model card), and keeps the properties the conversation loop relies on.
#include "runtime/chat/chat_template.h"

#include <gtest/gtest.h>
#include <map>

namespace pshard {
namespace {

const std::vector<ChatMessage> kChat = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
    {"assistant", "   I am an assistant   "},
    {"user", "Another question"},
};

// U+FF5C (fullwidth vertical line) and U+2581 (lower one eighth block) as DeepSeek spells them.
#define FW "\xef\xbd\x9c"
#define EOS_DS "<" FW "end\xe2\x96\x81of\xe2\x96\x81sentence" FW ">"

// The conversation above with the generation prompt, written out by hand per format.
const std::map<std::string, std::string>& expected() {
  static const std::map<std::string, std::string> m = {
      // llama.cpp's rendering of Kimi K2's template (no default system prompt).
      {"kimi-k2",
       "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|><|im_user|>user"
       "<|im_middle|>Hello<|im_end|><|im_assistant|>assistant<|im_middle|>Hi there<|im_end|>"
       "<|im_user|>user<|im_middle|>Who are you<|im_end|><|im_assistant|>assistant<|im_middle|>"
       "   I am an assistant   <|im_end|><|im_user|>user<|im_middle|>Another question<|im_end|>"
       "<|im_assistant|>assistant<|im_middle|>"},
      // llama.cpp's renderings of Ant Group's bailing templates.
      {"bailing",
       "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello"
       "<role>ASSISTANT</role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>"
       "   I am an assistant   <role>HUMAN</role>Another question<role>ASSISTANT</role>"},
      {"bailing-think",
       "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello"
       "<role>ASSISTANT</role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>"
       "   I am an assistant   <role>HUMAN</role>Another question<role>ASSISTANT</role><think>"},
      {"bailing2",
       "<role>SYSTEM</role>You are a helpful assistant<|role_end|><role>HUMAN</role>Hello"
       "<|role_end|><role>ASSISTANT</role>Hi there<|role_end|><role>HUMAN</role>Who are you"
       "<|role_end|><role>ASSISTANT</role>   I am an assistant   <|role_end|><role>HUMAN</role>"
       "Another question<|role_end|><role>ASSISTANT</role>"},
      // llama.cpp's rendering of dots.llm1's template.
      {"dots1", "<|system|>You are a helpful assistant<|endofsystem|><|userprompt|>Hello"
                "<|endofuserprompt|><|response|>Hi there<|endofresponse|><|userprompt|>Who are you"
                "<|endofuserprompt|><|response|>   I am an assistant   <|endofresponse|>"
                "<|userprompt|>Another question<|endofuserprompt|><|response|>"},
      // ERNIE 4.5's tokenizer's default template (no newline after the separator).
      {"ernie4.5", "<|begin_of_sentence|>You are a helpful assistant\nUser: Hello\nAssistant: Hi "
                   "there<|end_of_sentence|>User: Who are you\nAssistant:    I am an assistant   "
                   "<|end_of_sentence|>User: Another question\nAssistant: "},
      // llama.cpp's own test of chatglm4 writes this conversation so.
      {"chatglm4", "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello"
                   "<|assistant|>\nHi there<|user|>\nWho are you<|assistant|>\n   I am an "
                   "assistant   <|user|>\nAnother question<|assistant|>\n"},
      // GLM-4.5's template: earlier answers after an empty thought; the model opens its own.
      {"glm-4.5", "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello"
                  "<|assistant|>\n<think></think>\nHi there<|user|>\nWho are you"
                  "<|assistant|>\n<think></think>\n   I am an assistant   <|user|>\nAnother "
                  "question<|assistant|>"},
      {"chatml",
       "<|im_start|>system\nYou are a helpful "
       "assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
       "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
       "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother "
       "question<|im_end|>\n<|im_start|>assistant\n"},
      {"chatml-thinking",
       "<|im_start|>system\nYou are a helpful "
       "assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
       "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
       "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother "
       "question<|im_end|>\n<|im_start|>assistant\n<think>\n"},
      // Qwen3-Coder's template writes ChatML; Qwen3.5's trims every text and opens the thought.
      {"qwen3-coder",
       "<|im_start|>system\nYou are a helpful "
       "assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
       "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
       "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother "
       "question<|im_end|>\n<|im_start|>assistant\n"},
      {"qwen3.5",
       "<|im_start|>system\nYou are a helpful "
       "assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>\n"
       "<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
       "<|im_start|>assistant\nI am an assistant<|im_end|>\n<|im_start|>user\nAnother "
       "question<|im_end|>\n<|im_start|>assistant\n<think>\n"},
      {"llama2", "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you "
                 "[/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
      {"llama2-sys", "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi "
                     "there</s>[INST] Who are you [/INST]   I am an assistant   </s>[INST] Another "
                     "question [/INST]"},
      {"llama2-sys-bos",
       "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi "
       "there</s><s>[INST] Who are you [/INST]   I am an assistant   </s><s>[INST] "
       "Another question [/INST]"},
      {"llama2-sys-strip",
       "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello "
       "[/INST]Hi there</s>[INST] Who are you [/INST]I am an assistant</s>[INST] "
       "Another question [/INST]"},
      {"mistral-v1", " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who "
                     "are you [/INST]    I am an assistant   </s> [INST] Another question [/INST]"},
      {"mistral-v3",
       "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are "
       "you[/INST] I am an assistant</s>[INST] Another question[/INST]"},
      {"mistral-v3-tekken",
       "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who "
       "are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]"},
      {"mistral-v7", "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] "
                     "Hello[/INST] Hi there</s>[INST] Who are you[/INST]    I am an assistant   "
                     "</s>[INST] Another question[/INST]"},
      {"mistral-v7-tekken", "[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT][INST]Hello"
                            "[/INST]Hi there</s>[INST]Who are you[/INST]   I am an assistant   "
                            "</s>[INST]Another question[/INST]"},
      {"llama3",
       "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
       "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant"
       "<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are "
       "you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an assistant<|eot_id|>"
       "<|start_header_id|>user<|end_header_id|>\n\nAnother question<|eot_id|><|start_header_id|>"
       "assistant<|end_header_id|>\n\n"},
      {"llama4",
       "<|header_start|>system<|header_end|>\n\nYou are a helpful assistant<|eot|><|header_start|>"
       "user<|header_end|>\n\nHello<|eot|><|header_start|>assistant<|header_end|>\n\nHi "
       "there<|eot|>"
       "<|header_start|>user<|header_end|>\n\nWho are you<|eot|><|header_start|>assistant"
       "<|header_end|>\n\nI am an assistant<|eot|><|header_start|>user<|header_end|>\n\nAnother "
       "question<|eot|><|header_start|>assistant<|header_end|>\n\n"},
      {"phi3",
       "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>"
       "\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an "
       "assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
      {"phi4", "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user"
               "<|im_sep|>Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|>"
               "<|im_start|>user<|im_sep|>Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I "
               "am an assistant   <|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|>"
               "<|im_start|>assistant<|im_sep|>"},
      {"falcon3", "<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\nHi "
                  "there\n<|user|>\nWho are you\n<|assistant|>\n   I am an assistant   \n<|user|>\n"
                  "Another question\n<|assistant|>\n"},
      {"granite",
       "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n"
       "<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant"
       "<|end_of_role|>Hi there<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Who are you"
       "<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>   I am an assistant   "
       "<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n"
       "<|start_of_role|>assistant<|end_of_role|>"},
      {"zephyr", "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello"
                 "<|endoftext|>\n<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you"
                 "<|endoftext|>\n<|assistant|>\n   I am an assistant   <|endoftext|>\n<|user|>\n"
                 "Another question<|endoftext|>\n<|assistant|>\n"},
      {"gemma", "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n"
                "<start_of_turn>model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you"
                "<end_of_turn>\n<start_of_turn>model\nI am an assistant<end_of_turn>\n"
                "<start_of_turn>user\nAnother question<end_of_turn>\n<start_of_turn>model\n"},
      {"gpt-oss",
       "<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\n"
       "Knowledge cutoff: 2024-06\n\nReasoning: medium\n\n# Valid channels: analysis, "
       "commentary, final. Channel must be included for every message.<|end|>"
       "<|start|>developer<|message|># Instructions\n\nYou are a helpful assistant<|end|>"
       "<|start|>user<|message|>Hello<|end|><|start|>assistant<|channel|>final<|message|>Hi there"
       "<|end|><|start|>user<|message|>Who are you<|end|><|start|>assistant<|channel|>final"
       "<|message|>   I am an assistant   <|end|><|start|>user<|message|>Another question<|end|>"
       "<|start|>assistant"},
      {"openchat", "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello"
                   "<|end_of_turn|>GPT4 Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct "
                   "User: Who are you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   "
                   "<|end_of_turn|>GPT4 Correct User: Another question<|end_of_turn|>GPT4 Correct "
                   "Assistant:"},
      {"vicuna", "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who "
                 "are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\n"
                 "ASSISTANT:"},
      {"vicuna-orca", "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\n"
                      "USER: Who are you\nASSISTANT:    I am an assistant   </s>\nUSER: Another "
                      "question\nASSISTANT:"},
      {"deepseek",
       "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n"
       "<|EOT|>\n### Instruction:\nWho are you\n### Response:\n   I am an assistant   \n"
       "<|EOT|>\n### Instruction:\nAnother question\n### Response:\n"},
      {"deepseek2", "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there" EOS_DS
                    "User: Who are you\n\nAssistant:    I am an assistant   " EOS_DS
                    "User: Another question\n\nAssistant:"},
      {"deepseek3", "You are a helpful assistant\n\n<" FW "User" FW ">Hello<" FW "Assistant" FW
                    ">Hi there" EOS_DS "<" FW "User" FW ">Who are you<" FW "Assistant" FW
                    ">   I am an assistant   " EOS_DS "<" FW "User" FW ">Another question<" FW
                    "Assistant" FW ">"},
      {"deepseek3-thinking", "You are a helpful assistant\n\n<" FW "User" FW ">Hello<" FW
                             "Assistant" FW ">Hi there" EOS_DS "<" FW "User" FW ">Who are you<" FW
                             "Assistant" FW ">   I am an assistant   " EOS_DS "<" FW "User" FW
                             ">Another question<" FW "Assistant" FW "><think>\n"},
      {"command-r",
       "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|>"
       "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|>"
       "<|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are "
       "you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an assistant"
       "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another question"
       "<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
      {"exaone3", "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]"
                  "Hi there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an assistant"
                  "[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
      {"smolvlm", "<|im_start|>You are a helpful assistant\n\nUser: Hello<end_of_utterance>\n"
                  "Assistant: Hi there<end_of_utterance>\nUser: Who are you<end_of_utterance>\n"
                  "Assistant:    I am an assistant   <end_of_utterance>\nUser: Another question"
                  "<end_of_utterance>\nAssistant:"},
  };
  return m;
}

TEST(ChatRender, EveryTemplateRendersItsDocumentedFormat) {
  for (const ChatTemplate* t : chat_templates()) {
    SCOPED_TRACE(std::string(t->name()));
    auto it = expected().find(std::string(t->name()));
    ASSERT_NE(it, expected().end()) << "no expected rendering written for " << t->name();
    auto text = t->apply(kChat, /*add_assistant=*/true);
    ASSERT_TRUE(text.ok()) << text.status().to_string();
    EXPECT_EQ(*text, it->second);
  }
  EXPECT_EQ(expected().size(), chat_templates().size());
}

TEST(ChatRender, TemplatesAreListedOnceSortedByName) {
  const auto all = chat_templates();
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_LT(all[i - 1]->name(), all[i]->name());
  EXPECT_EQ(
      chat_template_list().rfind(
          "bailing, bailing-think, bailing2, chatglm4, chatml, chatml-thinking, command-r", 0),
      0u);
}

// What the conversation loop relies on: the text of a conversation is a prefix of the
// text once more is said, so only the new part needs to be tokenized and decoded.
TEST(ChatRender, AConversationOnlyGrows) {
  for (const ChatTemplate* t : chat_templates()) {
    SCOPED_TRACE(std::string(t->name()));
    for (size_t n = 0; n < kChat.size(); ++n) {
      // bailing2 gives a conversation without a system message its default one, which a
      // system message, said first, replaces.
      if (n == 0 && t->name() == "bailing2")
        continue;
      const std::span<const ChatMessage> head(kChat.data(), n);
      auto closed = t->apply(head, false);
      auto open = t->apply(head, true);
      auto longer = t->apply(std::span<const ChatMessage>(kChat.data(), n + 1), false);
      ASSERT_TRUE(closed.ok() && open.ok() && longer.ok());
      EXPECT_EQ(open->rfind(*closed, 0), 0u) << "the generation prompt is appended";
      EXPECT_EQ(longer->rfind(*closed, 0), 0u) << "after " << n << " messages";
      // The answer follows the generation prompt, except where that opens the thought:
      // earlier answers are written without it (pshard-run's conversation keeps it in
      // the answer it stores, so its context stays a prefix).
      if (kChat[n].role == "assistant" && !open->ends_with("<think>\n") &&
          !open->ends_with("<think>")) {
        EXPECT_EQ(longer->rfind(*open, 0), 0u) << "after " << n << " messages";
      }
    }
  }
}

TEST(ChatRender, Bailing2GivesAConversationWithoutASystemMessageTheDefaultOne) {
  auto t = find_chat_template("bailing2");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*(*t)->apply(std::vector<ChatMessage>{{"user", "Hi"}}, true),
            "<role>SYSTEM</role>detailed thinking off<|role_end|><role>HUMAN</role>Hi"
            "<|role_end|><role>ASSISTANT</role>");
}

TEST(ChatRender, KimiK2WritesAToolResultAsATurnOfItsOwn) {
  auto t = find_chat_template("kimi-k2");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(*(*t)->apply(std::vector<ChatMessage>{{"user", "Weather?"}, {"tool", "sunny"}}, true),
            "<|im_user|>user<|im_middle|>Weather?<|im_end|><|im_system|>tool<|im_middle|>sunny"
            "<|im_end|><|im_assistant|>assistant<|im_middle|>");
  auto other = (*t)->apply(std::vector<ChatMessage>{{"ipython", "x"}}, true);
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("'ipython'"), std::string::npos);
}

TEST(ChatRender, GenerationPromptOnlyWhereTheFormatHasOne) {
  const std::vector<ChatMessage> one = {{"user", "Hi"}};
  auto chatml = find_chat_template("chatml");
  ASSERT_TRUE(chatml.ok());
  EXPECT_EQ(*(*chatml)->apply(one, false), "<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(*(*chatml)->apply(one, true),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  auto v7 = find_chat_template("mistral-v7");
  ASSERT_TRUE(v7.ok());
  EXPECT_EQ(*(*v7)->apply(one, true), *(*v7)->apply(one, false)) << "the answer follows [/INST]";
  EXPECT_EQ(*(*chatml)->apply({}, true), "<|im_start|>assistant\n");
}

TEST(ChatRender, OtherRolesWhereTheTemplateNamesRoles) {
  const std::vector<ChatMessage> tool = {{"user", "2+2?"}, {"tool", "4"}};
  auto chatml = find_chat_template("chatml");
  ASSERT_TRUE(chatml.ok());
  EXPECT_EQ(*(*chatml)->apply(tool, false),
            "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>tool\n4<|im_end|>\n");
  auto llama2 = find_chat_template("llama2-sys");
  ASSERT_TRUE(llama2.ok());
  auto refused = (*llama2)->apply(tool, true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("message 1 has role 'tool'"), std::string::npos)
      << refused.status().to_string();
  auto empty = (*chatml)->apply(std::vector<ChatMessage>{{"", "x"}}, true);
  EXPECT_FALSE(empty.ok());
}

// Mistral's function-calling blocks are written as they are between the [INST] blocks,
// and an answer that is calls follows [/INST] without v3's space; templates without them
// still refuse those roles.
TEST(ChatRender, MistralWritesItsToolTurnsBetweenTheBlocks) {
  const std::vector<ChatMessage> chat = {
      {"user", "Weather?"},
      {"assistant", "[TOOL_CALLS] [{\"name\": \"w\", \"arguments\": {}, \"id\": \"abcdefghi\"}]"},
      {"tool_results",
       "[TOOL_RESULTS] {\"content\": 7, \"call_id\": \"abcdefghi\"}[/TOOL_RESULTS]"},
      {"assistant", "Cold."},
      {"available_tools", "[AVAILABLE_TOOLS] [][/AVAILABLE_TOOLS]"},
      {"user", "And now?"}};
  auto v3 = find_chat_template("mistral-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_EQ(
      *(*v3)->apply(chat, true),
      "[INST] Weather?[/INST][TOOL_CALLS] [{\"name\": \"w\", \"arguments\": {}, \"id\": "
      "\"abcdefghi\"}]</s>[TOOL_RESULTS] {\"content\": 7, \"call_id\": \"abcdefghi\"}"
      "[/TOOL_RESULTS] Cold.</s>[AVAILABLE_TOOLS] [][/AVAILABLE_TOOLS][INST] And now?[/INST]");
  auto v7 = find_chat_template("mistral-v7-tekken");
  ASSERT_TRUE(v7.ok());
  const std::vector<ChatMessage> turn = {
      {"available_tools", "[AVAILABLE_TOOLS][][/AVAILABLE_TOOLS]"}, {"user", "Hi"}};
  EXPECT_EQ(*(*v7)->apply(turn, true), "[AVAILABLE_TOOLS][][/AVAILABLE_TOOLS][INST]Hi[/INST]");
  for (const char* name : {"mistral-v1", "llama2"}) {
    auto other = find_chat_template(name);
    ASSERT_TRUE(other.ok());
    EXPECT_FALSE((*other)->apply(turn, true).ok()) << name;
  }
}

TEST(ChatRender, GemmaFoldsSystemIntoTheNextUserTurn) {
  auto gemma = find_chat_template("gemma");
  ASSERT_TRUE(gemma.ok());
  const std::vector<ChatMessage> chat = {{"system", " Be brief. "}, {"user", "Hi"}};
  EXPECT_EQ(*(*gemma)->apply(chat, true),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n");
}

} // namespace
} // namespace pshard
