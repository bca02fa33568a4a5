// Recognising a model's template family from its Jinja source, as llama.cpp's built-in
// detection does, with the templates models ship (abridged where long, keeping what sets
// them apart); and the errors for unknown names and unrecognised templates.
#include "runtime/chat/chat_template.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

#include <filesystem>
#include <gtest/gtest.h>

namespace pshard {
namespace {

struct Case {
  const char* model;
  const char* jinja;
  const char* family;
};

const Case kCases[] = {
    {"Qwen2 / OpenHermes (ChatML)",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] "
     "+ '<|im_end|>' + '\\n'}}{% endfor %}{% if add_generation_prompt %}{{ "
     "'<|im_start|>assistant\\n' "
     "}}{% endif %}",
     "chatml"},
    {"QwQ-32B, Qwen3 Thinking-2507 (ChatML opening the thought)",
     "{%- for message in messages %}{{- '<|im_start|>' + message.role + '\\n' + message.content "
     "+ '<|im_end|>' + '\\n' }}{%- endfor %}{%- if add_generation_prompt %}"
     "{{- '<|im_start|>assistant\\n<think>\\n' }}{%- endif %}",
     "chatml-thinking"},
    {"Qwen3 (thinking switchable: an empty thought only when it is off)",
     "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking "
     "is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}"
     "{%- endif %}{%- endif %}",
     "chatml"},
    {"Qwen3-Coder, Qwen3-Coder-Next (XML calls)",
     "{{- '\\n<tool_call>\\n<function=' + tool_call.name + '>\\n' }}{%- for args_name, "
     "args_value in tool_call.arguments|items %}{{- '<parameter=' + args_name + '>\\n' }}"
     "{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}",
     "qwen3-coder"},
    {"Qwen3.5 (XML calls, opening the thought)",
     "{{- '<tool_call>\\n<function=' + tool_call.name + '>\\n' }}{{- '<parameter=' + "
     "args_name + '>\\n' }}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
     "{%- if enable_thinking is defined and enable_thinking is false %}"
     "{{- '<think>\\n\\n</think>\\n\\n' }}{%- else %}{{- '<think>\\n' }}{%- endif %}{%- endif %}",
     "qwen3.5"},
    {"Phi-4",
     "{% for message in messages %}{{'<|im_start|>' + message['role'] + '<|im_sep|>' + "
     "message['content'] + '<|im_end|>'}}{% endfor %}",
     "phi4"},
    {"SmolVLM",
     "<|im_start|>{% for message in messages %}{{message['role'] | capitalize}}: "
     "{{ message['content'] }}<end_of_utterance>\\n{% endfor %}",
     "smolvlm"},
    {"Llama 3 Instruct",
     "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = "
     "'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | "
     "trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% "
     "endif %}{{ content }}{% endfor %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}",
     "llama3"},
    {"Llama 4",
     "{{- '<|header_start|>' + message['role'] + '<|header_end|>\\n\\n' }}{{- '<|eot|>' }}",
     "llama4"},
    {"Mistral 7B v0.2 (no system)",
     "{{ bos_token }}{% for message in messages %}{% if message['role'] == 'user' %}{{ '[INST] ' + "
     "message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ "
     "message['content'] + eos_token}}{% endif %}{% endfor %}",
     "llama2"},
    {"Llama 2 chat",
     "{% if message['role'] == 'system' %}{{ '<<SYS>>\\n' + content + "
     "'\\n<</SYS>>\\n\\n' }}{% endif %}{{ '[INST] ' + content + ' [/INST]' }}",
     "llama2-sys"},
    {"FusionNet (BOS in history)",
     "{{- bos_token + '[INST] ' + messages[idx]['content'] + ' [/INST]' -}}{{- '[INST] <<SYS>>\\n' "
     "+ messages[idx]['content'] + '\\n<</SYS>>\\n\\n' -}}",
     "llama2-sys-bos"},
    {"Vigogne (stripped)",
     "{{ '[INST] ' + content.strip() + ' [/INST]' }}{{ '<<SYS>>\\n' + content.strip() }}",
     "llama2-sys-strip"},
    {"Mistral v1 with system",
     "{%- if loop.first and system_message is defined %}{{- ' [INST] ' + system_message + "
     "'\\n\\n' + message['content'] + ' [/INST]' }}{%- else %}{{- ' [INST] ' + "
     "message['content'] + ' [/INST]' }}{%- endif %}",
     "mistral-v1"},
    {"Mistral Large 2407 (v3)",
     "{{- \"[AVAILABLE_TOOLS] [\" }}{{- \"[INST] \" + message[\"content\"] + \"[/INST]\" }}",
     "mistral-v3"},
    {"Mistral Nemo (v3 Tekken)",
     "{{- \"[AVAILABLE_TOOLS][\" }}{{- \"[INST]\" + message[\"content\"] + \"[/INST]\" }}",
     "mistral-v3-tekken"},
    {"Mistral Large 2411 (v7)",
     "{{- '[SYSTEM_PROMPT] ' + message['content'] + '[/SYSTEM_PROMPT]' }}{{- '[INST] ' + "
     "message['content'] + '[/INST]' }}",
     "mistral-v7"},
    {"Mistral Small 3.1 (v7 Tekken)",
     "{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}{{- '[INST]' + "
     "message['content'] + '[/INST]' }}",
     "mistral-v7-tekken"},
    {"Phi-3 mini",
     "{{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') %}{{'<|user|>' "
     "+ '\\n' + message['content'] + '<|end|>' + '\\n' + '<|assistant|>' + '\\n'}}{% elif "
     "(message['role'] == 'assistant') %}{{message['content'] + '<|end|>' + '\\n'}}{% endif %}{% "
     "endfor %}",
     "phi3"},
    {"Falcon 3",
     "{{ '<|user|>\\n' + message['content'] + '\\n' }}{{ '<|assistant|>\\n' + "
     "message['content'] + '</s>' }}",
     "falcon3"},
    {"IBM Granite 3.1",
     "{%- for message in loop_messages %}{{- '<|start_of_role|>' + message['role'] + "
     "'<|end_of_role|>' + message['content'] + '<|end_of_text|>\n' }}{%- endfor %}",
     "granite"},
    {"Zephyr",
     "{% for message in messages %}{{ '<|user|>\\n' + message['content'] + "
     "'<|endoftext|>' }}{% endfor %}",
     "zephyr"},
    {"Gemma",
     "{% for message in messages %}{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim "
     "+ '<end_of_turn>\\n' }}{% endfor %}{% if add_generation_prompt "
     "%}{{'<start_of_turn>model\\n'}}"
     "{% endif %}",
     "gemma"},
    {"gpt-oss (harmony)",
     "{{- \"<|start|>system<|message|>\" }}{%- if message.role == 'assistant' -%}"
     "{{- \"<|start|>assistant<|channel|>final<|message|>\" + message.content + \"<|end|>\" }}",
     "gpt-oss"},
    {"OpenChat 3.5",
     "{{ bos_token }}{% for message in messages %}{{ 'GPT4 Correct ' + message['role'].title() + "
     "': ' + message['content'] + '<|end_of_turn|>'}}{% endfor %}",
     "openchat"},
    {"Vicuna", "{{-'USER: ' + message['content'] + '\\n'-}}{{-'ASSISTANT: ' + message['content']}}",
     "vicuna"},
    {"Orca-Vicuna",
     "{{-'SYSTEM: ' + message['content'] + '\\n' -}}{{-'USER: ' + "
     "message['content'] + '\\n'-}}{{-'ASSISTANT: ' + message['content']}}",
     "vicuna-orca"},
    {"DeepSeek Coder",
     "{{'### Instruction:\\n' + message['content'] + '\\n'}}{{'### Response:\\n' "
     "+ message['content'] + '\\n<|EOT|>\\n'}}",
     "deepseek"},
    {"DeepSeek V2",
     "{{ 'User: ' + message['content'] + '\\n\\n' }}{{ 'Assistant: ' + "
     "message['content'] + eos_token }}",
     "deepseek2"},
    {"DeepSeek V3",
     // U+FF5C and U+2581 in UTF-8; literals split where a letter would extend a \x escape
     "{{'<\xef\xbd\x9cUser\xef\xbd\x9c>' + message['content']}}{{'<\xef\xbd\x9c"
     "Assistant"
     "\xef\xbd\x9c>' + content + '<\xef\xbd\x9c"
     "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>'}}",
     "deepseek3"},
    {"DeepSeek R1-0528 and the R1 distills (opening the thought)",
     "{{'<\xef\xbd\x9cUser\xef\xbd\x9c>' + message['content']}}{{'<\xef\xbd\x9c"
     "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>'}}{% if add_generation_prompt %}"
     "{{'<\xef\xbd\x9c"
     "Assistant"
     "\xef\xbd\x9c><think>\\n'}}{% endif %}",
     "deepseek3-thinking"},
    {"Command-R+",
     "{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + "
     "'<|END_OF_TURN_TOKEN|>' }}",
     "command-r"},
    {"EXAONE 3", "{{ '[|system|]' + content + '[|endofturn|]\\n' }}{{ '[|assistant|]' }}",
     "exaone3"},
    {"GLM-4-32B-0414",
     "[gMASK]<sop>{%- for msg in messages %}<|{{ msg.role }}|>\n{{ msg.content }}{%- endfor %}"
     "{% if add_generation_prompt %}<|assistant|>\n{% endif %}",
     "chatglm4"},
    {"GLM-4.5-Air",
     "[gMASK]<sop>{%- for m in messages %}{%- if m.role == 'user' %}<|user|>\n{{ content }}"
     "{{- '/nothink' if (enable_thinking is defined and not enable_thinking) else '' }}"
     "{%- elif m.role == 'assistant' %}<|assistant|>{% for tc in m.tool_calls %}"
     "<arg_key>{{ k }}</arg_key>{% endfor %}{% endif %}{% endfor %}",
     "glm-4.5"},
    {"Ling-lite (bailing)",
     "{% for m in messages %}{% set role = 'HUMAN' if m['role'] == 'user' else m['role'] | upper %}"
     "<role>{{ role }}</role>{{ m['content'] }}{% endfor %}<role>ASSISTANT</role>",
     "bailing"},
    {"Ling-mini-2.0",
     "<role>SYSTEM</role>{{ system }}<|role_end|>{% for m in messages %}<role>HUMAN</role>"
     "{{ m['content'] }}<|role_end|>{% endfor %}<role>ASSISTANT</role>",
     "bailing2"},
    {"dots.llm1.inst",
     "{% for m in messages %}{% if m['role'] == 'user' %}<|userprompt|>{{ m['content'] }}"
     "<|endofuserprompt|>{% endif %}{% endfor %}<|response|>",
     "dots1"},
    {"ERNIE-4.5-0.3B",
     "{{- cls_token -}}{% for m in messages %}{% if m['role'] == 'user' %}{{ 'User: ' + "
     "m['content'] + '\n' }}{% elif m['role'] == 'assistant' %}{{ 'Assistant: ' + m['content'] + "
     "sep_token }}{% endif %}{% endfor %}{{ 'Assistant: ' }}",
     "ernie4.5"},
    {"Moonlight-16B-A3B-Instruct",
     "{%- for message in messages -%}{%- if loop.first and messages[0]['role'] != 'system' -%}"
     "<|im_system|>system<|im_middle|>You are a helpful assistant<|im_end|>{%- endif -%}"
     "{%- if message['role'] == 'system' -%}<|im_system|>{%- endif -%}{%- if message['role'] == "
     "'user' -%}<|im_user|>{%- endif -%}{%- if message['role'] == 'assistant' -%}"
     "<|im_assistant|>{%- endif -%}{{ message['role'] }}<|im_middle|>{{message['content']}}"
     "<|im_end|>{%- endfor -%}{%- if add_generation_prompt -%}"
     "<|im_assistant|>assistant<|im_middle|>{%- endif -%}",
     "kimi-k2"},
    {"Kimi-K2-Instruct-0905 (its tool-call markers)",
     "{%- if tools -%}<|im_system|>tool_declare<|im_middle|>{{ tools | tojson }}<|im_end|>"
     "{%- endif -%}{%- for message in messages -%}{%- if message['role'] == 'assistant' -%}"
     "<|tool_calls_section_begin|>{%- for tool_call in message['tool_calls'] -%}"
     "<|tool_call_begin|>{{ tool_call['id'] }}<|tool_call_argument_begin|>{%- endfor -%}"
     "{%- endif -%}{%- endfor -%}",
     "kimi-k2"},
    {"a bare name, as llama.cpp accepts", "llama3", "llama3"},
};

TEST(ChatDetect, RecognisesTheTemplatesModelsShip) {
  for (const Case& c : kCases) {
    auto t = detect_chat_template(c.jinja);
    ASSERT_TRUE(t.ok()) << c.model << ": " << t.status().to_string();
    EXPECT_EQ((*t)->name(), c.family) << c.model;
  }
}

TEST(ChatDetect, FamiliesNotRenderedAreNamed) {
  auto t = detect_chat_template("{% for item in messages %}<|{{ item['role'] }}|>\n"
                                "{{ item['content'] }}{% endfor %}<|user|><|assistant|>");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t.status().message().find("glmedge"), std::string::npos) << t.status().to_string();
  EXPECT_NE(t.status().message().find("--chat-template NAME"), std::string::npos);
}

TEST(ChatDetect, UnrecognisedTemplatesAndUnknownNamesListTheKnownOnes) {
  auto t = detect_chat_template("{% for m in messages %}<<{{ m['content'] }}>>{% endfor %}");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(t.status().message().find("does not recognise the chat template"), std::string::npos);
  EXPECT_NE(t.status().message().find("--chat-template NAME"), std::string::npos);
  EXPECT_NE(t.status().message().find(chat_template_list()), std::string::npos);
  EXPECT_FALSE(detect_chat_template("  ").ok());

  auto n = find_chat_template("chatml2");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kNotFound);
  EXPECT_NE(n.status().message().find("unknown chat template 'chatml2' (--chat-template)"),
            std::string::npos)
      << n.status().to_string();
  EXPECT_NE(n.status().message().find("mistral-v7-tekken"), std::string::npos);
}

class ModelTemplate : public ::testing::Test {
protected:
  // A GGUF holding only metadata: the template (if any).
  std::unique_ptr<gguf::GgufFile> model_with(const char* jinja) {
    gguf::GgufWriter w;
    w.set("general.architecture", gguf::Value{std::string("llama")});
    if (jinja)
      w.set("tokenizer.chat_template", gguf::Value{std::string(jinja)});
    EXPECT_TRUE(w.write(path_).ok());
    auto f = gguf::GgufFile::open(path_, gguf::OpenMode::kMetadataOnly);
    EXPECT_TRUE(f.ok());
    return f.ok() ? std::move(*f) : nullptr;
  }
  void TearDown() override { std::filesystem::remove(path_); }
  std::string path_ = ::testing::TempDir() + "/chat_template_model.gguf";
};

TEST_F(ModelTemplate, DetectedFromTheMetadataOrForcedByName) {
  auto file = model_with(kCases[0].jinja);
  auto detected = model_chat_template(*file, "");
  ASSERT_TRUE(detected.ok()) << detected.status().to_string();
  EXPECT_EQ((*detected)->name(), "chatml");
  auto forced = model_chat_template(*file, "gemma");
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ((*forced)->name(), "gemma");
  EXPECT_FALSE(model_chat_template(*file, "nope").ok());
}

TEST_F(ModelTemplate, AModelWithoutOneNeedsAName) {
  auto file = model_with(nullptr);
  auto t = model_chat_template(*file, "");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("has no chat template"), std::string::npos);
  EXPECT_NE(t.status().message().find("--chat-template NAME"), std::string::npos);
  EXPECT_TRUE(model_chat_template(*file, "chatml").ok());
  auto odd = model_with("{{ weird }}");
  auto u = model_chat_template(*odd, "");
  ASSERT_FALSE(u.ok());
  EXPECT_NE(u.status().message().find("tokenizer.chat_template"), std::string::npos);
}

} // namespace
} // namespace pshard
