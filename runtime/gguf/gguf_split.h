// Split GGUF models, as llama.cpp's gguf-split writes them: one model in several
// complete GGUF files named
//
//   PREFIX-00001-of-00003.gguf   the model's metadata + split keys + its tensors
//   PREFIX-00002-of-00003.gguf   split keys only          + its tensors
//   PREFIX-00003-of-00003.gguf   split keys only          + its tensors
//
// Split keys, in every shard:
//   split.no             u16  this file's index, 0-based (the name counts from 1)
//   split.count          u16  the number of files
//   split.tensors.count  i32  the model's tensors over all files
//
// GgufFile::open() on the first shard finds the others by these names and checks them
// (gguf_file.h); GgufWriter::write() with WriteOptions::split_max_tensors writes them.
//
//   split_shard_path("model", 1, 3)              == "model-00002-of-00003.gguf"
//   parse_split_name("dir/model-00002-of-00003.gguf") -> {"dir/model", 1, 3}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace pshard::gguf {

inline constexpr const char* kSplitNoKey = "split.no";
inline constexpr const char* kSplitCountKey = "split.count";
inline constexpr const char* kSplitTensorsCountKey = "split.tensors.count";
inline constexpr uint32_t kMaxSplitCount = 65535; // split.count is a u16

// The name of shard `index` (0-based) of `count` files.
std::string split_shard_path(std::string_view prefix, uint32_t index, uint32_t count);

// What a file's name says about its place in a split; nullopt unless the name is exactly
// what split_shard_path() makes (PREFIX-NNNNN-of-MMMMM.gguf, 1 <= NNNNN <= MMMMM).
struct SplitName {
  std::string prefix;
  uint32_t index = 0; // 0-based
  uint32_t count = 0;
};
std::optional<SplitName> parse_split_name(std::string_view path);

// The prefix the shards of a model written to `path` get: "out.gguf" -> "out".
std::string split_prefix_of(std::string_view path);

bool is_split_key(std::string_view key);

} // namespace pshard::gguf
