// Loading, writing and the errors for bad input: truncated, foreign, other versions.
#include "runtime/profile/profile.h"
#include "runtime/profile/profile_lookup.h"
#include "runtime/profile/profile_json.h"
#include "runtime/profile/profile_report.h"
#include "synthetic_profile.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <random>

namespace pshard {
namespace {

std::vector<uint8_t> serialize_with_version(uint32_t major, uint32_t minor,
                                            fb::ProfileT p = testing::synthetic_profile()) {
  p.schema_major = major;
  p.schema_minor = minor;
  flatbuffers::FlatBufferBuilder builder;
  fb::FinishSizePrefixedProfileBuffer(builder, fb::Profile::Pack(builder, &p));
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

// `p` written as an older 1.x file (what that version's writer produced), then loaded.
Result<Profile> load_as_minor(uint32_t minor, fb::ProfileT p) {
  return Profile::load_bytes(serialize_with_version(1, minor, std::move(p)));
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("pshard_profile_test_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(ProfileIo, RoundTripKeepsEveryTable) {
  Result<Profile> p = Profile::from_object(testing::synthetic_profile(true));
  ASSERT_TRUE(p.ok()) << p.status().to_string();
  EXPECT_EQ(p->data().schema_major, kProfileSchemaMajor);
  EXPECT_EQ(p->data().schema_minor, kProfileSchemaMinor);
  Result<Profile> again = Profile::load_bytes(p->bytes());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data().cpu->matmul.size(), 8u);
  EXPECT_EQ(again->data().machine->cpu->model, "Test CPU");
  EXPECT_EQ(again->data().machine->cpu->source, fb::Provenance::FromSpecification);
  EXPECT_TRUE(again->has_gpu());
  EXPECT_EQ(again->fingerprint(), p->fingerprint());
  EXPECT_EQ(again->fingerprint_hex().size(), 16u);
}

TEST(ProfileIo, FileRoundTripIsAtomic) {
  Result<Profile> p = Profile::from_object(testing::synthetic_profile());
  ASSERT_TRUE(p.ok());
  const std::string path = temp_path("rt.pshprof");
  ASSERT_TRUE(write_profile_file(*p, path).ok());
  Result<Profile> back = Profile::load_file(path);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(back->fingerprint(), p->fingerprint());
  // No temporary left beside it.
  for (const auto& e :
       std::filesystem::directory_iterator(std::filesystem::path(path).parent_path()))
    EXPECT_EQ(e.path().string().find(path + ".tmp"), std::string::npos) << e.path();
  std::filesystem::remove(path);
}

TEST(ProfileIo, JsonRoundTrip) {
  Result<Profile> p = Profile::from_object(testing::synthetic_profile(true));
  ASSERT_TRUE(p.ok());
  Result<std::string> json = profile_to_json(*p);
  ASSERT_TRUE(json.ok()) << json.status().to_string();
  EXPECT_NE(json->find("\"FromSpecification\""), std::string::npos);
  Result<Profile> back = profile_from_json(*json);
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*profile_to_json(*back), *json);
  EXPECT_FALSE(profile_from_json("{ machine: { nmae: 1 } }").ok());
}

TEST(ProfileIo, FingerprintChangesWithContent) {
  fb::ProfileT a = testing::synthetic_profile();
  fb::ProfileT b = testing::synthetic_profile();
  b.cpu->matmul[0]->flops_per_s *= 1.01;
  EXPECT_NE(Profile::from_object(std::move(a))->fingerprint(),
            Profile::from_object(std::move(b))->fingerprint());
  const uint8_t abc[] = {'a', 'b', 'c'};
  EXPECT_EQ(fnv1a64(abc), 0xe71fa2190541574bull);
  const uint8_t foobar[] = {'f', 'o', 'o', 'b', 'a', 'r'};
  EXPECT_EQ(fnv1a64(foobar), 0x85944171f73967e8ull); // published FNV-1a 64 test vector
}

TEST(ProfileIo, TruncatedAtEveryLengthIsAClearError) {
  Result<Profile> p = Profile::from_object(testing::synthetic_profile(true));
  ASSERT_TRUE(p.ok());
  const std::vector<uint8_t> full(p->bytes().begin(), p->bytes().end());
  for (size_t n = 0; n < full.size(); ++n) {
    Result<Profile> r = Profile::load_bytes({full.data(), n});
    ASSERT_FALSE(r.ok()) << "accepted a profile truncated to " << n << " bytes";
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidFormat) << n;
    const std::string& m = r.status().message();
    EXPECT_TRUE(m.find("truncated") != std::string::npos ||
                m.find("too short") != std::string::npos)
        << n << ": " << m;
  }
}

TEST(ProfileIo, WrongIdentifierIsNamed) {
  std::vector<uint8_t> bytes = serialize_with_version(kProfileSchemaMajor, 0);
  bytes[8] = 'G';
  bytes[9] = 'G';
  bytes[10] = 'U';
  bytes[11] = 'F';
  Result<Profile> r = Profile::load_bytes(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "not a pshard profile (identifier 'GGUF', expected 'PSHP')");
}

TEST(ProfileIo, NewerMajorIsRefusedNamingTheVersions) {
  Result<Profile> r = Profile::load_bytes(serialize_with_version(kProfileSchemaMajor + 1, 0));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kVersionMismatch);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find(std::to_string(kProfileSchemaMajor + 1) + ".0 is not supported"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("reads profile schema " + std::to_string(kProfileSchemaMajor) + ".0"),
            std::string::npos)
      << m;
}

TEST(ProfileIo, TrailingBytesAreRefused) {
  std::vector<uint8_t> bytes = serialize_with_version(kProfileSchemaMajor, 0);
  bytes.push_back(0);
  Result<Profile> r = Profile::load_bytes(bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("header says"), std::string::npos) << r.status().message();
}

TEST(ProfileIo, OlderMajorIsRefused) {
  Result<Profile> r = Profile::load_bytes(serialize_with_version(0, 7));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kVersionMismatch);
}

// 1.1 appended GpuInfo.kernel_workspace_bytes: a 1.0 file (written before it existed)
// still loads, and reads it as 0 — no kernel scratch, which is what 1.0 plans assumed.
TEST(ProfileIo, Version1_0StillLoadsWithoutKernelScratch) {
  Result<Profile> r = load_as_minor(0, testing::synthetic_profile(true));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ASSERT_TRUE(r->data().machine && r->data().machine->gpu);
  EXPECT_EQ(r->data().schema_minor, 0u);
  EXPECT_EQ(r->data().machine->gpu->kernel_workspace_bytes, 0u);
}

// 1.2 appended weight types: a 1.1 file (Q4_0 cells only here) loads, its cells are
// found, and a new type has none of its own (the estimator borrows one).
TEST(ProfileIo, Version1_1StillLoadsWithoutTheNewWeightTypes) {
  Result<Profile> r = load_as_minor(1, testing::synthetic_profile());
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ProfileLookup look(*r);
  EXPECT_TRUE(look.cpu_matmul_flops(TensorType::kQ4_0, 1, 1 << 20, 1).ok());
  EXPECT_FALSE(look.cpu_matmul_flops(TensorType::kQ4_K, 1, 1 << 20, 1).ok());
}

// 1.3 appended grouped MoE cells and the CUDA graph overhead: a 1.2 file with a GPU loads
// and reads as having neither, so the estimator prices as it did before 1.3.
TEST(ProfileIo, Version1_2StillLoadsWithoutGroupedCells) {
  Result<Profile> r = load_as_minor(2, testing::synthetic_profile(true));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->data().schema_minor, 2u);
  EXPECT_TRUE(r->data().gpu->grouped_expert.empty());
  ProfileLookup look(*r);
  EXPECT_TRUE(look.gpu_launch_overhead_s().ok());
  EXPECT_FALSE(look.has_gpu_grouped_experts());
  EXPECT_FALSE(look.gpu_graph_launch_overhead_s().ok());
}

// A 1.2 profile's cells for the new types are looked up by their type.
TEST(ProfileIo, NewWeightTypesHaveTheirOwnCells) {
  fb::ProfileT p = testing::synthetic_profile();
  p.cpu->matmul.push_back(testing::matmul_cell(fb::WeightType::Q6_K, 1, 1 << 20, 1, 3e9));
  auto r = Profile::from_object(std::move(p));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  ProfileLookup look(*r);
  EXPECT_DOUBLE_EQ(*look.cpu_matmul_flops(TensorType::kQ6_K, 1, 1 << 20, 1), 3e9);
  EXPECT_STREQ(fb::EnumNameWeightType(fb::WeightType::IQ4_XS), "IQ4_XS");
}

// 1.5 appended MXFP4: a 1.4 file loads without MXFP4 cells (the estimator borrows), and
// a 1.5 profile's MXFP4 cells are found under their type.
TEST(ProfileIo, Version1_4StillLoadsWithoutMxfp4AndItsCellsAreFound) {
  Result<Profile> old = load_as_minor(4, testing::synthetic_profile());
  ASSERT_TRUE(old.ok()) << old.status().to_string();
  EXPECT_FALSE(ProfileLookup(*old).cpu_matmul_flops(TensorType::kMXFP4, 1, 1 << 20, 1).ok());
  fb::ProfileT p = testing::synthetic_profile();
  p.cpu->matmul.push_back(testing::matmul_cell(fb::WeightType::MXFP4, 1, 1 << 20, 1, 7e9));
  auto r = Profile::from_object(std::move(p));
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_DOUBLE_EQ(*ProfileLookup(*r).cpu_matmul_flops(TensorType::kMXFP4, 1, 1 << 20, 1), 7e9);
  EXPECT_STREQ(fb::EnumNameWeightType(fb::WeightType::MXFP4), "MXFP4");
}

TEST(ProfileIo, NewerMinorIsRefusedNamingTheVersions) {
  Result<Profile> r =
      Profile::load_bytes(serialize_with_version(kProfileSchemaMajor, kProfileSchemaMinor + 1));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kVersionMismatch);
  EXPECT_NE(r.status().message().find("is newer than this build"), std::string::npos)
      << r.status().message();
}

TEST(ProfileIo, RandomBytesAreRefusedWithoutCrashing) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes(rng() % 600);
    for (uint8_t& b : bytes)
      b = static_cast<uint8_t>(rng());
    // Half the trials carry the right identifier
    // and a matching size prefix, so the verifier itself is exercised.
    if (trial % 2 && bytes.size() >= 12) {
      std::copy_n("PSHP", 4, bytes.begin() + 8);
      const uint32_t rest = static_cast<uint32_t>(bytes.size() - 4);
      std::memcpy(bytes.data(), &rest, 4);
    }
    EXPECT_FALSE(Profile::load_bytes(bytes).ok());
  }
}

TEST(ProfileIo, CorruptedBytesNeverCrash) {
  Result<Profile> p = Profile::from_object(testing::synthetic_profile(true));
  ASSERT_TRUE(p.ok());
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<uint8_t> bytes(p->bytes().begin(), p->bytes().end());
    for (int flips = 0; flips < 4; ++flips)
      bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    Result<Profile> r = Profile::load_bytes(bytes); // may load (a changed number): must not crash
    if (r.ok())
      (void)profile_report(*r);
  }
}

TEST(ProfileIo, MissingFileAndNotAFile) {
  Result<Profile> r = Profile::load_file("/nonexistent/machine.pshprof");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("/nonexistent/machine.pshprof"), std::string::npos);
  Result<Profile> dir = Profile::load_file("/tmp");
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.status().code(), StatusCode::kIoError) << "a directory is there but cannot be read";
}

TEST(ProfileIo, ReportShowsTheTables) {
  Result<Profile> p = Profile::from_object(testing::synthetic_profile(true));
  ASSERT_TRUE(p.ok());
  const std::string text = profile_report(*p);
  for (const char* needle : {"machine   synthetic", "CPU matmul", "Q4_0", "n=4", "Transfers",
                             "Under load", "from specification", "fingerprint"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle << "\n" << text;
}

} // namespace
} // namespace pshard
