// Reads the real GGUF files in shared/ (models and tokenizer vocabularies).
#include "gguf_test_util.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>

namespace pshard::gguf {
namespace {

namespace fs = std::filesystem;
using testing::values_equal;

std::vector<std::string> gguf_files_in(const std::string& folder) {
  std::vector<std::string> paths;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".gguf")
      paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string shared(const std::string& sub) { return std::string(PSHARD_SHARED_DIR) + "/" + sub; }

#define SKIP_IF_MISSING(path)                                                                      \
  if (!fs::exists(path))                                                                           \
  GTEST_SKIP() << (path) << " is absent (shared test data not checked out)"

void expect_same_header(const GgufFile& a, const GgufFile& b) {
  EXPECT_EQ(a.version(), b.version());
  EXPECT_EQ(a.alignment(), b.alignment());
  EXPECT_EQ(a.data_offset(), b.data_offset());
  EXPECT_EQ(a.file_size(), b.file_size());
  ASSERT_EQ(a.metadata().size(), b.metadata().size());
  for (size_t i = 0; i < a.metadata().size(); ++i) {
    EXPECT_EQ(a.metadata()[i].key, b.metadata()[i].key);
    EXPECT_TRUE(values_equal(a.metadata()[i].value, b.metadata()[i].value)) << a.metadata()[i].key;
  }
  ASSERT_EQ(a.tensors().size(), b.tensors().size());
  for (size_t i = 0; i < a.tensors().size(); ++i) {
    const TensorInfo& x = a.tensors()[i];
    const TensorInfo& y = b.tensors()[i];
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.dims, y.dims);
    EXPECT_EQ(x.type, y.type);
    EXPECT_EQ(x.offset, y.offset);
    EXPECT_EQ(x.n_bytes, y.n_bytes);
  }
}

void check_file(const std::string& path) {
  SCOPED_TRACE(path);
  auto header = GgufFile::open(path, OpenMode::kMetadataOnly);
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  EXPECT_FALSE((*header)->has_data());
  EXPECT_TRUE((*header)->mapped_bytes().empty());
  auto mapped = GgufFile::open(path, OpenMode::kMapData);
  ASSERT_TRUE(mapped.ok()) << mapped.status().to_string();
  ASSERT_TRUE((*mapped)->has_data());
  EXPECT_EQ((*mapped)->file_size(), fs::file_size(path));
  expect_same_header(**header, **mapped);

  const std::span<const uint8_t> bytes = (*mapped)->mapped_bytes();
  ASSERT_EQ(bytes.size(), (*mapped)->file_size());
  for (const TensorInfo& t : (*mapped)->tensors()) {
    EXPECT_EQ((*header)->tensor_data(t), nullptr);
    const uint8_t* data = (*mapped)->tensor_data(t);
    EXPECT_GE(data, bytes.data() + (*mapped)->data_offset()) << t.name;
    EXPECT_LE(data + t.n_bytes, bytes.data() + bytes.size()) << t.name;
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % (*mapped)->alignment(), 0u) << t.name;
    EXPECT_EQ((*mapped)->find_tensor(t.name), &t);
    EXPECT_EQ(t.n_values(), t.row_length() * t.n_rows());
  }
}

TEST(GgufRealFilesTest, EveryModelOpensInBothModesAndAgrees) {
  SKIP_IF_MISSING(shared("models"));
  const auto paths = gguf_files_in(shared("models"));
  ASSERT_FALSE(paths.empty());
  for (const std::string& path : paths)
    check_file(path);
}

// Headers only (LongHeaderReadsWholeInMetadataOnlyMode compares the modes on
// one of them): these are large, and the suite must stay fast under sanitizers.
TEST(GgufRealFilesTest, EveryVocabularyReadsInMetadataOnlyMode) {
  SKIP_IF_MISSING(shared("vocab"));
  for (const std::string& path : gguf_files_in(shared("vocab"))) {
    SCOPED_TRACE(path);
    auto file = GgufFile::open(path, OpenMode::kMetadataOnly);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    EXPECT_TRUE((*file)->tensors().empty());
    EXPECT_TRUE((*file)->get_string("tokenizer.ggml.model").ok());
    auto tokens = (*file)->get_array("tokenizer.ggml.tokens");
    ASSERT_TRUE(tokens.ok()) << tokens.status().to_string();
    EXPECT_GT((*tokens)->items.size(), 1000u);
  }
}

TEST(GgufRealFilesTest, Stories260KHasItsKnownShape) {
  const std::string path = shared("models/stories260K.gguf");
  SKIP_IF_MISSING(path);
  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const GgufFile& f = **file;
  EXPECT_EQ(f.path(), path);
  EXPECT_EQ(f.get_string("general.architecture").value(), "llama");
  EXPECT_EQ(f.get_uint("llama.block_count").value(), 5u);
  EXPECT_EQ(f.get_uint("llama.embedding_length").value(), 64u);
  EXPECT_EQ(f.get_int("llama.attention.head_count").value(), 8);
  EXPECT_EQ(f.get_uint("llama.attention.head_count_kv").value(), 4u);
  EXPECT_EQ(f.get_uint("llama.feed_forward_length").value(), 172u);
  EXPECT_GT(f.get_float("llama.attention.layer_norm_rms_epsilon").value(), 0.0);
  auto tokens = f.get_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ((*tokens)->element_type, ValueType::kString);
  EXPECT_EQ((*tokens)->items.size(), 512u);

  const TensorInfo* embd = f.find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->type, TensorType::kF32);
  EXPECT_EQ(embd->dims, (std::vector<int64_t>{64, 512}));
  EXPECT_EQ(embd->n_bytes, 64u * 512u * 4u);
  EXPECT_EQ(embd->row_length(), 64);
  EXPECT_EQ(embd->n_rows(), 512);
  EXPECT_NE(f.find_tensor("blk.4.ffn_down.weight"), nullptr);
  EXPECT_EQ(f.find_tensor("blk.5.ffn_down.weight"), nullptr);
}

TEST(GgufRealFilesTest, QuantizedModelHasQ8Rows) {
  const std::string path = shared("models/stories260K-Q8_0-mixed.gguf");
  SKIP_IF_MISSING(path);
  auto file = GgufFile::open(path, OpenMode::kMetadataOnly);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const TensorInfo* q = (*file)->find_tensor("blk.0.attn_q.weight");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->type, TensorType::kQ8_0);
  EXPECT_EQ(q->n_bytes, 64u / 32u * 34u * 64u);
  const TensorInfo* down = (*file)->find_tensor("blk.0.ffn_down.weight");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->type, TensorType::kF32); // 172 columns: not a whole number of blocks
}

// The vocabulary's header (32000 tokens) is longer than the metadata-only
// open's first read, so this exercises its grow-and-retry path.
TEST(GgufRealFilesTest, LongHeaderReadsWholeInMetadataOnlyMode) {
  const std::string path = shared("vocab/ggml-vocab-llama-spm.gguf");
  SKIP_IF_MISSING(path);
  auto file = GgufFile::open(path, OpenMode::kMetadataOnly);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_TRUE((*file)->tensors().empty());
  EXPECT_GT((*file)->file_size(), 256u * 1024u);
  EXPECT_EQ((*file)->get_string("tokenizer.ggml.model").value(), "llama");
  auto tokens = (*file)->get_array("tokenizer.ggml.tokens");
  ASSERT_TRUE(tokens.ok());
  EXPECT_EQ((*tokens)->items.size(), 32000u);
  EXPECT_EQ(std::get<std::string>((*tokens)->items[1].v), "<s>");

  const std::vector<uint8_t> bytes = testing::read_file(path);
  auto parsed = GgufFile::parse(bytes);
  ASSERT_TRUE(parsed.ok()) << parsed.status().to_string();
  expect_same_header(**file, **parsed);
}

// Copying a real model through the writer gives back the same metadata and bytes.
TEST(GgufRealFilesTest, RewritingAModelPreservesEverything) {
  const std::string path = shared("models/stories260K-Q4_0-mixed.gguf");
  SKIP_IF_MISSING(path);
  auto original = GgufFile::open(path);
  ASSERT_TRUE(original.ok()) << original.status().to_string();
  const GgufFile& src = **original;

  GgufWriter writer;
  for (const KeyValue& kv : src.metadata())
    writer.set(kv.key, kv.value);
  for (const TensorInfo& t : src.tensors()) {
    Status added = writer.add_tensor(t.name, t.type, t.dims, [&src, &t](std::span<uint8_t> out) {
      std::memcpy(out.data(), src.tensor_data(t), out.size());
      return Status::ok_status();
    });
    ASSERT_TRUE(added.ok()) << added.to_string();
  }
  testing::ScopedTempDir dir;
  ASSERT_TRUE(writer.write(dir.file("copy.gguf")).ok());
  auto copy = GgufFile::open(dir.file("copy.gguf"));
  ASSERT_TRUE(copy.ok()) << copy.status().to_string();

  ASSERT_EQ((*copy)->metadata().size(), src.metadata().size());
  for (size_t i = 0; i < src.metadata().size(); ++i)
    EXPECT_TRUE(values_equal((*copy)->metadata()[i].value, src.metadata()[i].value));
  ASSERT_EQ((*copy)->tensors().size(), src.tensors().size());
  for (const TensorInfo& t : src.tensors()) {
    const TensorInfo* c = (*copy)->find_tensor(t.name);
    ASSERT_NE(c, nullptr) << t.name;
    EXPECT_EQ(c->dims, t.dims);
    ASSERT_EQ(c->n_bytes, t.n_bytes);
    EXPECT_EQ(std::memcmp((*copy)->tensor_data(*c), src.tensor_data(t), t.n_bytes), 0) << t.name;
  }
}

} // namespace
} // namespace pshard::gguf
