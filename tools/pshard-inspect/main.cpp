// pshard-inspect: prints a pshard file as readable tables or JSON.
//
//   pshard-inspect machine.pshprof          # tables
//   pshard-inspect machine.pshprof --json   # JSON (as flatc --json would write it)
//   pshard-inspect profiles/reference/laptop-rtx4060-8gb.json
//
// The kind of file is told by its FlatBuffers identifier, not its name.
#include "runtime/core/file_bytes.h"
#include "tools/pshard-inspect/inspectors.h"

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <string>
#include <vector>

namespace {

std::string printable(const std::vector<uint8_t>& bytes, size_t from, size_t n) {
  std::string out;
  for (size_t i = from; i < from + n && i < bytes.size(); ++i) {
    const int c = bytes[i];
    if (std::isprint(c) && c != '\'') {
      out += static_cast<char>(c);
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string known_kinds() {
  std::string out;
  for (const auto& i : pshard::inspect::inspectors())
    out += std::string(out.empty() ? "" : ", ") + i.kind + " '" + i.identifier + "'";
  return out;
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{"pshard-inspect: print a pshard file (machine profile, schedule) as tables or JSON"};
  std::string path;
  bool json = false;
  app.add_option("file", path, "*.pshprof, *.pshard, or their JSON form")->required();
  app.add_flag("--json", json, "print JSON instead of tables");
  CLI11_PARSE(app, argc, argv);

  std::vector<uint8_t> bytes;
  if (pshard::Status read = pshard::read_whole_file(path, 1ull << 30, "pshard file", &bytes);
      !read.ok()) {
    std::fprintf(stderr, "pshard-inspect: %s\n", read.to_string().c_str());
    return 1;
  }
  const auto& kinds = pshard::inspect::inspectors();

  // A readable JSON twin: try each kind that has one.
  size_t first = 0;
  while (first < bytes.size() && std::isspace(bytes[first]))
    ++first;
  if (first < bytes.size() && bytes[first] == '{') {
    const std::string text(bytes.begin(), bytes.end());
    for (const auto& kind : kinds) // a kind recognised by its own key first
      if (kind.print_from_json && kind.json_key && text.find(kind.json_key) != std::string::npos)
        return kind.print_from_json(text, path, json);
    for (const auto& kind : kinds)
      if (kind.print_from_json && !kind.json_key)
        return kind.print_from_json(text, path, json);
  }

  for (const auto& kind : kinds) {
    const size_t at = kind.size_prefixed ? 8 : 4;
    if (bytes.size() >= at + 4 && printable(bytes, at, 4) == kind.identifier)
      return kind.print({bytes.data(), bytes.size()}, path, json);
  }

  std::fprintf(stderr,
               "pshard-inspect: '%s' is not a file pshard-inspect knows: %s (it reads %s)\n",
               path.c_str(),
               bytes.size() < 12 ? ("only " + std::to_string(bytes.size()) + " bytes").c_str()
                                 : ("no known identifier at offset 4 or 8: '" +
                                    printable(bytes, 4, 4) + "', '" + printable(bytes, 8, 4) + "'")
                                       .c_str(),
               known_kinds().c_str());
  return 1;
}
