#include "runtime/model/lora_adapter.h"

#include "runtime/kernels/quantize.h"

#include <memory>
#include <vector>

namespace pshard {
namespace {

// One matrix's update: A (r rows of n_in) and B (n_out rows of r), as floats.
struct LoraPair {
  const gguf::TensorInfo* base = nullptr;
  std::vector<float> a, b;
  int64_t rank = 0;
};

Result<std::vector<float>> floats_of(const gguf::GgufFile& f, const gguf::TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.n_values()));
  const int64_t row = t.row_length();
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(t.type, row));
  const uint8_t* src = f.tensor_data(t);
  for (int64_t r = 0; r < t.n_rows(); ++r)
    dequantize_row(t.type, src + r * row_bytes, out.data() + r * row, row);
  return out;
}

// The adapter's pairs, each checked against the base model.
Result<std::vector<LoraPair>> read_pairs(const gguf::GgufFile& base, const gguf::GgufFile& lora,
                                         const std::string& path) {
  auto fail = [&](const std::string& why) { return invalid_format("LoRA '" + path + "': " + why); };
  std::vector<LoraPair> pairs;
  for (const gguf::TensorInfo& t : lora.tensors()) {
    constexpr std::string_view kA = ".lora_a", kB = ".lora_b";
    if (t.name.ends_with(kB))
      continue; // read with its A
    if (!t.name.ends_with(kA))
      return fail("tensor '" + t.name + "' is neither a .lora_a nor a .lora_b");
    const std::string name = t.name.substr(0, t.name.size() - kA.size());
    const gguf::TensorInfo* b = lora.find_tensor(name + std::string(kB));
    if (!b)
      return fail("'" + t.name + "' has no '" + name + ".lora_b'");
    const gguf::TensorInfo* w = base.find_tensor(name);
    if (!w)
      return fail("it updates '" + name +
                  "', which the model lacks (an adapter of "
                  "another model?)");
    if (w->dims.size() != 2)
      return unsupported("LoRA '" + path + "': '" + name +
                         "' is not a matrix (expert tensors are not supported)");
    if (name == "token_embd.weight")
      return unsupported("LoRA '" + path + "': updates of the token embedding are not supported");
    const int64_t n_in = w->dims[0], n_out = w->dims[1];
    if (t.dims.size() != 2 || b->dims.size() != 2 || t.dims[0] != n_in || b->dims[1] != n_out ||
        b->dims[0] != t.dims[1])
      return fail("'" + name + "' is " + std::to_string(n_in) + " x " + std::to_string(n_out) +
                  ", but its .lora_a is " + std::to_string(t.dims[0]) + " x " +
                  std::to_string(t.dims.size() > 1 ? t.dims[1] : 0) + " and .lora_b " +
                  std::to_string(b->dims[0]) + " x " +
                  std::to_string(b->dims.size() > 1 ? b->dims[1] : 0) +
                  " (want n_in x r and r x n_out)");
    LoraPair p;
    p.base = w;
    p.rank = t.dims[1];
    PSHARD_ASSIGN_OR_RETURN(p.a, floats_of(lora, t));
    PSHARD_ASSIGN_OR_RETURN(p.b, floats_of(lora, *b));
    pairs.push_back(std::move(p));
  }
  if (pairs.empty())
    return fail("it holds no .lora_a / .lora_b pair");
  return pairs;
}

// W += s·B·A, row by row of W (an output's n_in weights) in W's own type.
Status merge(gguf::GgufFile& base, const LoraPair& p, float s) {
  const gguf::TensorInfo& w = *p.base;
  const int64_t n_in = w.dims[0], n_out = w.dims[1], r = p.rank;
  PSHARD_ASSIGN_OR_RETURN(size_t row_bytes, tensor_bytes(w.type, n_in));
  PSHARD_ASSIGN_OR_RETURN(uint8_t * data, base.writable_tensor_data(w));
  std::vector<float> row(static_cast<size_t>(n_in));
  for (int64_t o = 0; o < n_out; ++o) {
    uint8_t* dst = data + o * row_bytes;
    dequantize_row(w.type, dst, row.data(), n_in);
    for (int64_t k = 0; k < r; ++k) {
      const float coef = s * p.b[static_cast<size_t>(o * r + k)];
      const float* a = p.a.data() + k * n_in;
      for (int64_t i = 0; i < n_in; ++i)
        row[static_cast<size_t>(i)] += coef * a[i];
    }
    PSHARD_RETURN_IF_ERROR(quantize_row(w.type, row.data(), dst, n_in));
  }
  return Status::ok_status();
}

} // namespace

Status apply_lora_adapters(gguf::GgufFile& base, std::span<const LoraAdapter> adapters) {
  if (adapters.empty())
    return Status::ok_status();
  PSHARD_ASSIGN_OR_RETURN(std::string arch, base.get_string("general.architecture"));
  // Everything read and checked first, so a bad adapter changes no weight.
  struct Loaded {
    std::unique_ptr<gguf::GgufFile> file;
    std::vector<LoraPair> pairs;
    double scale = 1, alpha = 0;
  };
  std::vector<Loaded> loaded;
  for (const LoraAdapter& a : adapters) {
    PSHARD_ASSIGN_OR_RETURN(auto file, gguf::GgufFile::open(a.path, gguf::OpenMode::kMapData));
    auto text = [&](const char* key) -> std::string {
      auto v = file->find(key) ? file->get_string(key) : Result<std::string>(std::string());
      return v.ok() ? *v : std::string();
    };
    if (text("adapter.type") != "lora" ||
        (file->find("general.type") && text("general.type") != "adapter"))
      return invalid_format("'" + a.path + "' is not a LoRA adapter (its adapter.type is '" +
                            text("adapter.type") + "'; convert_lora_to_gguf.py writes them)");
    if (text("general.architecture") != arch)
      return invalid_argument("LoRA '" + a.path + "' is for a " + text("general.architecture") +
                              " model; this one is " + arch);
    Loaded l;
    PSHARD_ASSIGN_OR_RETURN(l.pairs, read_pairs(base, *file, a.path));
    if (file->find("adapter.lora.alpha")) {
      PSHARD_ASSIGN_OR_RETURN(l.alpha, file->get_float("adapter.lora.alpha"));
    }
    l.scale = a.scale;
    l.file = std::move(file);
    loaded.push_back(std::move(l));
  }
  for (const Loaded& l : loaded)
    for (const LoraPair& p : l.pairs) {
      const double s = l.alpha > 0 ? l.scale * l.alpha / static_cast<double>(p.rank) : l.scale;
      PSHARD_RETURN_IF_ERROR(merge(base, p, static_cast<float>(s))
                                 .with_context("merging LoRA into '" + p.base->name + "'"));
    }
  return Status::ok_status();
}

} // namespace pshard
