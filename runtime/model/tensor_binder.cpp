#include "runtime/model/tensor_binder.h"

#include "runtime/kernels/quantize.h"

namespace pshard {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

Result<const gguf::TensorInfo*>
TensorBinder::find(const std::string& name, const std::vector<int64_t>& dims, bool required) {
  const gguf::TensorInfo* t = file_.find_tensor(name);
  if (!t) {
    if (!required)
      return static_cast<const gguf::TensorInfo*>(nullptr);
    return invalid_format("tensor '" + name + "' is missing from the file (" + owner_ +
                          " needs it)");
  }
  if (t->dims != dims)
    return invalid_format("tensor '" + name + "' has shape " + dims_text(t->dims) + ", expected " +
                          dims_text(dims) + " from the file's metadata");
  used_.insert(name);
  return t;
}

MatrixView TensorBinder::matrix(const gguf::TensorInfo& t) const {
  const int64_t cols = t.dims[0], rows = t.dims.size() > 1 ? t.dims[1] : 1;
  const size_t row_bytes = tensor_bytes(t.type, cols).value();
  return MatrixView{t.type, file_.tensor_data(t), rows, cols, row_bytes};
}

VectorWeight TensorBinder::vector(const gguf::TensorInfo& t) const {
  VectorWeight w;
  const uint8_t* bytes = file_.tensor_data(t);
  if (t.type == TensorType::kF32) {
    w.data = reinterpret_cast<const float*>(bytes);
    return w;
  }
  int64_t n = 1; // a vector, or a small table read as one (a conv's taps)
  for (int64_t d : t.dims)
    n *= d;
  w.converted = std::make_shared<std::vector<float>>(static_cast<size_t>(n));
  dequantize_row(t.type, bytes, w.converted->data(), n);
  w.data = w.converted->data();
  return w;
}

Status TensorBinder::check_all_used() const {
  for (const auto& t : file_.tensors())
    if (!used_.count(t.name))
      return unsupported("tensor '" + t.name + "' is not part of the " + scheme_ +
                         " as pshard runs it (is general.architecture right, or does the "
                         "file carry extra tensors?)");
  return Status::ok_status();
}

} // namespace pshard
