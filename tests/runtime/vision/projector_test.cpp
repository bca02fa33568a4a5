// The projector file's reader: a generated projector of each type (Qwen2-VL, Qwen2.5-VL,
// Qwen3-VL with its position table, fused q/k/v and DeepStack mergers) loads with the
// hyperparameters it was written with, and every malformed or foreign file is refused
// with the expected code and a message naming the key or tensor (one table row each,
// each row one edit of a good file, which loads before the edit).
#include "runtime/vision/projector.h"
#include "runtime/vision/projector_layout.h"
#include "tests/runtime/model/gguf_rewrite.h"
#include "tests/runtime/vision/vision_test_util.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <gtest/gtest.h>

namespace pshard {
namespace {

using testing::drop_key;
using testing::drop_tensor;
using testing::RewrittenTensor;
using testing::set_key;

std::string good_projector(ProjectorType type) {
  return testing::small_projector(std::string("projector_test_") + projector_type_name(type), type,
                                  3, 40);
}

TEST(Projector, GeneratedFilesLoadWithTheirShape) {
  for (ProjectorType type :
       {ProjectorType::kQwen2Vl, ProjectorType::kQwen25Vl, ProjectorType::kQwen3Vl}) {
    auto p = Projector::open(good_projector(type));
    ASSERT_TRUE(p.ok()) << p.status().to_string();
    const ProjectorHParams& hp = (*p)->hparams();
    EXPECT_EQ(hp.type, type);
    EXPECT_EQ(hp.n_embd, 32);
    EXPECT_EQ(hp.n_layer, 3);
    EXPECT_EQ(hp.projection_dim, 40);
    EXPECT_EQ(hp.rms_norm(), type == ProjectorType::kQwen25Vl);
    EXPECT_EQ((*p)->weights().ffn[0].gate.w.data != nullptr, type == ProjectorType::kQwen25Vl);
    EXPECT_EQ((*p)->weights().attn[2].norm.bias.data != nullptr, type != ProjectorType::kQwen25Vl);
    EXPECT_EQ(vision_sublayers(hp).size(), 2u + 2u * 3u);
    EXPECT_TRUE((*p)->check_language_model(40).ok());
    const Status wrong = (*p)->check_language_model(64);
    EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(wrong.message().find("40"), std::string::npos) << wrong.message();
    EXPECT_NE(wrong.message().find("64"), std::string::npos) << wrong.message();
  }
}

TEST(Projector, Qwen3VlHasAPositionTableFusedQkvAndDeepstackMergers) {
  auto p = Projector::open(good_projector(ProjectorType::kQwen3Vl));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  const ProjectorHParams& hp = (*p)->hparams();
  const ProjectorWeights& w = (*p)->weights();
  EXPECT_EQ(hp.act, VisionAct::kGeluTanh);
  EXPECT_EQ(hp.patch_size, 16);
  EXPECT_EQ(hp.pos_side, 448 / 16);
  EXPECT_EQ(hp.deepstack, std::vector<int64_t>{2});
  EXPECT_NE(w.positions.data, nullptr);
  EXPECT_NE(w.patch_bias.data, nullptr);
  // q, k and v are consecutive row blocks of one attn_qkv.
  const VisionAttentionWeights& a = w.attn[1];
  EXPECT_EQ(a.q.w.rows, 32);
  EXPECT_EQ(a.k.w.data, a.q.w.data + 32 * a.q.w.row_bytes);
  EXPECT_EQ(a.v.w.data, a.k.w.data + 32 * a.k.w.row_bytes);
  EXPECT_EQ(a.v.b.data, a.q.b.data + 64);
  EXPECT_EQ(w.ffn[0].deepstack.fc1.w.data, nullptr);
  ASSERT_NE(w.ffn[2].deepstack.fc1.w.data, nullptr);
  EXPECT_EQ(w.ffn[2].deepstack.fc1.w.cols, 4 * 32);
  EXPECT_EQ(w.ffn[2].deepstack.fc2.w.rows, 40);
  // A language model taking one DeepStack layer fits; one taking two does not; one taking
  // none (Qwen3.5) ignores them.
  EXPECT_TRUE((*p)->check_language_model(40, 1).ok());
  EXPECT_TRUE((*p)->check_language_model(40, 0).ok());
  const Status two = (*p)->check_language_model(40, 2);
  EXPECT_EQ(two.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(two.message().find("1 DeepStack mergers"), std::string::npos) << two.message();
  EXPECT_NE(two.message().find("n_deepstack_layers"), std::string::npos) << two.message();
}

TEST(Projector, MissingFileAndLanguageModelAreRefusedNamingTheFix) {
  auto none = Projector::open(::testing::TempDir() + "/no-such-mmproj.gguf");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("mmproj"), std::string::npos);

  const std::string lm = ::testing::TempDir() + "/projector_test_lm.gguf";
  ModelSpec spec;
  spec.arch = "qwen2vl";
  ASSERT_TRUE(write_model(spec, lm).ok());
  auto foreign = Projector::open(lm);
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(foreign.status().message().find("not a vision projector"), std::string::npos)
      << foreign.status().message();
  EXPECT_NE(foreign.status().message().find("'qwen2vl'"), std::string::npos);
}

using Edit = void (*)(std::vector<gguf::KeyValue>&, std::vector<RewrittenTensor>&);
struct BadCase {
  const char* name;
  ProjectorType type;
  Edit edit;
  StatusCode code;
  std::vector<const char*> says;
};

gguf::Value u32(uint32_t v) { return gguf::Value{v}; }

const BadCase kCases[] = {
    {"missing_width",
     ProjectorType::kQwen25Vl,
     [](auto& md, auto&) { drop_key(md, "clip.vision.embedding_length"); },
     StatusCode::kInvalidFormat,
     {"clip.vision.embedding_length", "missing"}},
    {"missing_type",
     ProjectorType::kQwen25Vl,
     [](auto& md, auto&) { drop_key(md, "clip.projector_type"); },
     StatusCode::kInvalidFormat,
     {"clip.projector_type", "qwen2.5vl_merger"}},
    {"foreign_projector_type",
     ProjectorType::kQwen25Vl,
     [](auto& md, auto&) { set_key(md, "clip.projector_type", gguf::Value{std::string("ldp")}); },
     StatusCode::kUnsupported,
     {"'ldp'", "qwen2vl_merger"}},
    {"mean_of_two_values",
     ProjectorType::kQwen2Vl,
     [](auto& md, auto&) {
       set_key(md, "clip.vision.image_mean",
               gguf::Value{gguf::Array{gguf::ValueType::kFloat32, {{0.5f}, {0.5f}}}});
     },
     StatusCode::kInvalidFormat,
     {"clip.vision.image_mean", "2 values"}},
    {"odd_head_size",
     ProjectorType::kQwen25Vl,
     [](auto& md, auto&) { set_key(md, "clip.vision.attention.head_count", u32(32)); },
     StatusCode::kInvalidFormat,
     {"head_count", "multiple of 4"}},
    {"windows_on_qwen2vl",
     ProjectorType::kQwen2Vl,
     [](auto& md, auto&) { set_key(md, "clip.vision.n_wa_pattern", u32(2)); },
     StatusCode::kInvalidFormat,
     {"n_wa_pattern", "qwen2vl_merger"}},
    {"merge_of_three",
     ProjectorType::kQwen25Vl,
     [](auto& md, auto&) { set_key(md, "clip.vision.spatial_merge_size", u32(3)); },
     StatusCode::kUnsupported,
     {"spatial_merge_size", "2x2"}},
    {"missing_tensor",
     ProjectorType::kQwen25Vl,
     [](auto&, auto& t) { drop_tensor(t, "v.blk.1.ffn_gate.weight"); },
     StatusCode::kInvalidFormat,
     {"v.blk.1.ffn_gate.weight", "missing"}},
    {"second_patch_half_missing",
     ProjectorType::kQwen2Vl,
     [](auto&, auto& t) { drop_tensor(t, "v.patch_embd.weight.1"); },
     StatusCode::kInvalidFormat,
     {"v.patch_embd.weight.1"}},
    {"projection_width_disagrees",
     ProjectorType::kQwen25Vl,
     [](auto& md, auto&) { set_key(md, "clip.vision.projection_dim", u32(41)); },
     StatusCode::kInvalidFormat,
     {"mm.2.weight", "shape"}},
    {"qwen3_position_table_missing",
     ProjectorType::kQwen3Vl,
     [](auto&, auto& t) { drop_tensor(t, "v.position_embd.weight"); },
     StatusCode::kInvalidFormat,
     {"v.position_embd.weight", "side x side"}},
    {"qwen3_deepstack_half_missing",
     ProjectorType::kQwen3Vl,
     [](auto&, auto& t) { drop_tensor(t, "v.deepstack.2.fc2.weight"); },
     StatusCode::kInvalidFormat,
     {"v.deepstack.2.fc2.weight", "missing"}},
    {"qwen3_with_silu",
     ProjectorType::kQwen3Vl,
     [](auto& md, auto&) {
       set_key(md, "clip.use_gelu", gguf::Value{false});
       set_key(md, "clip.use_silu", gguf::Value{true});
     },
     StatusCode::kInvalidFormat,
     {"clip.use_silu", "GELU"}},
    {"windows_on_qwen3vl",
     ProjectorType::kQwen3Vl,
     [](auto& md, auto&) { set_key(md, "clip.vision.n_wa_pattern", u32(2)); },
     StatusCode::kInvalidFormat,
     {"n_wa_pattern", "qwen3vl_merger"}},
    {"stray_tensor",
     ProjectorType::kQwen2Vl,
     [](auto&, auto& t) {
       RewrittenTensor extra = t.front();
       extra.info.name = "v.blk.0.ffn_gate.weight";
       t.push_back(extra);
     },
     StatusCode::kUnsupported,
     {"v.blk.0.ffn_gate.weight", "qwen2vl_merger"}},
};

class BadProjector : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadProjector, IsRefusedNamingTheProblem) {
  const BadCase& c = GetParam();
  const std::string good = good_projector(c.type);
  ASSERT_TRUE(Projector::open(good).ok());
  const std::string bad = ::testing::TempDir() + "/projector_bad_" + c.name + ".gguf";
  testing::rewrite_gguf(good, bad, c.edit);
  auto p = Projector::open(bad);
  ASSERT_FALSE(p.ok()) << c.name << " loaded";
  EXPECT_EQ(p.status().code(), c.code) << p.status().to_string();
  for (const char* s : c.says)
    EXPECT_NE(p.status().message().find(s), std::string::npos)
        << "'" << s << "' not in: " << p.status().message();
}

INSTANTIATE_TEST_SUITE_P(Cases, BadProjector, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

} // namespace
} // namespace pshard
