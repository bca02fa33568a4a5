// Writer round trips, sparse files, failure clean-up, and the reader's getters.
#include "gguf_test_util.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <sys/stat.h>

namespace pshard::gguf {
namespace {

using testing::ScopedTempDir;
using testing::values_equal;

Value str(const char* s) { return Value{std::string(s)}; }

Value array_of(ValueType type, std::vector<Value> items) {
  return Value{Array{type, std::move(items)}};
}

// One key per value type, plus empty, nested and mixed-nested arrays.
std::vector<KeyValue> every_value_type() {
  return {
      {"t.u8", Value{uint8_t{200}}},
      {"t.i8", Value{int8_t{-100}}},
      {"t.u16", Value{uint16_t{60000}}},
      {"t.i16", Value{int16_t{-30000}}},
      {"t.u32", Value{uint32_t{4000000000u}}},
      {"t.i32", Value{int32_t{-3}}},
      {"t.f32", Value{1.5f}},
      {"t.bool", Value{true}},
      {"t.string", str("llama")},
      {"t.empty_string", str("")},
      {"t.u64", Value{uint64_t{1} << 63}},
      {"t.i64", Value{int64_t{-(int64_t{1} << 62)}}},
      {"t.f64", Value{-2.25}},
      {"t.nan", Value{std::nanf("")}},
      {"t.array_i32", array_of(ValueType::kInt32, {Value{int32_t{1}}, Value{int32_t{-2}}})},
      {"t.array_str", array_of(ValueType::kString, {str("a"), str(""), str("ccc")})},
      {"t.array_empty", array_of(ValueType::kFloat64, {})},
      {"t.array_bool", array_of(ValueType::kBool, {Value{false}, Value{true}})},
      {"t.nested",
       array_of(ValueType::kArray,
                {array_of(ValueType::kUint8, {Value{uint8_t{1}}}),
                 array_of(ValueType::kString, {str("x")}), array_of(ValueType::kArray, {}),
                 array_of(ValueType::kArray, {array_of(ValueType::kInt64, {Value{int64_t{7}}})})})},
  };
}

// Fills a tensor with a byte pattern derived from its index, so mix-ups show.
GgufWriter::FillFn pattern(uint8_t seed, int* calls = nullptr) {
  return [seed, calls](std::span<uint8_t> out) {
    if (calls != nullptr)
      ++*calls;
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = static_cast<uint8_t>(seed + i * 7);
    return Status::ok_status();
  };
}

struct TensorSpec {
  const char* name;
  TensorType type;
  std::vector<int64_t> dims;
  uint64_t bytes;
};

const std::vector<TensorSpec>& tensor_specs() {
  static const std::vector<TensorSpec> specs = {
      {"f32.weight", TensorType::kF32, {3}, 12},
      {"f16.weight", TensorType::kF16, {5, 3}, 30},
      {"bf16.weight", TensorType::kBF16, {2, 2, 2}, 16},
      {"q8_0.weight", TensorType::kQ8_0, {64, 3}, 2u * 34 * 3},
      {"q4_0.weight", TensorType::kQ4_0, {32, 1, 2, 3}, 18u * 6},
  };
  return specs;
}

void round_trip(uint32_t alignment_or_zero) {
  SCOPED_TRACE("alignment " + std::to_string(alignment_or_zero));
  GgufWriter writer;
  for (const KeyValue& kv : every_value_type())
    writer.set(kv.key, kv.value);
  if (alignment_or_zero != 0)
    writer.set("general.alignment", Value{alignment_or_zero});
  int calls[5] = {};
  for (size_t i = 0; i < tensor_specs().size(); ++i) {
    const TensorSpec& s = tensor_specs()[i];
    ASSERT_TRUE(
        writer.add_tensor(s.name, s.type, s.dims, pattern(static_cast<uint8_t>(i), &calls[i]))
            .ok());
  }
  ScopedTempDir dir;
  const std::string path = dir.file("all.gguf");
  Status written = writer.write(path);
  ASSERT_TRUE(written.ok()) << written.to_string();
  for (int c : calls)
    EXPECT_EQ(c, 1);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"all.gguf"});

  auto file = GgufFile::open(path);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  const GgufFile& f = **file;
  const uint64_t alignment = alignment_or_zero != 0 ? alignment_or_zero : 32;
  EXPECT_EQ(f.version(), 3u);
  EXPECT_EQ(f.alignment(), alignment);
  EXPECT_EQ(f.data_offset() % alignment, 0u);

  const auto expected = every_value_type();
  ASSERT_EQ(f.metadata().size(), expected.size() + (alignment_or_zero != 0 ? 1 : 0));
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(f.metadata()[i].key, expected[i].key);
    EXPECT_TRUE(values_equal(f.metadata()[i].value, expected[i].value)) << expected[i].key;
  }
  ASSERT_EQ(f.tensors().size(), tensor_specs().size());
  for (size_t i = 0; i < tensor_specs().size(); ++i) {
    const TensorSpec& s = tensor_specs()[i];
    const TensorInfo& t = f.tensors()[i];
    EXPECT_EQ(t.name, s.name);
    EXPECT_EQ(t.type, s.type);
    EXPECT_EQ(t.dims, s.dims);
    ASSERT_EQ(t.n_bytes, s.bytes) << s.name;
    EXPECT_EQ(t.offset % alignment, 0u);
    std::vector<uint8_t> want(s.bytes);
    ASSERT_TRUE(pattern(static_cast<uint8_t>(i))(want).ok());
    EXPECT_EQ(std::memcmp(f.tensor_data(t), want.data(), want.size()), 0) << s.name;
  }
}

TEST(GgufWriterTest, RoundTripsEveryValueAndTensorTypeAtDefaultAlignment) { round_trip(0); }
TEST(GgufWriterTest, RoundTripsWithCustomAlignment) { round_trip(64); }
TEST(GgufWriterTest, RoundTripsWithPageAlignment) { round_trip(4096); }

TEST(GgufWriterTest, SetReplacesInPlace) {
  GgufWriter writer;
  writer.set("a", Value{uint32_t{1}});
  writer.set("b", Value{uint32_t{2}});
  writer.set("a", str("replaced"));
  ScopedTempDir dir;
  ASSERT_TRUE(writer.write(dir.file("x.gguf")).ok());
  auto file = GgufFile::open(dir.file("x.gguf"), OpenMode::kMetadataOnly);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  ASSERT_EQ((*file)->metadata().size(), 2u);
  EXPECT_EQ((*file)->metadata()[0].key, "a");
  EXPECT_EQ((*file)->get_string("a").value(), "replaced");
  EXPECT_EQ((*file)->metadata()[1].key, "b");
}

TEST(GgufWriterTest, AddTensorRejectsBadShapesTypesAndDuplicates) {
  GgufWriter w;
  ASSERT_TRUE(w.add_tensor("a", TensorType::kF32, {4}, nullptr).ok());
  struct Case {
    const char* name;
    TensorType type;
    std::vector<int64_t> dims;
    const char* phrase;
  };
  const Case cases[] = {
      {"a", TensorType::kF32, {4}, "already added"},
      {"b", TensorType::kF32, {}, "dimensions"},
      {"b", TensorType::kF32, {1, 1, 1, 1, 1}, "dimensions"},
      {"b", TensorType::kF32, {4, 0}, "dims[1]"},
      {"b", TensorType::kF32, {-4}, "dims[0]"},
      {"b", TensorType::kF32, {int64_t{1} << 40, int64_t{1} << 40}, "overflows"},
      {"b", TensorType::kQ8_0, {48, 2}, "multiple of q8_0"},
      {"b", TensorType::kQ4_0, {16}, "multiple of q4_0"},
      {"b", TensorType::kQ4_K, {96, 2}, "multiple of q4_k"}, // K-quants: rows of 256
      {"b", static_cast<TensorType>(16), {256}, "not a supported type"},
  };
  for (const Case& c : cases) {
    Status s = w.add_tensor(c.name, c.type, c.dims, nullptr);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.phrase;
    EXPECT_NE(s.message().find(c.phrase), std::string::npos) << s.message();
  }
}

TEST(GgufWriterTest, RefusesMetadataTheReaderWouldRefuse) {
  ScopedTempDir dir;
  GgufWriter mixed;
  mixed.set("m", array_of(ValueType::kUint8, {Value{uint8_t{1}}, Value{int8_t{1}}}));
  Status s = mixed.write(dir.file("m.gguf"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("'m'"), std::string::npos) << s.message();

  GgufWriter bad_alignment;
  bad_alignment.set("general.alignment", Value{uint32_t{48}});
  s = bad_alignment.write(dir.file("a.gguf"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("general.alignment"), std::string::npos) << s.message();

  GgufWriter deep;
  Value v = array_of(ValueType::kUint8, {});
  for (int i = 0; i < 9; ++i)
    v = array_of(ValueType::kArray, {v});
  deep.set("deep", v);
  s = deep.write(dir.file("d.gguf"));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("nest"), std::string::npos) << s.message();
  EXPECT_TRUE(dir.entries().empty());
}

TEST(GgufWriterTest, FailingFillLeavesNoFileBehind) {
  ScopedTempDir dir;
  GgufWriter writer;
  writer.set("general.architecture", str("llama"));
  ASSERT_TRUE(writer.add_tensor("ok", TensorType::kF32, {8}, pattern(1)).ok());
  ASSERT_TRUE(writer
                  .add_tensor("bad", TensorType::kF32, {8},
                              [](std::span<uint8_t>) { return internal_error("generator broke"); })
                  .ok());
  Status s = writer.write(dir.file("model.gguf"));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("generator broke"), std::string::npos);
  EXPECT_NE(s.message().find("'bad'"), std::string::npos) << s.message();
  EXPECT_TRUE(dir.entries().empty());
}

TEST(GgufWriterTest, FailedRewriteKeepsTheOldFile) {
  ScopedTempDir dir;
  GgufWriter good;
  good.set("version", Value{uint32_t{1}});
  ASSERT_TRUE(good.write(dir.file("model.gguf")).ok());
  const std::vector<uint8_t> before = testing::read_file(dir.file("model.gguf"));

  GgufWriter bad;
  ASSERT_TRUE(bad.add_tensor("t", TensorType::kF32, {4},
                             [](std::span<uint8_t>) { return io_error("source vanished"); })
                  .ok());
  EXPECT_EQ(bad.write(dir.file("model.gguf")).code(), StatusCode::kIoError);
  EXPECT_EQ(testing::read_file(dir.file("model.gguf")), before);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"model.gguf"});
}

TEST(GgufWriterTest, UnwritableDirectoryIsAnIoError) {
  GgufWriter writer;
  Status s = writer.write("/nonexistent-dir/for/sure/model.gguf");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("/nonexistent-dir"), std::string::npos) << s.message();
}

// A ~96 GiB model written sparse takes no disk, and a metadata-only open of it is
// as quick as of a small file because the data is never read.
TEST(GgufWriterTest, SparseFileIsAHoleAndOpensFastWithoutData) {
  ScopedTempDir dir;
  const std::string path = dir.file("huge.gguf");
  GgufWriter writer;
  writer.set("general.architecture", str("llama"));
  bool filled = false;
  const std::vector<int64_t> dims = {8192, 6 * (int64_t{1} << 20)};
  ASSERT_TRUE(writer
                  .add_tensor("big.weight", TensorType::kF16, dims,
                              [&](std::span<uint8_t>) {
                                filled = true;
                                return Status::ok_status();
                              })
                  .ok());
  ASSERT_TRUE(writer.add_tensor("small.weight", TensorType::kF32, {64}, pattern(3)).ok());
  GgufWriter::WriteOptions sparse;
  sparse.sparse = true;
  Status written = writer.write(path, sparse);
  ASSERT_TRUE(written.ok()) << written.to_string();
  EXPECT_FALSE(filled);

  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  const uint64_t big_bytes = 8192ull * 6 * (1ull << 20) * 2;
  EXPECT_GE(static_cast<uint64_t>(st.st_size), big_bytes + 64u * 4);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, uint64_t{1} << 20);

  const auto start = std::chrono::steady_clock::now();
  auto file = GgufFile::open(path, OpenMode::kMetadataOnly);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_LT(elapsed, std::chrono::milliseconds(500));
  EXPECT_EQ((*file)->file_size(), static_cast<uint64_t>(st.st_size));
  const TensorInfo* big = (*file)->find_tensor("big.weight");
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(big->n_bytes, big_bytes);
  const TensorInfo* small = (*file)->find_tensor("small.weight");
  ASSERT_NE(small, nullptr);
  EXPECT_EQ(small->offset, big_bytes);
  EXPECT_EQ((*file)->data_offset() + small->offset + small->n_bytes, (*file)->file_size());
}

// A header far longer than a metadata-only open's first read (a big vocabulary)
// is read whole by growing the read, and agrees with the mapped open.
TEST(GgufWriterTest, LongHeaderOpensTheSameInBothModes) {
  std::vector<Value> tokens;
  tokens.reserve(60000);
  for (int i = 0; i < 60000; ++i)
    tokens.push_back(Value{"token_" + std::to_string(i)});
  GgufWriter writer;
  writer.set("tokenizer.ggml.tokens", Value{Array{ValueType::kString, std::move(tokens)}});
  ASSERT_TRUE(writer.add_tensor("w", TensorType::kF32, {16}, pattern(9)).ok());
  ScopedTempDir dir;
  ASSERT_TRUE(writer.write(dir.file("vocab.gguf")).ok());

  auto header = GgufFile::open(dir.file("vocab.gguf"), OpenMode::kMetadataOnly);
  ASSERT_TRUE(header.ok()) << header.status().to_string();
  auto mapped = GgufFile::open(dir.file("vocab.gguf"), OpenMode::kMapData);
  ASSERT_TRUE(mapped.ok()) << mapped.status().to_string();
  EXPECT_GT((*header)->data_offset(), 1000000u);
  EXPECT_EQ((*header)->data_offset(), (*mapped)->data_offset());
  const Array* a = (*header)->get_array("tokenizer.ggml.tokens").value();
  ASSERT_EQ(a->items.size(), 60000u);
  EXPECT_EQ(std::get<std::string>(a->items.back().v), "token_59999");
  EXPECT_TRUE(values_equal((*header)->metadata()[0].value, (*mapped)->metadata()[0].value));
  EXPECT_EQ((*header)->tensors()[0].offset, (*mapped)->tensors()[0].offset);
}

TEST(GgufGettersTest, AcceptFittingTypesAndNameTheKeyOtherwise) {
  GgufWriter writer;
  for (const KeyValue& kv : every_value_type())
    writer.set(kv.key, kv.value);
  ScopedTempDir dir;
  ASSERT_TRUE(writer.write(dir.file("g.gguf")).ok());
  auto opened = GgufFile::open(dir.file("g.gguf"), OpenMode::kMetadataOnly);
  ASSERT_TRUE(opened.ok()) << opened.status().to_string();
  const GgufFile& f = **opened;

  EXPECT_EQ(f.get_uint("t.u8").value(), 200u);
  EXPECT_EQ(f.get_uint("t.u16").value(), 60000u);
  EXPECT_EQ(f.get_uint("t.u64").value(), uint64_t{1} << 63);
  EXPECT_EQ(f.get_int("t.u32").value(), 4000000000);
  EXPECT_EQ(f.get_int("t.i8").value(), -100);
  EXPECT_EQ(f.get_int("t.i64").value(), -(int64_t{1} << 62));
  EXPECT_EQ(f.get_float("t.f32").value(), 1.5);
  EXPECT_EQ(f.get_float("t.f64").value(), -2.25);
  EXPECT_EQ(f.get_float("t.i32").value(), -3.0);
  EXPECT_EQ(f.get_bool("t.bool").value(), true);
  EXPECT_EQ(f.get_string("t.empty_string").value(), "");
  EXPECT_EQ(f.get_array("t.nested").value()->items.size(), 4u);

  struct Case {
    Status status;
    StatusCode code;
    const char* phrase;
  };
  const Case cases[] = {
      {f.get_uint("t.i32").status(), StatusCode::kInvalidFormat,
       "metadata 't.i32' is int32 -3, expected an unsigned integer"},
      {f.get_int("t.u64").status(), StatusCode::kInvalidFormat, "uint64 9223372036854775808"},
      {f.get_uint("t.f32").status(), StatusCode::kInvalidFormat, "is float32 1.5"},
      {f.get_uint("t.bool").status(), StatusCode::kInvalidFormat, "is bool true"},
      {f.get_float("t.string").status(), StatusCode::kInvalidFormat, "string 'llama'"},
      {f.get_bool("t.u8").status(), StatusCode::kInvalidFormat, "expected a bool"},
      {f.get_string("t.array_str").status(), StatusCode::kInvalidFormat, "array of 3 string"},
      {f.get_array("t.string").status(), StatusCode::kInvalidFormat, "expected an array"},
      {f.get_uint("llama.block_count").status(), StatusCode::kNotFound, "'llama.block_count'"},
      {f.get_string("missing").status(), StatusCode::kNotFound, "'missing'"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(c.status.code(), c.code) << c.status.to_string();
    EXPECT_NE(c.status.message().find(c.phrase), std::string::npos)
        << c.status.message() << " lacks: " << c.phrase;
  }
  EXPECT_EQ(f.find("missing"), nullptr);
}

} // namespace
} // namespace pshard::gguf
