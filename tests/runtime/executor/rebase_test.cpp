// Moving a sub-layer's weights onto a device must move every one of them: for a model of
// each family, every weight pointer of every sub-layer, rebased onto stand-in device
// buffers (one per tensor of the schedule's table), lands inside those buffers, and every
// tensor of the table is reached by some pointer. A pointer left in the mapping would run
// on emu (host memory) unnoticed and fault on CUDA.
#include "executor_test_util.h"

#include "runtime/executor/sublayer_tensors.h"

namespace pshard {
namespace {

using namespace pshard::testing;

class Rebase : public ::testing::TestWithParam<std::string> {};

TEST_P(Rebase, EveryWeightPointerMovesToItsTensorsDeviceCopy) {
  const std::string path = invariance_model_path(GetParam(), "rebase-");
  PSHARD_SKIP_IF_MISSING(path);
  auto model = Model::load(path);
  ASSERT_TRUE(model.ok()) << model.status().to_string();
  auto compiled = compile_schedule(path, planner::Strategy::kAuto, {1}, 32);
  ASSERT_TRUE(compiled.ok()) << compiled.status().to_string();
  auto tables = bind_sublayer_tensors(compiled->schedule, **model);
  ASSERT_TRUE(tables.ok()) << tables.status().to_string();
  const auto& subs = (*model)->sublayers();
  for (size_t i = 0; i < subs.size(); ++i) {
    SCOPED_TRACE(subs[i].name);
    const SubLayerTensors& t = (*tables)[i];
    std::vector<std::vector<uint8_t>> device(t.tensors.size());
    std::vector<uint8_t*> bases;
    for (size_t j = 0; j < t.tensors.size(); ++j) {
      device[j].resize(t.tensors[j].bytes);
      bases.push_back(device[j].data());
    }
    auto moved =
        rebase_weights(subs[i], host_sublayer_weights((*model)->weights(), subs[i]), t, bases);
    ASSERT_TRUE(moved.ok()) << moved.status().to_string();
    std::vector<bool> reached(t.tensors.size(), false);
    for_each_weight_pointer(subs[i].kind, *moved, [&](auto& p) {
      if (!p)
        return;
      const auto* b = reinterpret_cast<const uint8_t*>(p);
      bool inside = false;
      for (size_t j = 0; j < device.size(); ++j)
        if (b >= device[j].data() && b < device[j].data() + device[j].size()) {
          inside = true;
          reached[j] = true;
        }
      EXPECT_TRUE(inside) << "a weight pointer stayed outside the device copies";
    });
    for (size_t j = 0; j < reached.size(); ++j)
      EXPECT_TRUE(reached[j]) << t.tensors[j].name << " is in the table but no weight uses it";
  }
}

INSTANTIATE_TEST_SUITE_P(Families, Rebase,
                         ::testing::Values("stories260K.gguf", "stories260K-qwen3.gguf", "mk-moe6",
                                           "mk-qwen2", "mk-qwen3moe", "mk-qwen2moe",
                                           "mk-llama-bias-yarn", "mk-gemma3", "mk-phi3"),
                         model_param_name);

} // namespace
} // namespace pshard
