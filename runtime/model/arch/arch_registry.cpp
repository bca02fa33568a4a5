// The table from general.architecture to its family. A new family is one file in this
// folder and one line here.
#include "runtime/model/arch/arch_family.h"

namespace pshard {
namespace {

constexpr const ArchFamily* kFamilies[] = {
    &kLlamaFamily,       &kQwen2Family,          &kQwen2VlFamily,    &kQwen2MoeFamily,
    &kQwen3Family,       &kQwen3MoeFamily,       &kGemma2Family,     &kGemma3Family,
    &kPhi3Family,        &kGraniteFamily,        &kGraniteMoeFamily, &kMistral3Family,
    &kSmolLm3Family,     &kLlama4Family,         &kGptOssFamily,     &kBertFamily,
    &kNomicBertFamily,   &kGemmaEmbeddingFamily, &kModernBertFamily, &kGlm4Family,
    &kGlm4MoeFamily,     &kErnie45Family,        &kErnie45MoeFamily, &kDots1Family,
    &kBailingMoe2Family, &kPhiMoeFamily,         &kDeepseek2Family,  &kQwen3NextFamily,
    &kQwen35Family,      &kQwen35MoeFamily,      &kQwen3VlFamily,    &kQwen3VlMoeFamily,
};

} // namespace

const ArchFamily* find_arch_family(std::string_view arch) {
  for (const ArchFamily* f : kFamilies)
    if (f->name == arch)
      return f;
  return nullptr;
}

std::span<const ArchFamily* const> arch_families() { return kFamilies; }

std::string unknown_arch_message(std::string_view arch) {
  std::string m = "architecture '" + std::string(arch) + "' is not supported; pshard runs: ";
  for (size_t i = 0; i < std::size(kFamilies); ++i)
    m += (i ? ", " : "") + std::string(kFamilies[i]->name) + " (" +
         std::string(kFamilies[i]->summary) + ")";
  return m;
}

} // namespace pshard
