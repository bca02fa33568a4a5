// Test helper: copy a GGUF file with edited metadata and tensors, to make malformed
// models from good ones. A tensor's bytes come from the source tensor it names, so an
// edit can drop tensors, rename them or add copies under new names.
#pragma once

#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace pshard::testing {

struct RewrittenTensor {
  gguf::TensorInfo info; // name, dims and type written
  std::string source;    // the source file's tensor whose bytes are copied
};

using GgufEdit =
    std::function<void(std::vector<gguf::KeyValue>&, std::vector<RewrittenTensor>&)>;

inline void rewrite_gguf(const std::string& src, const std::string& dst, const GgufEdit& edit) {
  auto file = gguf::GgufFile::open(src);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  auto metadata = (*file)->metadata();
  std::vector<RewrittenTensor> tensors;
  for (const auto& t : (*file)->tensors())
    tensors.push_back({t, t.name});
  edit(metadata, tensors);
  gguf::GgufWriter w;
  for (auto& kv : metadata)
    w.set(kv.key, kv.value);
  for (const auto& t : tensors) {
    const gguf::TensorInfo* from = (*file)->find_tensor(t.source);
    ASSERT_NE(from, nullptr) << t.source;
    const uint8_t* data = (*file)->tensor_data(*from);
    ASSERT_TRUE(w.add_tensor(t.info.name, t.info.type, t.info.dims, [=](std::span<uint8_t> out) {
                   std::memcpy(out.data(), data, std::min<size_t>(out.size(), from->n_bytes));
                   return Status::ok_status();
                 }).ok());
  }
  ASSERT_TRUE(w.write(dst).ok());
}

inline void set_key(std::vector<gguf::KeyValue>& md, const std::string& key, gguf::Value v) {
  for (auto& kv : md)
    if (kv.key == key) {
      kv.value = std::move(v);
      return;
    }
  md.push_back({key, std::move(v)});
}

inline void drop_key(std::vector<gguf::KeyValue>& md, const std::string& key) {
  std::erase_if(md, [&](const gguf::KeyValue& kv) { return kv.key == key; });
}

inline void drop_tensor(std::vector<RewrittenTensor>& t, const std::string& name) {
  std::erase_if(t, [&](const RewrittenTensor& r) { return r.info.name == name; });
}

} // namespace pshard::testing
