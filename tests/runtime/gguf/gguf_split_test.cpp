// Split models (llama.cpp's gguf-split layout): shard names, writing shards, opening a
// split model as one in every mode, and a clear error for every way the files can be
// wrong (table-driven).
#include "gguf_test_util.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_split.h"
#include "runtime/gguf/gguf_writer.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>

namespace pshard::gguf {
namespace {

namespace fs = std::filesystem;
using testing::ScopedTempDir;
using testing::values_equal;

constexpr int kTensors = 7;

// A model of kTensors small tensors (each filled with its own byte pattern) and a few
// metadata keys; `tag` changes a value so two models differ.
GgufWriter model_writer(const std::string& tag = "a", int n_tensors = kTensors) {
  GgufWriter w;
  w.set("general.architecture", Value{std::string("llama")});
  w.set("general.name", Value{"split-test-" + tag});
  w.set("test.array", Value{Array{ValueType::kInt32, {Value{int32_t{1}}, Value{int32_t{2}}}}});
  for (int i = 0; i < n_tensors; ++i) {
    const auto seed = static_cast<uint8_t>(i * 31 + tag[0]);
    EXPECT_TRUE(w.add_tensor("t" + std::to_string(i) + ".weight", TensorType::kF32, {8, i + 1},
                             [seed](std::span<uint8_t> out) {
                               for (size_t k = 0; k < out.size(); ++k)
                                 out[k] = static_cast<uint8_t>(seed + k);
                               return Status::ok_status();
                             })
                    .ok());
  }
  return w;
}

// Writes the model split at most `per_file` tensors a file; returns the shard paths.
std::vector<std::string> write_split(const GgufWriter& w, const std::string& path,
                                     uint32_t per_file) {
  GgufWriter::WriteOptions o;
  o.split_max_tensors = per_file;
  const Status s = w.write(path, o);
  EXPECT_TRUE(s.ok()) << s.to_string();
  return w.output_paths(path, o);
}

const Value* key_of(const GgufShard& shard, const std::string& key) {
  for (const KeyValue& kv : shard.metadata)
    if (kv.key == key)
      return &kv.value;
  return nullptr;
}

TEST(GgufSplitNames, FollowGgufSplit) {
  EXPECT_EQ(split_shard_path("dir/model", 0, 3), "dir/model-00001-of-00003.gguf");
  EXPECT_EQ(split_shard_path("m", 11, 12), "m-00012-of-00012.gguf");
  const auto name = parse_split_name("dir/my-model-00002-of-00003.gguf");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->prefix, "dir/my-model");
  EXPECT_EQ(name->index, 1u);
  EXPECT_EQ(name->count, 3u);
  for (const char* bad :
       {"model.gguf", "m-00004-of-00003.gguf", "m-00000-of-00003.gguf", "m-1-of-3.gguf",
        "m-00001-of-00003.bin", "m-0000x-of-00003.gguf", "-of-00003.gguf"})
    EXPECT_FALSE(parse_split_name(bad).has_value()) << bad;
  EXPECT_EQ(split_prefix_of("out/model.gguf"), "out/model");
  EXPECT_EQ(split_prefix_of("out/model"), "out/model");
}

TEST(GgufSplitWrite, WritesShardsAsGgufSplitDoes) {
  ScopedTempDir dir;
  const auto paths = write_split(model_writer(), dir.file("m.gguf"), 3);
  ASSERT_EQ(paths.size(), 3u);
  EXPECT_EQ(paths[2], dir.file("m-00003-of-00003.gguf"));
  EXPECT_EQ(dir.entries().size(), 3u) << "no temporary files are left";
  for (size_t k = 0; k < paths.size(); ++k) {
    // Each shard is a complete GGUF file of its own.
    std::vector<uint8_t> bytes = testing::read_file(paths[k]);
    auto shard = GgufFile::parse(bytes);
    ASSERT_TRUE(shard.ok()) << shard.status().to_string();
    const GgufShard& s = (*shard)->shards()[0];
    EXPECT_EQ((*shard)->tensors().size(), k < 2 ? 3u : 1u);
    EXPECT_TRUE(values_equal(*key_of(s, kSplitNoKey), Value{static_cast<uint16_t>(k)}));
    EXPECT_TRUE(values_equal(*key_of(s, kSplitCountKey), Value{uint16_t{3}}));
    EXPECT_TRUE(values_equal(*key_of(s, kSplitTensorsCountKey), Value{int32_t{kTensors}}));
    // The model's metadata is in the first shard only.
    EXPECT_EQ(key_of(s, "general.name") != nullptr, k == 0);
    EXPECT_EQ(s.metadata.size(), k == 0 ? 6u : 3u);
  }
}

TEST(GgufSplitWrite, AFailedShardLeavesNoFileBehind) {
  ScopedTempDir dir;
  GgufWriter w = model_writer();
  ASSERT_TRUE(w.add_tensor("late.weight", TensorType::kF32, {4}, [](std::span<uint8_t>) {
                 return io_error("the source went away");
               }).ok());
  GgufWriter::WriteOptions o;
  o.split_max_tensors = 3;
  const Status s = w.write(dir.file("m.gguf"), o);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("late.weight"), std::string::npos) << s.to_string();
  EXPECT_TRUE(dir.entries().empty()) << "the earlier, complete shards are not published either";
}

void expect_same_model(const GgufFile& split, const GgufFile& whole) {
  ASSERT_EQ(split.tensors().size(), whole.tensors().size());
  for (const TensorInfo& w : whole.tensors()) {
    const TensorInfo* s = split.find_tensor(w.name);
    ASSERT_NE(s, nullptr) << w.name;
    EXPECT_EQ(s->dims, w.dims);
    EXPECT_EQ(s->type, w.type);
    EXPECT_EQ(s->n_bytes, w.n_bytes);
    if (split.has_data()) {
      EXPECT_EQ(std::memcmp(split.tensor_data(*s), whole.tensor_data(w), w.n_bytes), 0) << w.name;
      const GgufShard& shard = split.shards()[s->shard];
      EXPECT_EQ(split.tensor_data(*s), shard.bytes.data() + split.tensor_file_offset(*s));
    } else {
      EXPECT_EQ(split.tensor_data(*s), nullptr);
    }
  }
  for (const KeyValue& kv : whole.metadata()) {
    if (is_split_key(kv.key))
      continue; // a split's own, not the model's
    const Value* v = split.find(kv.key);
    ASSERT_NE(v, nullptr) << kv.key;
    EXPECT_TRUE(values_equal(*v, kv.value)) << kv.key;
  }
}

TEST(GgufSplitOpen, TheFirstShardOpensTheWholeModelInEveryMode) {
  ScopedTempDir dir;
  const GgufWriter w = model_writer();
  ASSERT_TRUE(w.write(dir.file("whole.gguf")).ok());
  const auto paths = write_split(w, dir.file("m.gguf"), 3);
  auto whole = GgufFile::open(dir.file("whole.gguf"));
  ASSERT_TRUE(whole.ok());
  for (OpenMode mode : {OpenMode::kMetadataOnly, OpenMode::kMapData, OpenMode::kReadData}) {
    SCOPED_TRACE(static_cast<int>(mode));
    auto split = GgufFile::open(paths[0], mode);
    ASSERT_TRUE(split.ok()) << split.status().to_string();
    const GgufFile& f = **split;
    EXPECT_TRUE(f.is_split());
    ASSERT_EQ(f.shards().size(), 3u);
    EXPECT_EQ(f.path(), paths[0]);
    EXPECT_EQ(f.has_data(), mode != OpenMode::kMetadataOnly);
    uint64_t total = 0;
    for (size_t k = 0; k < 3; ++k) {
      const GgufShard& s = f.shards()[k];
      EXPECT_EQ(s.path, paths[k]);
      EXPECT_EQ(s.file_size, fs::file_size(paths[k]));
      total += s.file_size;
      for (size_t i = s.first_tensor; i < s.first_tensor + s.n_tensors; ++i)
        EXPECT_EQ(f.tensors()[i].shard, k);
    }
    EXPECT_EQ(f.total_file_size(), total);
    EXPECT_EQ(f.find_tensor("t6.weight")->shard, 2u);
    expect_same_model(f, **whole);
  }
}

TEST(GgufSplitOpen, MergingAndResplittingKeepsTheModel) {
  ScopedTempDir dir;
  const auto paths = write_split(model_writer(), dir.file("m.gguf"), 2);
  auto split = GgufFile::open(paths[0]);
  ASSERT_TRUE(split.ok()) << split.status().to_string();
  auto copy = GgufWriter::copy_of(**split);
  ASSERT_TRUE(copy.ok()) << copy.status().to_string();
  ASSERT_TRUE(copy->write(dir.file("merged.gguf")).ok());
  auto merged = GgufFile::open(dir.file("merged.gguf"));
  ASSERT_TRUE(merged.ok()) << merged.status().to_string();
  EXPECT_FALSE((*merged)->is_split());
  EXPECT_EQ((*merged)->find(kSplitCountKey), nullptr) << "split keys are not carried over";
  expect_same_model(**merged, **split);
  // Re-split differently: the same model again.
  const auto three = write_split(*copy, dir.file("r.gguf"), 3);
  auto resplit = GgufFile::open(three[0]);
  ASSERT_TRUE(resplit.ok()) << resplit.status().to_string();
  expect_same_model(**resplit, **merged);
}

TEST(GgufSplitOpen, ALoneShardOfOneIsAWholeModel) {
  ScopedTempDir dir;
  const auto paths = write_split(model_writer(), dir.file("m.gguf"), 100);
  ASSERT_EQ(paths, std::vector<std::string>{dir.file("m-00001-of-00001.gguf")});
  auto f = GgufFile::open(paths[0]);
  ASSERT_TRUE(f.ok()) << f.status().to_string();
  EXPECT_FALSE((*f)->is_split());
  EXPECT_EQ((*f)->tensors().size(), static_cast<size_t>(kTensors));
}

// ---- Every way the files can be wrong ----------------------------------------------

std::string shard(const ScopedTempDir& dir, int k, int n = 3, const char* prefix = "m") {
  return split_shard_path(dir.file(prefix), static_cast<uint32_t>(k), static_cast<uint32_t>(n));
}

// Overwrites the i32 value of `key` in a GGUF file's header in place.
void patch_int32(const std::string& path, const std::string& key, int32_t value) {
  std::vector<uint8_t> bytes = testing::read_file(path);
  const auto at = std::search(bytes.begin(), bytes.end(), key.begin(), key.end());
  ASSERT_NE(at, bytes.end()) << key;
  const size_t value_at = static_cast<size_t>(at - bytes.begin()) + key.size() + 4; // type u32
  std::memcpy(bytes.data() + value_at, &value, sizeof value);
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

struct BadSplit {
  const char* name;
  // Arranges the files in `dir`, where a good split of 3 files m-0000k-of-00003.gguf
  // lies, and returns the path to open.
  std::function<std::string(const ScopedTempDir& dir)> arrange;
  StatusCode code;
  std::vector<std::string> says; // substrings of the message
};

class GgufSplitErrors : public ::testing::TestWithParam<BadSplit> {};

TEST_P(GgufSplitErrors, NameTheFileAndTheFix) {
  const BadSplit& c = GetParam();
  ScopedTempDir dir;
  write_split(model_writer(), dir.file("m.gguf"), 3);
  const std::string path = c.arrange(dir);
  for (OpenMode mode : {OpenMode::kMetadataOnly, OpenMode::kMapData}) {
    auto f = GgufFile::open(path, mode);
    ASSERT_FALSE(f.ok()) << c.name;
    EXPECT_EQ(f.status().code(), c.code) << f.status().to_string();
    for (const std::string& s : c.says)
      EXPECT_NE(f.status().message().find(s), std::string::npos)
          << c.name << ": '" << s << "' not in: " << f.status().to_string();
  }
}

const BadSplit kBadSplits[] = {
    {"missing shard",
     [](const ScopedTempDir& d) {
       fs::remove(shard(d, 1));
       return shard(d, 0);
     },
     StatusCode::kNotFound,
     {"m-00002-of-00003.gguf', is missing", "put all 3 files side by side"}},
    {"not the first shard",
     [](const ScopedTempDir& d) { return shard(d, 2); },
     StatusCode::kInvalidArgument,
     {"m-00003-of-00003.gguf' is shard 3 of 3", "open '", "m-00001-of-00003.gguf' instead"}},
    {"extra: a split in 2 named as one in 3",
     [](const ScopedTempDir& d) {
       write_split(model_writer(), d.file("n.gguf"), 4);
       fs::rename(shard(d, 0, 2, "n"), shard(d, 0, 3, "x"));
       return shard(d, 0, 3, "x");
     },
     StatusCode::kInvalidArgument,
     {"x-00001-of-00003.gguf' is named as shard 1 of 3", "says shard 1 of 2",
      "use the files of one split"}},
    {"a shard of another model",
     [](const ScopedTempDir& d) {
       write_split(model_writer("b", kTensors + 2), d.file("o.gguf"), 3); // 9 tensors, 3 files
       fs::rename(shard(d, 1, 3, "o"), shard(d, 1));
       return shard(d, 0);
     },
     StatusCode::kInvalidFormat,
     {"m-00002-of-00003.gguf' does not belong with", "a model of 9 tensors", "not 7",
      "replace it with shard 2 of 3 of the same split"}},
    {"another split's third shard named as the second",
     [](const ScopedTempDir& d) {
       write_split(model_writer("c"), d.file("o.gguf"), 3); // same count: t0..t6 in 3+3+1
       fs::rename(shard(d, 2, 3, "o"), shard(d, 1));
       return shard(d, 0);
     },
     StatusCode::kInvalidFormat,
     {"its header says it is shard 3 of 3", "its name shard 2 of 3"}},
    {"shards swapped",
     [](const ScopedTempDir& d) {
       fs::rename(shard(d, 1), d.file("tmp"));
       fs::rename(shard(d, 2), shard(d, 1));
       fs::rename(d.file("tmp"), shard(d, 2));
       return shard(d, 0);
     },
     StatusCode::kInvalidFormat,
     {"m-00002-of-00003.gguf' does not belong with", "split.no = 2"}},
    {"first shard renamed",
     [](const ScopedTempDir& d) {
       fs::rename(shard(d, 0), d.file("model.gguf"));
       return d.file("model.gguf");
     },
     StatusCode::kInvalidArgument,
     {"model.gguf' is the first shard of a model split in 3 files",
      "does not end in -00001-of-00003.gguf"}},
    {"tensors missing from the split",
     [](const ScopedTempDir& d) {
       for (int k = 0; k < 3; ++k)
         patch_int32(shard(d, k), kSplitTensorsCountKey, kTensors + 1);
       return shard(d, 0);
     },
     StatusCode::kInvalidFormat,
     {"hold 7 tensors, but split.tensors.count says 8", "re-split the model"}},
    {"the same tensor in two shards",
     [](const ScopedTempDir& d) {
       // Shard 2 of a split of t0..t2 + t6..t9 holds t6, which m's third shard holds too.
       GgufWriter w = model_writer("d", 3);
       for (int i = 6; i < 10; ++i)
         EXPECT_TRUE(
             w.add_tensor("t" + std::to_string(i) + ".weight", TensorType::kF32, {8}, nullptr)
                 .ok());
       write_split(w, d.file("o.gguf"), 3);
       fs::rename(shard(d, 1, 3, "o"), shard(d, 1));
       return shard(d, 0);
     },
     StatusCode::kInvalidFormat,
     {"tensor 't6.weight' is in both", "m-00002-of-00003.gguf", "m-00003-of-00003.gguf"}},
};

INSTANTIATE_TEST_SUITE_P(Cases, GgufSplitErrors, ::testing::ValuesIn(kBadSplits),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (char& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           return n;
                         });

} // namespace
} // namespace pshard::gguf
