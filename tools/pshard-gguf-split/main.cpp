// pshard-gguf-split: split a GGUF model into shards the way llama.cpp's gguf-split does,
// or merge a split model back into one file. Every tool reads either form; this one
// exists to make and undo splits (and to test them).
//
//   pshard-gguf-split --split-max-tensors 128 model.gguf out/model   #
//   out/model-00001-of-0000N.gguf ... pshard-gguf-split --merge model-00001-of-00003.gguf
//   model.gguf
//
// The output files are written under temporary names and renamed only once all are
// complete.
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

#include "tools/common/cli_checks.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace cli = pshard::cli;

int main(int argc, char** argv) {
  std::string in, out;
  uint32_t max_tensors = 0;
  bool merge = false;
  CLI::App app{"pshard-gguf-split: split a GGUF model into shards (llama.cpp gguf-split's "
               "layout), or merge one"};
  app.add_option("input", in, "the model: a GGUF file, or the first shard of a split one")
      ->required();
  app.add_option("output", out,
                 "with --split-max-tensors, the shards' prefix (OUTPUT-00001-of-0000N.gguf); "
                 "with --merge, the file to write")
      ->required();
  auto* split = app.add_option("--split-max-tensors", max_tensors, "tensors per shard at most")
                    ->check(cli::between(1, 1 << 24));
  app.add_flag("--merge", merge, "write the model as one file")->excludes(split);
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const pshard::Status& s) {
    std::cerr << "pshard-gguf-split: " << s.to_string() << "\n";
    return 1;
  };
  if (!merge && max_tensors == 0)
    return fail(pshard::invalid_argument("give --split-max-tensors N to split, or --merge"));
  auto file = pshard::gguf::GgufFile::open(in, pshard::gguf::OpenMode::kMapData);
  if (!file.ok())
    return fail(file.status());
  auto writer = pshard::gguf::GgufWriter::copy_of(**file);
  if (!writer.ok())
    return fail(writer.status());
  pshard::gguf::GgufWriter::WriteOptions options;
  options.split_max_tensors = merge ? 0 : max_tensors;
  if (pshard::Status s = writer->write(out, options); !s.ok())
    return fail(s);
  for (const std::string& path : writer->output_paths(out, options))
    std::cout << path << "\n";
  return 0;
}
