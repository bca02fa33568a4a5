// The model fingerprint: stable for the same file, different for any change of a tensor's
// type or shape or of the metadata, or of any shard of a split model. And the sub-layer
// table built from a real GGUF.
#include "pshard/Planner/ModelGraph.h"
#include "runtime/gguf/gguf_file.h"
#include "runtime/model/pooling.h"
#include "runtime/schedule/model_fingerprint.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>

namespace pshard {
namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("pshard_fp_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

ModelFingerprint fingerprint_of(const ModelSpec& spec, const std::string& name) {
  const std::string path = temp_path(name);
  const Status written = write_model(spec, path);
  EXPECT_TRUE(written.ok()) << written.to_string();
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  std::filesystem::remove(path);
  return file.ok() ? model_fingerprint(**file) : ModelFingerprint{};
}

ModelSpec base_spec() {
  ModelSpec spec;
  spec.n_embd = 64;
  spec.n_layer = 2;
  spec.n_head = 4;
  spec.n_ff = 128;
  spec.sparse = true; // headers only: the fingerprint never reads data
  return spec;
}

TEST(ModelFingerprint, StableAndSensitive) {
  const ModelFingerprint a = fingerprint_of(base_spec(), "a.gguf");
  EXPECT_FALSE(a.is_zero());
  EXPECT_EQ(a, fingerprint_of(base_spec(), "a2.gguf"));
  EXPECT_EQ(a.hex().size(), 32u);

  ModelSpec type = base_spec();
  type.overrides["ffn_down"] = TensorType::kF16; // one tensor's type
  EXPECT_NE(a, fingerprint_of(type, "type.gguf"));

  ModelSpec shape = base_spec();
  shape.n_ff = 160; // tensor shapes
  EXPECT_NE(a, fingerprint_of(shape, "shape.gguf"));

  ModelSpec meta = base_spec();
  meta.rope_freq_base = 500000.0f; // one metadata value, no tensor change
  EXPECT_NE(a, fingerprint_of(meta, "meta.gguf"));

  ModelSpec name = base_spec();
  name.name = "another name";
  EXPECT_NE(a, fingerprint_of(name, "name.gguf"));
}

// A split model's fingerprint: stable, its own, and changed by a change in any shard.
class SplitFingerprint : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = temp_path("split");
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes base_spec() split at most `per_file` tensors a file under `name`.
  std::vector<std::string> write(const std::string& name, uint32_t per_file) {
    ModelSpec spec = base_spec();
    spec.split_max_tensors = per_file;
    EXPECT_TRUE(write_model(spec, dir_ + "/" + name + ".gguf").ok());
    std::vector<std::string> paths;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      if (e.path().filename().string().rfind(name + "-", 0) == 0)
        paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    return paths;
  }

  ModelFingerprint of(const std::string& first, gguf::OpenMode mode) {
    auto file = gguf::GgufFile::open(first, mode);
    EXPECT_TRUE(file.ok()) << file.status().to_string();
    return file.ok() ? model_fingerprint(**file) : ModelFingerprint{};
  }

  std::string dir_;
};

TEST_F(SplitFingerprint, StableAndDistinct) {
  const auto a = write("a", 5);
  ASSERT_EQ(a.size(), 5u); // 21 tensors: 5 + 5 + 5 + 5 + 1
  const ModelFingerprint fp = of(a[0], gguf::OpenMode::kMetadataOnly);
  EXPECT_EQ(fp, of(a[0], gguf::OpenMode::kMapData));
  EXPECT_EQ(fp, of(write("again", 5)[0], gguf::OpenMode::kMetadataOnly));
  EXPECT_NE(fp, fingerprint_of(base_spec(), "unsplit.gguf"));
  EXPECT_NE(fp, of(write("other", 7)[0], gguf::OpenMode::kMetadataOnly)) << "another split";
}

TEST_F(SplitFingerprint, ChangesWithAnyShard) {
  const auto paths = write("m", 5);
  const ModelFingerprint fp = of(paths[0], gguf::OpenMode::kMetadataOnly);
  for (size_t k = 0; k < paths.size(); ++k) {
    // Rename one tensor of shard k in its header (same length: still a valid file).
    std::ifstream in(paths[k], std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    in.close();
    const size_t at = bytes.find(".weight");
    ASSERT_NE(at, std::string::npos);
    bytes[at + 1] = 'W';
    const std::string saved = paths[k] + ".orig";
    std::filesystem::rename(paths[k], saved);
    std::ofstream(paths[k], std::ios::binary) << bytes;
    EXPECT_NE(fp, of(paths[0], gguf::OpenMode::kMetadataOnly)) << "shard " << k;
    std::filesystem::rename(saved, paths[k]);
  }
  EXPECT_EQ(fp, of(paths[0], gguf::OpenMode::kMetadataOnly));
}

TEST(ModelFingerprint, HasherSeparatesFieldBoundaries) {
  Hasher128 x, y;
  x.str("ab");
  x.str("c");
  y.str("a");
  y.str("bc");
  EXPECT_NE(x.finish(), y.finish());
  Hasher128 z;
  EXPECT_NE(z.finish().hi, z.finish().lo);
}

// A generated file (headers only) and the sub-layer table built from it.
struct GraphOfFile {
  std::unique_ptr<gguf::GgufFile> file;
  Result<planner::ModelGraph> graph = invalid_argument("no file");
};
GraphOfFile graph_of(const ModelSpec& spec, const std::string& name) {
  GraphOfFile g;
  const std::string path = temp_path(name);
  const Status written = write_model(spec, path);
  EXPECT_TRUE(written.ok()) << written.to_string();
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  std::filesystem::remove(path);
  EXPECT_TRUE(file.ok()) << file.status().to_string();
  if (!file.ok())
    return g;
  g.file = std::move(*file);
  g.graph = planner::build_model_graph(*g.file);
  return g;
}

TEST(ModelGraph, FromAGeneratedMoeFile) {
  ModelSpec spec = base_spec();
  spec.n_expert = 8;
  spec.n_expert_used = 2;
  GraphOfFile g = graph_of(spec, "moe.gguf");
  ASSERT_TRUE(g.file && g.graph.ok()) << g.graph.status().to_string();
  const auto& file = g.file;
  auto& graph = g.graph;
  const std::vector<std::string> names = {"embed", "attn[0]", "moe[0]", "attn[1]", "moe[1]", "head"};
  ASSERT_EQ(graph->sublayers.size(), names.size());
  uint64_t tensor_bytes = 0, tensors = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(graph->sublayers[i].name, names[i]);
    for (const auto& t : graph->sublayers[i].tensors) {
      tensor_bytes += t.bytes;
      ++tensors;
      EXPECT_GE(t.file_offset, file->data_offset());
    }
  }
  EXPECT_EQ(tensors, file->tensors().size()); // every tensor in exactly one sub-layer
  EXPECT_EQ(tensor_bytes, graph->total_weight_bytes());
  EXPECT_EQ(graph->sublayers[2].n_expert, 8);
  EXPECT_GT(graph->sublayers[2].expert_bytes, 0u);
  EXPECT_EQ(graph->fingerprint, model_fingerprint(*file));
}

// What follows pooling runs on the host: a reranker's head (cls.*) and EmbeddingGemma's
// Dense modules (dense_2, dense_3) are in no sub-layer, and a file with them plans.
TEST(ModelGraph, LeavesThePoolingHeadsToTheHost) {
  for (const char* arch : {"qwen3", "bert", "gemma-embedding"}) {
    SCOPED_TRACE(arch);
    ModelSpec spec = base_spec();
    spec.arch = arch;
    spec.rerank = std::string(arch) != "gemma-embedding";
    spec.dense_projection = spec.rerank ? 0 : 96;
    GraphOfFile g = graph_of(spec, std::string(arch) + "-head.gguf");
    ASSERT_TRUE(g.file && g.graph.ok()) << g.graph.status().to_string();
    const auto& file = g.file;
    auto& graph = g.graph;
    size_t placed = 0, host = 0;
    for (const auto& s : graph->sublayers)
      for (const auto& t : s.tensors) {
        EXPECT_FALSE(is_post_pooling_tensor(t.name)) << t.name << " placed in " << s.name;
        ++placed;
      }
    for (const auto& t : file->tensors())
      host += is_post_pooling_tensor(t.name) ? 1 : 0;
    EXPECT_GE(host, 1u);
    EXPECT_EQ(placed + host, file->tensors().size());
  }
}

} // namespace
} // namespace pshard
