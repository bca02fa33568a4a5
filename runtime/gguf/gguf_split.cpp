// Split models: shard names, and opening a split model's other shards once its first
// shard is open (the layout is drawn in gguf_split.h). Every mistake a user can make
// with the files — a shard missing, renamed, from another split, one given that is not
// the first — gets a message naming the file and what would fix it.
#include "runtime/gguf/gguf_split.h"

#include "runtime/gguf/gguf_file.h"
#include "runtime/gguf/gguf_internal.h"

#include <cstdio>
#include <type_traits>

namespace pshard::gguf {
namespace {

constexpr std::string_view kExtension = ".gguf";

bool all_digits(std::string_view s) {
  if (s.empty())
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  return true;
}

// The split keys of one shard; count 0 when the file has none (an unsplit model).
struct SplitKeys {
  uint64_t no = 0;
  uint64_t count = 0;
  uint64_t tensors_count = 0;
};

const Value* find_key(const GgufShard& shard, std::string_view key) {
  for (const KeyValue& kv : shard.metadata)
    if (kv.key == key)
      return &kv.value;
  return nullptr;
}

// A non-negative integer key of any integer type (gguf-split writes u16 and i32).
Result<std::optional<uint64_t>> number_key(const GgufShard& shard, const char* key, uint64_t max) {
  const Value* value = find_key(shard, key);
  if (value == nullptr)
    return std::optional<uint64_t>();
  std::optional<uint64_t> out;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if (v >= 0 && static_cast<uint64_t>(v) <= max)
            out = static_cast<uint64_t>(v);
        }
      },
      value->v);
  if (!out)
    return invalid_format("'" + shard.path + "': metadata '" + key + "' is " +
                          detail::describe_value(*value) + ", expected an integer from 0 to " +
                          std::to_string(max) + " as gguf-split writes it");
  return out;
}

Result<SplitKeys> split_keys(const GgufShard& shard) {
  PSHARD_ASSIGN_OR_RETURN(auto count, number_key(shard, kSplitCountKey, kMaxSplitCount));
  PSHARD_ASSIGN_OR_RETURN(auto no, number_key(shard, kSplitNoKey, kMaxSplitCount));
  PSHARD_ASSIGN_OR_RETURN(auto tensors, number_key(shard, kSplitTensorsCountKey, INT32_MAX));
  SplitKeys keys;
  keys.count = count.value_or(0);
  keys.no = no.value_or(0);
  keys.tensors_count = tensors.value_or(0);
  if (keys.count > 1 && (!no || !tensors))
    return invalid_format("'" + shard.path + "' has " + kSplitCountKey + " = " +
                          std::to_string(keys.count) + " but no " +
                          (!no ? kSplitNoKey : kSplitTensorsCountKey) +
                          ": not a shard gguf-split wrote; re-split the model");
  if (keys.count > 0 && keys.no >= keys.count)
    return invalid_format("'" + shard.path + "' has " + kSplitNoKey + " = " +
                          std::to_string(keys.no) + ", not below its " + kSplitCountKey + " = " +
                          std::to_string(keys.count) + "; re-split the model");
  return keys;
}

std::string ordinal(uint64_t index, uint64_t count) {
  return "shard " + std::to_string(index + 1) + " of " + std::to_string(count);
}

// A later shard's split keys against the first's; `k` is the index its name gives it.
Status check_sibling(const SplitKeys& first, const SplitKeys& sk, uint32_t k,
                     const std::string& sibling, const std::string& first_path) {
  const std::string mismatch = "'" + sibling + "' does not belong with '" + first_path + "': ";
  const std::string fix = "; replace it with " + ordinal(k, first.count) + " of the same split";
  if (sk.count != first.count)
    return invalid_format(mismatch + "it is from a split in " + std::to_string(sk.count) +
                          " files (" + kSplitCountKey + "), not " + std::to_string(first.count) +
                          fix);
  if (sk.no != k)
    return invalid_format(mismatch + "its header says it is " + ordinal(sk.no, sk.count) + " (" +
                          kSplitNoKey + " = " + std::to_string(sk.no) + "), its name " +
                          ordinal(k, first.count) + fix);
  if (sk.tensors_count != first.tensors_count)
    return invalid_format(mismatch + "it is from a model of " + std::to_string(sk.tensors_count) +
                          " tensors (" + kSplitTensorsCountKey + "), not " +
                          std::to_string(first.tensors_count) + fix);
  return Status::ok_status();
}

} // namespace

std::string split_shard_path(std::string_view prefix, uint32_t index, uint32_t count) {
  char tail[40];
  std::snprintf(tail, sizeof tail, "-%05u-of-%05u.gguf", index + 1, count);
  return std::string(prefix) + tail;
}

std::optional<SplitName> parse_split_name(std::string_view path) {
  if (path.size() < kExtension.size() || path.substr(path.size() - kExtension.size()) != kExtension)
    return std::nullopt;
  const std::string_view stem = path.substr(0, path.size() - kExtension.size());
  const size_t of = stem.rfind("-of-");
  if (of == std::string_view::npos)
    return std::nullopt;
  const size_t dash = stem.rfind('-', of == 0 ? 0 : of - 1);
  if (dash == std::string_view::npos || dash >= of)
    return std::nullopt;
  const std::string_view number = stem.substr(dash + 1, of - dash - 1);
  const std::string_view count = stem.substr(of + 4);
  if (!all_digits(number) || !all_digits(count) || number.size() > 9 || count.size() > 9)
    return std::nullopt;
  const auto n = static_cast<uint32_t>(std::stoul(std::string(number)));
  const auto c = static_cast<uint32_t>(std::stoul(std::string(count)));
  if (n < 1 || n > c || c > kMaxSplitCount)
    return std::nullopt;
  SplitName name{std::string(stem.substr(0, dash)), n - 1, c};
  if (split_shard_path(name.prefix, name.index, name.count) != path)
    return std::nullopt; // not the canonical spelling (e.g. "-1-of-3")
  return name;
}

std::string split_prefix_of(std::string_view path) {
  if (path.size() > kExtension.size() && path.substr(path.size() - kExtension.size()) == kExtension)
    path.remove_suffix(kExtension.size());
  return std::string(path);
}

bool is_split_key(std::string_view key) { return key.rfind("split.", 0) == 0; }

Status GgufFile::add_sibling_shards(OpenMode mode) {
  PSHARD_ASSIGN_OR_RETURN(const SplitKeys keys, split_keys(shards_.front()));
  if (keys.count <= 1)
    return Status::ok_status(); // unsplit (a lone "-00001-of-00001" file is whole too)
  const std::string path = shards_.front().path; // a copy: shards_ grows below
  const std::string count = std::to_string(keys.count);
  const std::optional<SplitName> name = parse_split_name(path);
  if (keys.no != 0) {
    const std::string first_path =
        name ? "'" + split_shard_path(name->prefix, 0, name->count) + "'" : "its first shard";
    return invalid_argument("'" + path + "' is " + ordinal(keys.no, keys.count) +
                            " of a split model (" + kSplitNoKey + " = " + std::to_string(keys.no) +
                            "); open " + first_path + " instead");
  }
  if (!name)
    return invalid_argument("'" + path + "' is the first shard of a model split in " + count +
                            " files (" + kSplitCountKey + "), but its name does not end in " +
                            split_shard_path("", 0, static_cast<uint32_t>(keys.count)) +
                            ", so its other shards cannot be found; give the files the names "
                            "gguf-split gave them");
  if (name->count != keys.count || name->index != 0)
    return invalid_argument("'" + path + "' is named as " + ordinal(name->index, name->count) +
                            " but its header says shard 1 of " + count + " (" + kSplitNoKey + ", " +
                            kSplitCountKey +
                            "); it belongs to another split of the model: "
                            "use the files of one split, named as gguf-split named them");
  for (uint32_t k = 1; k < keys.count; ++k) {
    const std::string sibling = split_shard_path(name->prefix, k, name->count);
    Status opened = add_shard_file(sibling, mode);
    if (opened.code() == StatusCode::kNotFound)
      return not_found("'" + path + "' is the first of " + count + " shards (" + kSplitCountKey +
                       "), but " + ordinal(k, keys.count) + ", '" + sibling +
                       "', is missing; put all " + count + " files side by side");
    PSHARD_RETURN_IF_ERROR(
        opened.with_context(ordinal(k, keys.count) + " of the model '" + path + "'"));
    PSHARD_ASSIGN_OR_RETURN(const SplitKeys sk, split_keys(shards_.back()));
    PSHARD_RETURN_IF_ERROR(check_sibling(keys, sk, k, sibling, path));
  }
  if (tensors_.size() != keys.tensors_count)
    return invalid_format("the " + count + " shards of '" + path + "' hold " +
                          std::to_string(tensors_.size()) + " tensors, but " +
                          kSplitTensorsCountKey + " says " + std::to_string(keys.tensors_count) +
                          ": a shard is from another split or model; re-split the model");
  return Status::ok_status();
}

} // namespace pshard::gguf
