// Writes the seed corpus for gguf_fuzz: small valid files covering every value
// type and tensor type, plus the headers (first 64 KiB) of the shared real files.
// Generated at test time so the repository holds no binary files.
#include "runtime/gguf/gguf_writer.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

namespace {

namespace fs = std::filesystem;
using namespace pshard;
using namespace pshard::gguf;

Value str(const char* s) { return Value{std::string(s)}; }

Status fill_ramp(std::span<uint8_t> out) {
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<uint8_t>(i);
  return Status::ok_status();
}

Status write_small_models(const std::string& dir) {
  GgufWriter all;
  all.set("general.architecture", str("llama"));
  all.set("general.alignment", Value{uint32_t{32}});
  all.set("u8", Value{uint8_t{1}});
  all.set("i8", Value{int8_t{-1}});
  all.set("u16", Value{uint16_t{2}});
  all.set("i16", Value{int16_t{-2}});
  all.set("u32", Value{uint32_t{3}});
  all.set("i32", Value{int32_t{-3}});
  all.set("f32", Value{0.5f});
  all.set("bool", Value{true});
  all.set("u64", Value{uint64_t{4}});
  all.set("i64", Value{int64_t{-4}});
  all.set("f64", Value{0.25});
  all.set("strings", Value{Array{ValueType::kString, {str("a"), str("bc")}}});
  all.set("nested", Value{Array{ValueType::kArray,
                                {Value{Array{ValueType::kInt32, {Value{int32_t{7}}}}},
                                 Value{Array{ValueType::kBool, {}}}}}});
  PSHARD_RETURN_IF_ERROR(all.add_tensor("f32", TensorType::kF32, {4, 2}, fill_ramp));
  PSHARD_RETURN_IF_ERROR(all.add_tensor("f16", TensorType::kF16, {4}, fill_ramp));
  PSHARD_RETURN_IF_ERROR(all.add_tensor("bf16", TensorType::kBF16, {2, 1, 2}, fill_ramp));
  PSHARD_RETURN_IF_ERROR(all.add_tensor("q8_0", TensorType::kQ8_0, {32}, fill_ramp));
  PSHARD_RETURN_IF_ERROR(all.add_tensor("q4_0", TensorType::kQ4_0, {32, 1, 1, 2}, fill_ramp));
  PSHARD_RETURN_IF_ERROR(all.write(dir + "/all_types.gguf"));

  GgufWriter empty;
  PSHARD_RETURN_IF_ERROR(empty.write(dir + "/empty.gguf"));

  GgufWriter aligned;
  aligned.set("general.alignment", Value{uint32_t{64}});
  PSHARD_RETURN_IF_ERROR(aligned.add_tensor("a", TensorType::kF32, {3}, fill_ramp));
  PSHARD_RETURN_IF_ERROR(aligned.add_tensor("b", TensorType::kQ8_0, {64, 2}, fill_ramp));
  return aligned.write(dir + "/aligned64.gguf");
}

void copy_headers(const std::string& shared, const std::string& dir) {
  std::vector<char> buffer(size_t{64} << 10);
  for (const char* sub : {"models", "vocab"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(fs::path(shared) / sub, ec)) {
      if (entry.path().extension() != ".gguf")
        continue;
      std::ifstream in(entry.path(), std::ios::binary);
      in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
      std::ofstream(fs::path(dir) / (std::string(sub) + "_" + entry.path().filename().string()),
                    std::ios::binary)
          .write(buffer.data(), in.gcount());
    }
  }
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [SHARED_DIR]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  fs::create_directories(dir);
  Status status = write_small_models(dir);
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.to_string().c_str());
    return 1;
  }
  if (argc > 2)
    copy_headers(argv[2], dir);
  return 0;
}
