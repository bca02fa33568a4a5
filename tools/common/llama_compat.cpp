#include "tools/common/llama_compat.h"

#include <algorithm>

namespace pshard {
namespace {

constexpr std::string_view kPlacement =
    "pshard places weights by a compiled schedule and a VRAM budget, not by layer or tensor: "
    "pshard-compile -m MODEL -o MODEL.pshard, then -s MODEL.pshard --vram SIZE (or --backend "
    "cpu)";

bool is_fa_value(std::string_view v) { return v == "on" || v == "off" || v == "auto"; }

constexpr LlamaCompatFlag kModelFlags[] = {
    {"--jinja", 0, true,
     "pshard renders chat templates natively (runtime/chat); nothing to turn on"},
    {"-fa", -1, true, "pshard's attention kernels are tiled already; nothing to turn on"},
    {"--flash-attn", -1, true, "pshard's attention kernels are tiled already; nothing to turn on"},
    {"-ngl", 1, false, kPlacement},
    {"--n-gpu-layers", 1, false, kPlacement},
    {"--gpu-layers", 1, false, kPlacement},
    {"-ot", 1, false, kPlacement},
    {"--override-tensor", 1, false, kPlacement},
    {"--n-cpu-moe", 1, false, kPlacement},
    {"-ncmoe", 1, false, kPlacement},
    {"--cpu-moe", 0, false, kPlacement},
    {"-cmoe", 0, false, kPlacement},
    {"--no-context-shift", 0, true,
     "pshard never shifts the context: a full context ends the answer (finish_reason length)"},
    {"--context-shift", 0, false,
     "pshard does not drop a conversation's oldest tokens to go on; give a larger -c"},
    {"-sm", 1, true, "pshard runs on one GPU: nothing to split"},
    {"--split-mode", 1, true, "pshard runs on one GPU: nothing to split"},
};
constexpr LlamaCompatFlag kServerFlags[] = {
    {"--embedding", 0, true, "POST /v1/embeddings is always served"},
    {"--embeddings", 0, true, "POST /v1/embeddings is always served"},
    {"--reranking", 0, true, "POST /v1/rerank is served for a reranker"},
    {"--rerank", 0, true, "POST /v1/rerank is served for a reranker"},
    {"--cont-batching", 0, true, "batching is always continuous"},
    {"-cb", 0, true, "batching is always continuous"},
    {"--metrics", 0, true, "GET /metrics is always served"},
};

} // namespace

const std::span<const LlamaCompatFlag> kLlamaModelCompat = kModelFlags;
const std::span<const LlamaCompatFlag> kLlamaServerCompat = kServerFlags;

Result<std::vector<std::string>> absorb_llama_flags(std::vector<std::string> args,
                                                    std::span<const LlamaCompatFlag> flags,
                                                    std::vector<std::string>* notes) {
  std::vector<std::string> out;
  for (size_t i = 0; i < args.size(); ++i) {
    // "--flag=value" names the flag too.
    const std::string_view arg = args[i];
    const std::string_view name = arg.substr(0, arg.find('='));
    const bool inline_value = name.size() < arg.size();
    const auto f = std::find_if(flags.begin(), flags.end(),
                                [&](const LlamaCompatFlag& c) { return c.flag == name; });
    if (i == 0 || f == flags.end()) {
      out.push_back(args[i]);
      continue;
    }
    if (!f->accepted)
      return invalid_argument("llama.cpp's " + std::string(f->flag) + " has no pshard " +
                              "counterpart: " + std::string(f->note));
    if (f->values == 1 && !inline_value) {
      if (i + 1 >= args.size())
        return invalid_argument(std::string(f->flag) + " needs a value");
      ++i;
    } else if (f->values < 0 && !inline_value && i + 1 < args.size() && is_fa_value(args[i + 1])) {
      ++i;
    }
    if (notes)
      notes->push_back(std::string(f->flag) + " ignored: " + std::string(f->note));
  }
  return out;
}

} // namespace pshard
