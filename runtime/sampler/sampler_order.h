// The order of the sampler's stages (runtime/sampler/sampler.h), by llama.cpp's names:
// its --samplers ("penalties;dry;top_k;temperature"), --sampling-seq ("edkt") and
// llama-server's `samplers` field (an array of names, or a string of those letters).
//
//   PSHARD_ASSIGN_OR_RETURN(params.order, parse_sampler_names("top_k;min_p;temperature"));
#pragma once

#include "runtime/core/status.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pshard {

enum class SamplerStage : uint8_t {
  kPenalties,   // "penalties", 'e': repeat, frequency and presence penalties
  kDry,         // "dry", 'd'
  kTopNSigma,   // "top_n_sigma", 's'
  kTopK,        // "top_k", 'k'
  kTypicalP,    // "typ_p", 'y'
  kTopP,        // "top_p", 'p'
  kMinP,        // "min_p", 'm'
  kXtc,         // "xtc", 'x'
  kTemperature, // "temperature", 't' (dynamic with dynatemp_range)
};

using SamplerOrder = std::vector<SamplerStage>;

// pshard's order: the temperature before the cuts that read probabilities, as OpenAI,
// vLLM and Hugging Face apply it ("penalties;dry;top_n_sigma;top_k;temperature;typ_p;
// top_p;min_p;xtc").
const SamplerOrder& default_sampler_order();
// llama.cpp's default order, the temperature last ("edskypmxt").
const SamplerOrder& llama_cpp_sampler_order();

// Names as llama.cpp takes them: canonical ("top_k"), kebab-case ("top-k"), without the
// underscore ("topk"), and "nucleus", "temp", "typ"; any case. kInvalidArgument for an
// unknown name (listing the known ones), for llama.cpp's stages pshard lacks ("infill",
// "adaptive_p") and for a stage named twice. No names: no stage (a draw from the
// softmax of the biased logits).
Result<SamplerOrder> parse_sampler_names(std::span<const std::string> names);
// The same, from one list separated by ';' (--samplers), empty items skipped.
Result<SamplerOrder> parse_sampler_names(std::string_view list);
// One letter per stage, as --sampling-seq: e d s k y p m x t.
Result<SamplerOrder> parse_sampler_letters(std::string_view letters);

std::string_view sampler_stage_name(SamplerStage stage);
// The canonical names separated by ';' (what parse_sampler_names reads back).
std::string sampler_order_names(const SamplerOrder& order);

} // namespace pshard
