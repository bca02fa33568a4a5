// Routing profiles: the file round-trips, every malformed file is a clear error, and a
// CpuSession recording its routing counts every token of every MoE layer without
// changing a single logit.
#include "runtime/model/model.h"
#include "runtime/model/routing_recorder.h"
#include "tests/runtime/model/model_test_util.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <numeric>

namespace pshard {
namespace {

ModelHParams moe_hp() {
  ModelHParams hp;
  hp.n_layer = 2;
  hp.n_expert = 4;
  hp.n_expert_used = 2;
  return hp;
}

std::string temp_file(const std::string& name, const std::string& text = "") {
  const std::string path = ::testing::TempDir() + "/routing_profile_test_" + name;
  if (!text.empty())
    std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(RoutingProfile, RoundTripsThroughItsFile) {
  auto r = RoutingProfile::empty_for(moe_hp(), "m", "qwen3moe");
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  const int64_t a[] = {0, 3}, b[] = {1, 3};
  ASSERT_TRUE(r->add(0, a).ok());
  ASSERT_TRUE(r->add(0, b).ok());
  ASSERT_TRUE(r->add(1, a).ok());
  r->text_tokens = 2;
  const std::string path = temp_file("roundtrip.json");
  ASSERT_TRUE(r->save(path).ok());
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  auto back = RoutingProfile::load(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->model, "m");
  EXPECT_EQ(back->architecture, "qwen3moe");
  ASSERT_EQ(back->layers.size(), 2u);
  EXPECT_EQ(back->layers[0].counts, (std::vector<uint64_t>{1, 1, 0, 2}));
  EXPECT_EQ(back->layers[1].tokens, 1u);
  const std::vector<double> p = back->probabilities(0);
  EXPECT_DOUBLE_EQ(p[3], 1.0);
  EXPECT_DOUBLE_EQ(std::accumulate(p.begin(), p.end(), 0.0), 2.0);
  EXPECT_DOUBLE_EQ(back->probabilities(7)[0], 0.5); // no such layer: uniform k / E
}

TEST(RoutingProfile, AddRefusesWhatNoRouterGives) {
  auto r = RoutingProfile::empty_for(moe_hp(), "m", "");
  const int64_t one[] = {0}, out[] = {0, 4};
  EXPECT_FALSE(r->add(0, one).ok());
  EXPECT_FALSE(r->add(0, out).ok());
  EXPECT_FALSE(r->add(5, std::span<const int64_t>(out, 2)).ok());
  ModelHParams dense;
  dense.n_layer = 2;
  EXPECT_FALSE(RoutingProfile::empty_for(dense, "d", "").ok());
  // GLM-4.5's leading dense layer routes nothing: the profile has no entry for it.
  ModelHParams lead = moe_hp();
  lead.n_dense_lead = 1;
  auto glm = RoutingProfile::empty_for(lead, "g", "glm4moe");
  ASSERT_TRUE(glm.ok()) << glm.status().to_string();
  ASSERT_EQ(glm->layers.size(), 1u);
  EXPECT_EQ(glm->layers[0].layer, 1);
  const int64_t two[] = {0, 1};
  EXPECT_FALSE(glm->add(0, two).ok());
  EXPECT_TRUE(glm->add(1, two).ok());
}

struct BadFile {
  std::string name, text, says;
};

class RoutingProfileErrors : public ::testing::TestWithParam<BadFile> {};

TEST_P(RoutingProfileErrors, NameTheProblem) {
  const BadFile& c = GetParam();
  auto r = RoutingProfile::load(temp_file(c.name, c.text));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidFormat) << r.status().to_string();
  EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("pshard-profile --routing"), std::string::npos);
}

const std::string kHead = R"({"format":"pshard-routing","version":1,"n_expert":4,)"
                              R"("n_expert_used":2,)";

INSTANTIATE_TEST_SUITE_P(
    Cases, RoutingProfileErrors,
    ::testing::Values(
        BadFile{"not_json", "{\"format\": ", "not a JSON object"},
        BadFile{"an_array", "[1, 2]", "not a JSON object"},
        BadFile{"another_format", R"({"format":"pshard-profile","version":1})", "format"},
        BadFile{"version_2", R"({"format":"pshard-routing","version":2})", "version 2"},
        BadFile{"no_layers", R"({"format":"pshard-routing","version":1,"n_expert":4,"n_expert_used":2})",
                "malformed"},
        BadFile{"counts_not_numbers",
                (kHead + R"("layers":[{"layer":0,"tokens":1,"counts":["a"]}]})"),
                "malformed"},
        BadFile{"too_few_counts",
                (kHead + R"("layers":[{"layer":0,"tokens":1,"counts":[1,1,0]}]})"),
                "3 counts"},
        BadFile{"counts_do_not_sum",
                (kHead + R"("layers":[{"layer":0,"tokens":2,"counts":[1,1,0,0]}]})"),
                "sum to 2"},
        BadFile{"layers_out_of_order",
                (kHead + R"("layers":[{"layer":1,"tokens":0,"counts":[0,0,0,0]},)"
                                      R"({"layer":0,"tokens":0,"counts":[0,0,0,0]}]})"),
                "ascending"},
        BadFile{"more_used_than_experts",
                R"({"format":"pshard-routing","version":1,"n_expert":2,"n_expert_used":3,"layers":[]})",
                "n_expert_used"}),
    [](const auto& info) { return info.param.name; });

TEST(RoutingProfile, AMissingFileIsNotFound) {
  auto r = RoutingProfile::load(temp_file("absent.json"));
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(RoutingRecorder, CountsEveryTokenAndChangesNoLogit) {
  const std::string path = testing::shared_model("stories260K-moe4x2-noise10.gguf");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  const ModelHParams& hp = (*model)->hparams();
  std::vector<TokenId> ids;
  for (int i = 0; i < 40; ++i)
    ids.push_back(static_cast<TokenId>(1 + (i * 37) % (hp.n_vocab - 1)));
  auto plain = CpuSession::create(**model, {64, 1, 16});
  auto recorded = CpuSession::create(**model, {64, 1, 16});
  ASSERT_TRUE(plain.ok() && recorded.ok());
  auto profile = RoutingProfile::empty_for(hp, "stories", "llama");
  ASSERT_TRUE(profile.ok());
  RoutingRecorder recorder(&*profile);
  (*recorded)->set_routing_recorder(&recorder);
  auto a = (*plain)->decode(ids);
  ASSERT_TRUE(a.ok());
  const std::vector<float> want(a->begin(), a->end());
  auto b = (*recorded)->decode(ids);
  ASSERT_TRUE(b.ok() && recorder.status().ok());
  EXPECT_TRUE(std::equal(want.begin(), want.end(), b->begin()));
  ASSERT_EQ(profile->layers.size(), static_cast<size_t>(hp.n_layer));
  for (const RoutingLayer& l : profile->layers) {
    EXPECT_EQ(l.tokens, ids.size());
    EXPECT_EQ(std::accumulate(l.counts.begin(), l.counts.end(), uint64_t{0}),
              ids.size() * static_cast<uint64_t>(hp.n_expert_used));
  }
  EXPECT_TRUE(profile->validate().ok());
}

} // namespace
} // namespace pshard
