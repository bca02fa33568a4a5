// Binding the tensors of a GGUF file in place: each tensor is looked up by name, its
// shape checked against the one the metadata implies, and its bytes handed out as a
// MatrixView (never copied) or a float vector (converted only when the file does not
// store F32). The binder remembers what it handed out, so a file carrying tensors no
// layout names is refused. Used by the language model's weights and the projector's.
//
//   TensorBinder b(file, "a qwen2 model", "qwen2 architecture");
//   PSHARD_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, b.find("blk.0.attn_q.weight", {64, 64}));
//   MatrixView wq = b.matrix(*t);
//   PSHARD_RETURN_IF_ERROR(b.check_all_used());
#pragma once

#include "runtime/core/status.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/kernels/matmul.h"
#include "runtime/model/weights.h"

#include <set>
#include <string>
#include <vector>

namespace pshard {

// "[64, 128]"
std::string dims_text(const std::vector<int64_t>& dims);

class TensorBinder {
public:
  // `owner` names what needs the tensors in messages ("a qwen2 model"); `scheme` what a
  // stray tensor is not part of ("qwen2 architecture").
  TensorBinder(const gguf::GgufFile& file, std::string owner, std::string scheme)
      : file_(file), owner_(std::move(owner)), scheme_(std::move(scheme)) {}

  // The tensor, or null when an optional one is absent.
  Result<const gguf::TensorInfo*> find(const std::string& name, const std::vector<int64_t>& dims,
                                       bool required = true);
  MatrixView matrix(const gguf::TensorInfo& t) const;
  VectorWeight vector(const gguf::TensorInfo& t) const;
  // A tensor the file may carry that is deliberately not bound (an unrun block's).
  void leave_in_file(const std::string& name) { used_.insert(name); }
  Status check_all_used() const;

private:
  const gguf::GgufFile& file_;
  std::string owner_, scheme_;
  std::set<std::string> used_;
};

} // namespace pshard
