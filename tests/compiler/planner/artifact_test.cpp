// The schedule artifact end to end: emitted, loaded and checked by the runtime's reader,
// and every kind of bad input refused with a clear error — never a crash.
#include "pshard/Planner/Planner.h"
#include "pshard/Target/ScheduleEmitter.h"
#include "runtime/schedule/schedule_file.h"
#include "runtime/schedule/schedule_json.h"
#include "tools/pshard-mkmodel/model_generator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <random>

namespace pshard {
namespace {

namespace sfb = fb::schedule;

class Artifact : public ::testing::Test {
protected:
  void SetUp() override {
    ModelSpec spec;
    spec.n_embd = 128;
    spec.n_layer = 3;
    spec.n_head = 4;
    spec.n_ff = 256;
    spec.sparse = true;
    model_path_ = (std::filesystem::temp_directory_path() /
                   ("pshard_artifact_" + std::to_string(::getpid()) + ".gguf")).string();
    ASSERT_TRUE(write_model(spec, model_path_).ok());
    auto file = gguf::GgufFile::open(model_path_, gguf::OpenMode::kMetadataOnly);
    ASSERT_TRUE(file.ok());
    file_ = std::move(*file);
    auto graph = planner::build_model_graph(*file_);
    ASSERT_TRUE(graph.ok()) << graph.status().to_string();
    graph_ = std::move(*graph);
    const planner::FixedMachineModel machine({});
    planner::CompileOptions o;
    o.budgets = {0, 64ull << 20, 1ull << 30};
    o.tiers = {1, 16};
    o.n_ctx = 1024;
    auto grid = planner::plan_grid(graph_, machine, o);
    ASSERT_TRUE(grid.ok()) << grid.status().to_string();
    grid_ = std::move(*grid);
    auto bytes = planner::serialize_schedule(graph_, grid_, "test");
    ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
    bytes_ = std::move(*bytes);
  }
  void TearDown() override { std::filesystem::remove(model_path_); }

  // Re-packs the artifact after `edit` changes its object form.
  template <typename Edit> std::vector<uint8_t> edited(Edit edit) {
    std::unique_ptr<sfb::ScheduleT> s(sfb::GetSizePrefixedSchedule(bytes_.data())->UnPack());
    edit(*s);
    flatbuffers::FlatBufferBuilder b;
    sfb::FinishSizePrefixedScheduleBuffer(b, sfb::Schedule::Pack(b, s.get()));
    return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
  }

  std::string model_path_;
  std::unique_ptr<gguf::GgufFile> file_;
  planner::ModelGraph graph_;
  planner::PlanGrid grid_;
  std::vector<uint8_t> bytes_;
};

TEST_F(Artifact, RoundTripsThroughTheRuntimeReader) {
  auto s = Schedule::load_bytes(bytes_);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(s->check_model(*file_).ok());
  EXPECT_EQ(s->budgets(), grid_.budgets);
  EXPECT_EQ(s->tiers(), grid_.tiers);
  for (size_t b = 0; b < grid_.budgets.size(); ++b)
    for (size_t t = 0; t < grid_.tiers.size(); ++t) {
      const SchedulePlan& p = s->plan({b, t});
      const planner::Plan& q = grid_.at(b, t);
      EXPECT_EQ(p.strategy, q.strategy);
      EXPECT_EQ(p.arena_bytes, q.arena_bytes);
      EXPECT_DOUBLE_EQ(p.predicted_ms_per_pass, q.predicted_ms_per_pass);
      ASSERT_EQ(p.placements.size(), q.placements.size());
      EXPECT_EQ(p.vram_layout.size(), q.vram_layout.size());
    }
  // The JSON twin loads back to the same plans.
  auto json = schedule_to_json(*s);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("\"predicted_tokens_per_s\""), std::string::npos);
  EXPECT_NE(json->find("\"vram_bytes\""), std::string::npos);
  auto again = schedule_from_json(*json);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(again->plan({1, 1}).placements, s->plan({1, 1}).placements);
}

TEST_F(Artifact, SelectPicksTierAndBudget) {
  auto s = Schedule::load_bytes(bytes_);
  ASSERT_TRUE(s.ok());
  auto at = s->select(3, 100ull << 20);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(s->tiers()[at->tier], 16);
  EXPECT_EQ(s->budgets()[at->budget], 64ull << 20);
  at = s->select(1000, 8ull << 30);
  ASSERT_TRUE(at.ok());
  EXPECT_EQ(s->tiers()[at->tier], 16); // larger passes run in chunks of the largest tier
  EXPECT_EQ(s->budgets()[at->budget], 1ull << 30);
  EXPECT_EQ(s->select(0, 0).status().code(), StatusCode::kInvalidArgument);
}

TEST_F(Artifact, TruncatedFilesAreRefused) {
  std::vector<size_t> lengths;
  for (size_t n = 0; n < bytes_.size(); n += 1 + n / 8)
    lengths.push_back(n);
  for (size_t cut = 1; cut <= 16; ++cut) // inside the trailing padding too
    lengths.push_back(bytes_.size() - cut);
  for (size_t n : lengths) {
    auto s = Schedule::load_bytes({bytes_.data(), n});
    ASSERT_FALSE(s.ok()) << "accepted a " << n << "-byte prefix";
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidFormat) << s.status().to_string();
  }
}

TEST_F(Artifact, CorruptBytesNeverCrash) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<uint8_t> bad = bytes_;
    for (int k = 0; k < 4; ++k)
      bad[12 + rng() % (bad.size() - 12)] ^= static_cast<uint8_t>(1 + rng() % 255);
    auto s = Schedule::load_bytes(bad); // may load (a flipped predicted time) but must not crash
    if (!s.ok()) {
      EXPECT_FALSE(s.status().message().empty());
    }
  }
}

TEST_F(Artifact, ForeignIdentifierIsNamed) {
  std::vector<uint8_t> bad = bytes_;
  std::memcpy(bad.data() + 8, "PSHP", 4);
  auto s = Schedule::load_bytes(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("not a pshard schedule (identifier 'PSHP'"), std::string::npos)
      << s.status().message();
}

TEST_F(Artifact, NewerOrOtherVersionsAreRefusedNamingSupportedOnes) {
  auto newer = edited([](sfb::ScheduleT& s) { s.schema_minor = kScheduleSchemaMinor + 1; });
  auto s = Schedule::load_bytes(newer);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kVersionMismatch);
  EXPECT_NE(s.status().message().find("newer than this build"), std::string::npos);
  EXPECT_NE(s.status().message().find("reads schedule schema 1.0 to 1."), std::string::npos);
  auto other = edited([](sfb::ScheduleT& s) { s.schema_major = kScheduleSchemaMajor + 1; });
  s = Schedule::load_bytes(other);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kVersionMismatch);
  EXPECT_NE(s.status().message().find("is not supported"), std::string::npos);
}

TEST_F(Artifact, Schema10FilesStillLoad) {
  // 1.0 had no Tensor.shard; its artifacts (all for unsplit models) read it as 0.
  auto old = edited([](sfb::ScheduleT& s) {
    s.schema_minor = 0;
    for (auto& sub : s.sublayers)
      for (auto& t : sub->tensors)
        t->shard = 0; // a default: not stored, exactly as a 1.0 writer left it
  });
  auto s = Schedule::load_bytes(old);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(s->check_model(*file_).ok());
  for (const auto* sub : *s->root().sublayers())
    for (const auto* t : *sub->tensors())
      EXPECT_EQ(t->shard(), 0u);
}

// 1.1 had one context range, one resident set per budget and no switches, CPU-only row
// or workload: its artifacts read as one range at n_ctx with flat predictions.
TEST_F(Artifact, Schema11FilesStillLoad) {
  auto old = edited([](sfb::ScheduleT& s) {
    s.schema_minor = 1;
    s.options->contexts.clear();
    s.options->workload_prompt_tokens = s.options->workload_generated_tokens = 0;
    s.options->link_h2d_latency_ns = s.options->link_h2d_ns_per_mib = 0;
    s.options->link_d2h_latency_ns = s.options->link_d2h_ns_per_mib = 0;
    s.cpu_only.reset();
    for (auto& row : s.grid) {
      row->shorter_contexts.clear();
      row->switches.clear();
      for (auto& p : row->plans) {
        p->context = p->context_start = 0;
        p->predicted_ms_at_context_start = 0;
      }
    }
  });
  auto s = Schedule::load_bytes(old);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->contexts(), std::vector<int64_t>{1024});
  for (size_t b = 0; b < s->budgets().size(); ++b) {
    EXPECT_TRUE(s->switches(b).empty());
    for (size_t t = 0; t < s->tiers().size(); ++t) {
      const SchedulePlan& p = s->plan({b, t, 0});
      EXPECT_EQ(p.context, 1024);
      EXPECT_EQ(p.context_start, 1);
      EXPECT_DOUBLE_EQ(p.predicted_ms_at(1), p.predicted_ms_per_pass);
    }
  }
  ASSERT_NE(s->cpu_only_plan(0, 0), nullptr) << "the grid's budget 0 serves as CPU-only plans";
  EXPECT_EQ(s->cpu_only_plan(0, 0)->budget_bytes, 0u);
}

// 1.2 had no CompileOptions.parallel: its plans read as sized for one sequence; a 1.3
// artifact carries the sequences its KV buffers were sized for into every plan, and a
// negative count is refused.
TEST_F(Artifact, ParallelSequencesReachEveryPlan) {
  auto old = edited([](sfb::ScheduleT& s) {
    s.schema_minor = 2;
    s.options->parallel = 0;
  });
  auto s = Schedule::load_bytes(old);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->plan({0, 0, 0}).sequences, 1);
  auto four = Schedule::load_bytes(edited([](sfb::ScheduleT& s) { s.options->parallel = 4; }));
  ASSERT_TRUE(four.ok()) << four.status().to_string();
  for (size_t b = 0; b < four->budgets().size(); ++b)
    EXPECT_EQ(four->plan({b, 0, 0}).sequences, 4);
  auto bad = Schedule::load_bytes(edited([](sfb::ScheduleT& s) { s.options->parallel = -2; }));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("parallel sequences"), std::string::npos);
}

// Context ranges and switches survive the trip through the artifact exactly.
TEST_F(Artifact, ContextRangesAndSwitchesRoundTrip) {
  planner::FixedMachineParams slow_link;
  slow_link.cpu_flops = 20e9;
  slow_link.cpu_bandwidth = 5e9;
  slow_link.h2d_bandwidth = slow_link.d2h_bandwidth = 2e9;
  const planner::FixedMachineModel machine(slow_link);
  planner::CompileOptions o;
  o.budgets = {2ull << 20, 3ull << 20, 8ull << 20};
  o.tiers = {1, 16, 64};
  o.n_ctx = 1024;
  o.contexts = {128, 1024};
  auto grid = planner::plan_grid(graph_, machine, o);
  ASSERT_TRUE(grid.ok()) << grid.status().to_string();
  auto bytes = planner::serialize_schedule(graph_, *grid, "test");
  ASSERT_TRUE(bytes.ok()) << bytes.status().to_string();
  auto s = Schedule::load_bytes(*bytes);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->contexts(), grid->contexts);
  size_t recorded = 0;
  for (size_t b = 0; b < grid->budgets.size(); ++b) {
    for (size_t c = 0; c < grid->contexts.size(); ++c)
      for (size_t t = 0; t < grid->tiers.size(); ++t) {
        const SchedulePlan& p = s->plan({b, t, c});
        const planner::Plan& q = grid->at(b, t, c);
        EXPECT_EQ(p.context, q.context);
        EXPECT_EQ(p.context_start, q.context_start);
        EXPECT_EQ(p.placements.size(), q.placements.size());
        EXPECT_DOUBLE_EQ(p.predicted_ms_at(q.context_start), q.predicted_ms_at_context_start);
        EXPECT_DOUBLE_EQ(p.predicted_ms_at(q.context), q.predicted_ms_per_pass);
      }
    ASSERT_EQ(s->switches(b).size(), grid->switches[b].size());
    for (size_t i = 0; i < grid->switches[b].size(); ++i) {
      const planner::PlanSwitch& w = grid->switches[b][i];
      const ScheduleSwitch& r = s->switches(b)[i];
      EXPECT_EQ(s->contexts()[r.from_context], w.from_context);
      EXPECT_EQ(s->tiers()[r.to_tier], w.to_tier);
      EXPECT_EQ(r.upload_bytes, w.upload_bytes);
      EXPECT_EQ(r.kv_download_bytes_per_position, w.kv_download_bytes_per_position);
      EXPECT_EQ(r.state_upload_bytes, w.state_upload_bytes);
      EXPECT_EQ(r.state_download_bytes, w.state_download_bytes);
      ++recorded;
    }
  }
  EXPECT_GT(recorded, 0u) << "the context ranges' KV caches differ, so switches move bytes";
  ASSERT_NE(s->cpu_only_plan(1, 2), nullptr);
  EXPECT_EQ(s->cpu_only_plan(1, 2)->tier, 64);
  EXPECT_EQ(s->cpu_only_plan(1, 2)->context, 1024);
  EXPECT_NE(s->link().h2d_ns_per_mib, 0u);
  // A switch to a tier the grid lacks, or a missing range, is refused.
  std::unique_ptr<sfb::ScheduleT> t(sfb::GetSizePrefixedSchedule(bytes->data())->UnPack());
  auto pack = [](sfb::ScheduleT& x) {
    flatbuffers::FlatBufferBuilder fbb;
    sfb::FinishSizePrefixedScheduleBuffer(fbb, sfb::Schedule::Pack(fbb, &x));
    return std::vector<uint8_t>(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  };
  size_t with_switches = 0;
  while (t->grid[with_switches]->switches.empty())
    ++with_switches;
  t->grid[with_switches]->switches[0]->to_tier = 5;
  auto r = Schedule::load_bytes(pack(*t));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("switch between plans it does not have"), std::string::npos);
  t->grid[with_switches]->switches[0]->to_tier = 16;
  t->grid[0]->shorter_contexts.clear();
  r = Schedule::load_bytes(pack(*t));
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("context ranges"), std::string::npos) << r.status().message();
}

TEST_F(Artifact, InconsistentGridsAreRefused) {
  auto missing = edited([](sfb::ScheduleT& s) { s.grid[1]->plans[0]->placements.pop_back(); });
  EXPECT_EQ(Schedule::load_bytes(missing).status().code(), StatusCode::kInvalidFormat);
  auto over = edited([](sfb::ScheduleT& s) {
    s.grid[1]->plans[0]->arena_bytes = s.grid[1]->plans[0]->budget_bytes + 1;
  });
  auto r = Schedule::load_bytes(over);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("more than its budget"), std::string::npos);
}

TEST_F(Artifact, AnotherModelIsRefusedNamingBothFingerprints) {
  auto s = Schedule::load_bytes(bytes_);
  ASSERT_TRUE(s.ok());
  ModelSpec other;
  other.n_embd = 128;
  other.n_layer = 3;
  other.n_head = 4;
  other.n_ff = 256;
  other.type = TensorType::kF16; // same shape, another quantization
  other.sparse = true;
  const std::string path = model_path_ + ".other.gguf";
  ASSERT_TRUE(write_model(other, path).ok());
  auto file = gguf::GgufFile::open(path, gguf::OpenMode::kMetadataOnly);
  std::filesystem::remove(path);
  ASSERT_TRUE(file.ok());
  const Status st = s->check_model(**file);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), StatusCode::kModelMismatch);
  EXPECT_NE(st.message().find(s->model_fingerprint().hex()), std::string::npos);
  EXPECT_NE(st.message().find(model_fingerprint(**file).hex()), std::string::npos);
}

TEST_F(Artifact, WrittenAtomically) {
  const std::string path = model_path_ + ".pshard";
  ASSERT_TRUE(planner::write_schedule_file(graph_, grid_, path, "test").ok());
  auto s = Schedule::load_file(path);
  EXPECT_TRUE(s.ok()) << s.status().to_string();
  std::filesystem::remove(path);
  auto missing = Schedule::load_file(path);
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
}

} // namespace
} // namespace pshard
