#include "runtime/model/llama_weights.h"

#include "runtime/kernels/quantize.h"

#include <set>
#include <string>

namespace pshard {
namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// Looks tensors up by name, checking shapes and remembering which were used.
class TensorBinder {
public:
  TensorBinder(const gguf::GgufFile& file) : file_(file) {}

  Result<const gguf::TensorInfo*> find(const std::string& name, std::vector<int64_t> dims,
                                       bool required = true) {
    const gguf::TensorInfo* t = file_.find_tensor(name);
    if (!t) {
      if (!required)
        return static_cast<const gguf::TensorInfo*>(nullptr);
      return invalid_format("tensor '" + name + "' is missing from the model");
    }
    if (t->dims != dims)
      return invalid_format("tensor '" + name + "' has shape " + dims_text(t->dims) +
                            ", expected " + dims_text(dims) + " from the model's metadata");
    used_.insert(name);
    return t;
  }

  Result<MatrixView> matrix(const std::string& name, int64_t cols, int64_t rows) {
    PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name, {cols, rows}));
    return view(*t, rows, cols);
  }

  Result<ExpertWeights> experts(const std::string& name, int64_t cols, int64_t rows,
                                int64_t n_expert) {
    PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name, {cols, rows, n_expert}));
    return ExpertWeights{view(*t, rows, cols), n_expert, {}};
  }

  Result<VectorWeight> vector(const std::string& name, int64_t n, bool required = true) {
    PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name, {n}, required));
    VectorWeight w;
    if (!t)
      return w;
    const uint8_t* bytes = file_.tensor_data(*t);
    if (t->type == TensorType::kF32) {
      w.data = reinterpret_cast<const float*>(bytes);
      return w;
    }
    w.converted = std::make_shared<std::vector<float>>(static_cast<size_t>(n));
    dequantize_row(t->type, bytes, w.converted->data(), n);
    w.data = w.converted->data();
    return w;
  }

  Status check_all_used() const {
    for (const auto& t : file_.tensors())
      if (!used_.count(t.name))
        return unsupported("tensor '" + t.name +
                           "' is not part of the llama architecture as pshard runs it "
                           "(biases and extra tensors are not supported)");
    return Status::ok_status();
  }

private:
  MatrixView view(const gguf::TensorInfo& t, int64_t rows, int64_t cols) const {
    const size_t row_bytes = tensor_bytes(t.type, cols).value();
    return MatrixView{t.type, file_.tensor_data(t), rows, cols, row_bytes};
  }

  const gguf::GgufFile& file_;
  std::set<std::string> used_;
};

Status bind_layer(TensorBinder& b, const LlamaHParams& hp, int64_t il, LayerWeights* w) {
  const std::string p = "blk." + std::to_string(il) + ".";
  const int64_t d = hp.n_embd;
  PSHARD_ASSIGN_OR_RETURN(w->attn.norm, b.vector(p + "attn_norm.weight", d));
  PSHARD_ASSIGN_OR_RETURN(w->attn.wq, b.matrix(p + "attn_q.weight", d, hp.q_dim()));
  PSHARD_ASSIGN_OR_RETURN(w->attn.wk, b.matrix(p + "attn_k.weight", d, hp.kv_dim()));
  PSHARD_ASSIGN_OR_RETURN(w->attn.wv, b.matrix(p + "attn_v.weight", d, hp.kv_dim()));
  PSHARD_ASSIGN_OR_RETURN(w->attn.wo, b.matrix(p + "attn_output.weight", hp.q_dim(), d));
  if (!hp.is_moe()) {
    PSHARD_ASSIGN_OR_RETURN(w->ffn.norm, b.vector(p + "ffn_norm.weight", d));
    PSHARD_ASSIGN_OR_RETURN(w->ffn.gate, b.matrix(p + "ffn_gate.weight", d, hp.n_ff));
    PSHARD_ASSIGN_OR_RETURN(w->ffn.up, b.matrix(p + "ffn_up.weight", d, hp.n_ff));
    PSHARD_ASSIGN_OR_RETURN(w->ffn.down, b.matrix(p + "ffn_down.weight", hp.n_ff, d));
    return Status::ok_status();
  }
  const int64_t ne = hp.n_expert;
  PSHARD_ASSIGN_OR_RETURN(w->moe.norm, b.vector(p + "ffn_norm.weight", d));
  PSHARD_ASSIGN_OR_RETURN(w->moe.router, b.matrix(p + "ffn_gate_inp.weight", d, ne));
  PSHARD_ASSIGN_OR_RETURN(w->moe.gate, b.experts(p + "ffn_gate_exps.weight", d, hp.n_ff, ne));
  PSHARD_ASSIGN_OR_RETURN(w->moe.up, b.experts(p + "ffn_up_exps.weight", d, hp.n_ff, ne));
  PSHARD_ASSIGN_OR_RETURN(w->moe.down, b.experts(p + "ffn_down_exps.weight", hp.n_ff, d, ne));
  return Status::ok_status();
}

} // namespace

Result<LlamaWeights> bind_llama_weights(const gguf::GgufFile& file, const LlamaHParams& hp) {
  if (!file.has_data())
    return invalid_argument("the model was opened metadata-only; open it with its data mapped");
  TensorBinder b(file);
  LlamaWeights w;
  PSHARD_ASSIGN_OR_RETURN(w.token_embd, b.matrix("token_embd.weight", hp.n_embd, hp.n_vocab));
  PSHARD_ASSIGN_OR_RETURN(w.output_norm, b.vector("output_norm.weight", hp.n_embd));
  PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* out,
                          b.find("output.weight", {hp.n_embd, hp.n_vocab}, /*required=*/false));
  if (out) {
    PSHARD_ASSIGN_OR_RETURN(w.output, b.matrix("output.weight", hp.n_embd, hp.n_vocab));
  } else {
    w.output = w.token_embd;
    w.tied_output = true;
  }
  PSHARD_ASSIGN_OR_RETURN(w.rope_freqs,
                          b.vector("rope_freqs.weight", hp.rope_dim / 2, /*required=*/false));
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int64_t il = 0; il < hp.n_layer; ++il)
    PSHARD_RETURN_IF_ERROR(bind_layer(b, hp, il, &w.layers[static_cast<size_t>(il)]));
  PSHARD_RETURN_IF_ERROR(b.check_all_used());
  return w;
}

} // namespace pshard
