// pshard-tokenize: text -> tokens (and back) with a GGUF file's vocabulary, with
// llama-tokenize's flags. Reads only the file's metadata, so vocabulary-only
// GGUFs work and a 100 GB model opens in milliseconds.
//
//   pshard-tokenize -m model.gguf -p "Hello world"        #  15043 -> ' Hello' ...
//   pshard-tokenize -m model.gguf -f prompt.txt --ids     # [1, 15043, 3186]
//   pshard-tokenize -m model.gguf -p "<s>x" --no-parse-special --show-count
//   pshard-tokenize -m model.gguf --decode "1, 15043" --json
#include "runtime/gguf/gguf_file.h"
#include "runtime/core/file_bytes.h"
#include "runtime/tokenizer/tokenizer.h"
#include "tools/pshard-tokenize/tokenize_output.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <iterator>

namespace pshard {
namespace {

struct TokenizeOptions {
  std::string model_path;
  std::string prompt;
  std::string prompt_file;
  bool from_stdin = false;
  std::string decode; // --decode: ids to turn back into text
  bool ids_only = false;
  bool no_bos = false;
  bool no_parse_special = false;
  bool show_count = false;
  bool json = false;
};

Result<std::string> read_text(const TokenizeOptions& o) {
  if (o.from_stdin)
    return std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
  if (o.prompt_file.empty())
    return o.prompt;
  return read_text_file(o.prompt_file, "prompt file");
}

Status run(const TokenizeOptions& o, bool decode) {
  PSHARD_ASSIGN_OR_RETURN(auto file,
                          gguf::GgufFile::open(o.model_path, gguf::OpenMode::kMetadataOnly));
  auto loaded = Tokenizer::from_gguf(*file);
  if (!loaded.ok())
    return loaded.status().with_context(o.model_path);
  const Tokenizer& tok = **loaded;
  for (const std::string& warning : tok.warnings())
    std::cerr << "pshard-tokenize: warning: " << warning << "\n";

  if (decode) {
    PSHARD_ASSIGN_OR_RETURN(std::vector<TokenId> ids, parse_token_ids(o.decode, tok.n_vocab()));
    const std::string text = tok.decode(ids);
    if (o.json)
      write_decoded_json(std::cout, ids, text);
    else
      std::cout << text << "\n";
    return Status::ok_status();
  }

  PSHARD_ASSIGN_OR_RETURN(std::string text, read_text(o));
  const bool add_bos = !o.no_bos && tok.add_bos_by_default();
  const std::vector<TokenId> ids = tok.encode(text, add_bos, !o.no_parse_special);
  if (add_bos && ids.size() >= 2 && ids[1] == tok.bos())
    std::cerr << "pshard-tokenize: warning: the text starts with BOS and BOS was added too, so "
                 "there are two (use --no-bos, or drop it from the text)\n";
  if (o.json)
    write_tokens_json(std::cout, tok, ids);
  else if (o.ids_only)
    write_id_list(std::cout, ids);
  else
    write_token_lines(std::cout, tok, ids);
  if (o.show_count && !o.json)
    std::cout << "Total number of tokens: " << ids.size() << "\n";
  return Status::ok_status();
}

} // namespace
} // namespace pshard

int main(int argc, char** argv) {
  pshard::TokenizeOptions o;
  CLI::App app{"pshard-tokenize: tokenize text with a GGUF file's vocabulary (metadata only)"};
  app.add_option("-m,--model", o.model_path, "GGUF file (a model or a vocabulary-only file)")
      ->required();
  auto* prompt = app.add_option("-p,--prompt", o.prompt, "the text to tokenize");
  auto* file = app.add_option("-f,--file", o.prompt_file, "read the text from a file");
  auto* from_stdin = app.add_flag("--stdin", o.from_stdin, "read the text from standard input");
  auto* decode = app.add_option("--decode", o.decode,
                                "turn token ids (\"1, 15043\" or \"[1, 15043]\") back into text");
  prompt->excludes(file, from_stdin, decode);
  file->excludes(from_stdin, decode);
  from_stdin->excludes(decode);
  app.add_flag("--ids", o.ids_only, "print only the ids, as [1, 2, 3]");
  app.add_flag("--no-bos", o.no_bos, "never add BOS, even where the model expects it");
  app.add_flag("--no-parse-special", o.no_parse_special,
               "tokenize control-token text (\"<s>\", \"<|im_end|>\") as plain text");
  app.add_flag("--show-count", o.show_count, "print the number of tokens after them");
  app.add_flag("--json", o.json, "print one JSON object: count, ids, tokens with their pieces");
  CLI11_PARSE(app, argc, argv);
  if (!*prompt && !*file && !*from_stdin && !*decode) {
    std::cerr << "pshard-tokenize: give the text with -p TEXT, -f FILE or --stdin (or ids with "
                 "--decode)\n";
    return 1;
  }

  const pshard::Status status = pshard::run(o, static_cast<bool>(*decode));
  if (!status.ok()) {
    std::cerr << "pshard-tokenize: " << status.to_string() << "\n";
    return 1;
  }
  return 0;
}
