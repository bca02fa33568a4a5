// Malformed GGUF files: a valid file from the writer, mutated one field at a
// time, must fail with the right code and a message naming the field; every
// truncation must fail cleanly.
#include "gguf_test_util.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_writer.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <string_view>

namespace pshard::gguf {
namespace {

using Image = std::vector<uint8_t>;

// The base file: a.weight (F32 8x2, 64 bytes at 0), b.weight (Q8_0 32x2, 68 bytes at 64).
Image base_image() {
  GgufWriter w;
  w.set("general.architecture", Value{std::string("llama")});
  w.set("general.alignment", Value{uint32_t{32}});
  w.set("test.k1", Value{uint8_t{1}});
  w.set("test.k2", Value{uint8_t{2}});
  w.set("test.flag", Value{true});
  w.set("test.array", Value{Array{ValueType::kUint32,
                                  {Value{uint32_t{1}}, Value{uint32_t{2}}, Value{uint32_t{3}}}}});
  auto fill = [](std::span<uint8_t> out) {
    std::fill(out.begin(), out.end(), uint8_t{0x5a});
    return Status::ok_status();
  };
  EXPECT_TRUE(w.add_tensor("a.weight", TensorType::kF32, {8, 2}, fill).ok());
  EXPECT_TRUE(w.add_tensor("b.weight", TensorType::kQ8_0, {32, 2}, fill).ok());
  testing::ScopedTempDir dir;
  EXPECT_TRUE(w.write(dir.file("base.gguf")).ok());
  return testing::read_file(dir.file("base.gguf"));
}

// Offset just past the first occurrence of `text`.
size_t after(const Image& img, std::string_view text) {
  auto it = std::search(img.begin(), img.end(), text.begin(), text.end());
  EXPECT_NE(it, img.end()) << text;
  return static_cast<size_t>(it - img.begin()) + text.size();
}

template <typename T> void put(Image& img, size_t at, T value) {
  ASSERT_LE(at + sizeof(T), img.size());
  std::memcpy(img.data() + at, &value, sizeof(T));
}

// Tensor info fields, relative to the end of the tensor's name.
constexpr size_t kNDims = 0, kDim0 = 4, kDim1 = 12, kType = 20, kOffset = 24;

struct Case {
  const char* name;
  std::function<void(Image&)> mutate;
  StatusCode code;
  std::vector<const char*> phrases;
};

const uint64_t kHuge = uint64_t{1} << 62;
const uint64_t kAllOnes = ~uint64_t{0};

std::vector<Case> cases() {
  auto tensor_field = [](const char* tensor, size_t field, auto value) {
    return [=](Image& img) { put(img, after(img, tensor) + field, value); };
  };
  const auto kFmt = StatusCode::kInvalidFormat;
  const auto kUns = StatusCode::kUnsupported;
  return {
      {"bad magic", [](Image& img) { img[0] = 'X'; }, kFmt, {"not a GGUF file", "'XGUF'"}},
      {"version 1", [](Image& img) { put<uint32_t>(img, 4, 1); }, kUns, {"version 1", "2 and 3"}},
      {"version 4", [](Image& img) { put<uint32_t>(img, 4, 4); }, kUns, {"version 4", "2 and 3"}},
      {"big-endian", [](Image& img) { put<uint32_t>(img, 4, 0x03000000); }, kUns, {"big-endian"}},
      {"huge tensor count", [](Image& img) { put(img, 8, kHuge); }, kFmt, {"tensor_count"}},
      {"large tensor count",
       [](Image& img) { put(img, 8, uint64_t{1} << 40); },
       kFmt,
       {"tensor_count 1099511627776 (at byte 8) needs 35184372088832 bytes",
        "past the end of the file"}},
      {"huge kv count", [](Image& img) { put(img, 16, kHuge); }, kFmt, {"metadata_kv_count"}},
      {"overflowing kv count",
       [](Image& img) { put(img, 16, kAllOnes); },
       kFmt,
       {"metadata_kv_count", "impossibly large"}},
      {"huge string length",
       [](Image& img) { put(img, after(img, "llama") - 5 - 8, kHuge); },
       kFmt,
       {"metadata 'general.architecture'", "string of length 4611686018427387904",
        "past the end of the file"}},
      {"all-ones string length",
       [](Image& img) { put(img, after(img, "llama") - 5 - 8, kAllOnes); },
       kFmt,
       {"'general.architecture'", "past the end of the file"}},
      {"huge key length",
       [](Image& img) { put(img, 24, kHuge); },
       kFmt,
       {"metadata key #0 (at byte 24)", "key of length"}},
      {"huge array count",
       [](Image& img) { put(img, after(img, "test.array") + 8, kHuge); },
       kFmt,
       {"metadata 'test.array'", "array element count"}},
      {"overflowing array count",
       [](Image& img) { put(img, after(img, "test.array") + 8, kAllOnes); },
       kFmt,
       {"'test.array'", "impossibly large"}},
      {"bad value type",
       [](Image& img) { put<uint32_t>(img, after(img, "test.k1"), 13); },
       kFmt,
       {"metadata 'test.k1'", "unknown value type 13"}},
      {"bad array element type",
       [](Image& img) { put<uint32_t>(img, after(img, "test.array") + 4, 99); },
       kFmt,
       {"'test.array'", "unknown element type 99"}},
      {"bool not 0 or 1",
       [](Image& img) { img[after(img, "test.flag") + 4] = 7; },
       kFmt,
       {"'test.flag'", "is 7, expected 0 or 1"}},
      {"duplicate key",
       [](Image& img) { img[after(img, "test.k2") - 1] = '1'; },
       kFmt,
       {"metadata 'test.k1'", "duplicate key"}},
      {"alignment not a power of two",
       [](Image& img) { put<uint32_t>(img, after(img, "general.alignment") + 4, 48); },
       kFmt,
       {"'general.alignment'", "uint32 48", "power of two"}},
      {"alignment zero",
       [](Image& img) { put<uint32_t>(img, after(img, "general.alignment") + 4, 0); },
       kFmt,
       {"'general.alignment'", "power of two"}},
      {"alignment not uint32",
       [](Image& img) { put<uint32_t>(img, after(img, "general.alignment"), 5); },
       kFmt,
       {"'general.alignment' is int32 32", "expected a uint32"}},
      {"n_dims 0",
       tensor_field("a.weight", kNDims, uint32_t{0}),
       kFmt,
       {"tensor 'a.weight' (info at byte", "n_dims is 0"}},
      {"n_dims 5",
       tensor_field("a.weight", kNDims, uint32_t{5}),
       kFmt,
       {"tensor 'a.weight'", "n_dims is 5, expected 1 to 4"}},
      {"dim 0", tensor_field("a.weight", kDim1, uint64_t{0}), kFmt, {"'a.weight'", "dims[1] is 0"}},
      {"dim negative",
       tensor_field("a.weight", kDim0, uint64_t{1} << 63),
       kFmt,
       {"'a.weight'", "dims[0] is 9223372036854775808"}},
      {"dims product overflow",
       [](Image& img) {
         put(img, after(img, "a.weight") + kDim0, uint64_t{1} << 32);
         put(img, after(img, "a.weight") + kDim1, uint64_t{1} << 32);
       },
       kFmt,
       {"'a.weight'", "dims[1]", "overflow"}},
      {"unsupported type iq2_xxs",
       tensor_field("a.weight", kType, uint32_t{16}),
       kUns,
       {"tensor 'a.weight'",
        "has type iq2_xxs, which pshard does not support; supported: f32, f16, q4_0, q4_1",
        "q4_k", "iq4_xs, bf16"}},
      {"unknown type id",
       tensor_field("a.weight", kType, uint32_t{1000}),
       kFmt,
       {"'a.weight'", "type id 1000", "not a ggml type"}},
      {"row not whole blocks",
       tensor_field("b.weight", kDim0, uint64_t{16}),
       kFmt,
       {"'b.weight'", "row length (dims[0]) 16 is not a multiple of q8_0's block of 32"}},
      {"row not whole K-quant super-blocks",
       tensor_field("b.weight", kType, uint32_t{12}),
       kFmt,
       {"'b.weight'", "is not a multiple of q4_k's block of 256"}},
      {"misaligned offset",
       tensor_field("b.weight", kOffset, uint64_t{65}),
       kFmt,
       {"'b.weight'", "data offset 65 is not a multiple of the alignment 32"}},
      {"overlapping tensors",
       tensor_field("b.weight", kOffset, uint64_t{32}),
       kFmt,
       {"tensor 'b.weight'", "overlaps tensor 'a.weight'"}},
      {"tensor past the end",
       tensor_field("b.weight", kOffset, uint64_t{1} << 20),
       kFmt,
       {"tensor 'b.weight' (info at byte", "data offset 1048576", "+ 68 bytes",
        "runs past the end of the file"}},
      {"tensor offset overflow",
       tensor_field("b.weight", kOffset, kAllOnes - 31),
       kFmt,
       {"'b.weight'", "runs past the end of the file"}},
      {"duplicate tensor name",
       [](Image& img) { img[after(img, "b.weight") - 8] = 'a'; },
       kFmt,
       {"tensor 'a.weight'", "duplicate tensor name"}},
  };
}

void expect_failure(const Status& status, const Case& c) {
  EXPECT_EQ(status.code(), c.code) << c.name << ": " << status.to_string();
  for (const char* phrase : c.phrases)
    EXPECT_NE(status.message().find(phrase), std::string::npos)
        << c.name << ": '" << status.message() << "' lacks '" << phrase << "'";
}

TEST(GgufMalformedTest, BaseImageIsValid) {
  const Image img = base_image();
  auto file = GgufFile::parse(img);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ((*file)->tensors().size(), 2u);
  EXPECT_EQ((*file)->find_tensor("b.weight")->offset, 64u);
  EXPECT_EQ((*file)->find_tensor("b.weight")->n_bytes, 68u);
}

TEST(GgufMalformedTest, EachMutationFailsNamingTheField) {
  const Image base = base_image();
  for (const Case& c : cases()) {
    Image img = base;
    c.mutate(img);
    auto parsed = GgufFile::parse(img);
    ASSERT_FALSE(parsed.ok()) << c.name;
    expect_failure(parsed.status(), c);
  }
}

// The same mutations through real files, both open modes.
TEST(GgufMalformedTest, FilesFailTheSameWayInBothOpenModes) {
  const Image base = base_image();
  testing::ScopedTempDir dir;
  for (const Case& c : cases()) {
    Image img = base;
    c.mutate(img);
    const std::string path = dir.file("bad.gguf");
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(img.data()), static_cast<std::streamsize>(img.size()));
    for (OpenMode mode : {OpenMode::kMetadataOnly, OpenMode::kMapData}) {
      auto opened = GgufFile::open(path, mode);
      ASSERT_FALSE(opened.ok()) << c.name;
      expect_failure(opened.status(), c);
      EXPECT_NE(opened.status().message().find(path), std::string::npos);
    }
  }
}

TEST(GgufMalformedTest, EveryTruncationFailsCleanly) {
  const Image img = base_image();
  auto whole = GgufFile::parse(img);
  ASSERT_TRUE(whole.ok());
  const TensorInfo* last = (*whole)->find_tensor("b.weight");
  const size_t data_end = (*whole)->data_offset() + last->offset + last->n_bytes;
  for (size_t n = 0; n < data_end; ++n) {
    auto parsed = GgufFile::parse(std::span<const uint8_t>(img.data(), n));
    ASSERT_FALSE(parsed.ok()) << "prefix of " << n << " bytes parsed";
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidFormat)
        << n << ": " << parsed.status().to_string();
  }
  // Only the padding after the last tensor may be cut.
  EXPECT_TRUE(GgufFile::parse(std::span<const uint8_t>(img.data(), data_end)).ok());
}

TEST(GgufMalformedTest, EmptyAndMissingFiles) {
  testing::ScopedTempDir dir;
  std::ofstream(dir.file("empty.gguf")).flush();
  auto empty = GgufFile::open(dir.file("empty.gguf"));
  EXPECT_EQ(empty.status().code(), StatusCode::kInvalidFormat);
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
  auto missing = GgufFile::open(dir.file("missing.gguf"), OpenMode::kMetadataOnly);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("missing.gguf"), std::string::npos);
  auto directory = GgufFile::open(dir.path());
  EXPECT_EQ(directory.status().code(), StatusCode::kInvalidArgument);
}

// Arrays nested 8 deep are fine; 9 deep are refused (built by hand: the writer refuses them).
TEST(GgufMalformedTest, ArrayNestingDepthIsLimited) {
  auto image_with_depth = [](int depth) {
    Image img;
    auto put_raw = [&img](const void* p, size_t n) {
      img.insert(img.end(), static_cast<const uint8_t*>(p), static_cast<const uint8_t*>(p) + n);
    };
    auto u32 = [&](uint32_t v) { put_raw(&v, 4); };
    auto u64 = [&](uint64_t v) { put_raw(&v, 8); };
    put_raw("GGUF", 4);
    u32(3);
    u64(0);
    u64(1);
    u64(4);
    put_raw("deep", 4);
    u32(9); // array
    for (int level = 1; level < depth; ++level) {
      u32(9);
      u64(1);
    }
    u32(0); // innermost: an empty uint8 array
    u64(0);
    return img;
  };
  EXPECT_TRUE(GgufFile::parse(image_with_depth(8)).ok());
  auto deep = GgufFile::parse(image_with_depth(9));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.status().code(), StatusCode::kInvalidFormat);
  EXPECT_NE(deep.status().message().find("'deep'"), std::string::npos);
  EXPECT_NE(deep.status().message().find("nested deeper than 8"), std::string::npos)
      << deep.status().message();
}

// Each value costs far more memory than its bytes, so their number is capped
// (2^24; real vocabularies hold ~1.5 million) before anything is allocated.
TEST(GgufMalformedTest, TooManyMetadataValuesAreRefused) {
  const uint64_t count = (uint64_t{1} << 24) + 1;
  Image img = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  img.resize(24 + 8 + 3 + 4 + 4 + 8 + count, 0);
  put<uint64_t>(img, 16, 1); // one key
  put<uint64_t>(img, 24, 3);
  std::memcpy(img.data() + 32, "big", 3);
  put<uint32_t>(img, 35, 9); // array
  put<uint32_t>(img, 39, 0); // of uint8
  put<uint64_t>(img, 43, count);
  auto parsed = GgufFile::parse(img);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(parsed.status().message().find("'big'"), std::string::npos);
  EXPECT_NE(parsed.status().message().find("limit of 16777216"), std::string::npos)
      << parsed.status().message();
}

// A file without tensors may end right after its metadata (vocabulary files do).
TEST(GgufMalformedTest, FileWithoutTensorsNeedsNoPadding) {
  Image img = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  img.resize(24, 0);
  auto file = GgufFile::parse(img);
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ((*file)->data_offset(), 32u);
  EXPECT_EQ((*file)->version(), 3u);
  img[4] = 2;
  EXPECT_TRUE(GgufFile::parse(img).ok());
}

} // namespace
} // namespace pshard::gguf
