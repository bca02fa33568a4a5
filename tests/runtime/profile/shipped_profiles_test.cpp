// The profiles shipped in profiles/: each JSON file was built into a .pshprof by flatc at
// build time; both forms must load, agree, and be labelled for what they are.
#include "runtime/profile/profile.h"
#include "runtime/profile/profile_json.h"
#include "runtime/profile/profile_lookup.h"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace pshard {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> json_files(const std::string& sub) {
  std::vector<fs::path> out;
  const fs::path dir = fs::path(PSHARD_PROFILES_SOURCE_DIR) / sub;
  if (fs::is_directory(dir))
    for (const auto& e : fs::directory_iterator(dir))
      if (e.path().extension() == ".json")
        out.push_back(e.path());
  return out;
}

// Loads both forms of one shipped profile and checks they agree.
Profile load_both(const fs::path& json_path) {
  const fs::path binary =
      fs::path(PSHARD_PROFILES_BUILD_DIR) / (json_path.stem().string() + ".pshprof");
  Result<Profile> built = Profile::load_file(binary.string());
  EXPECT_TRUE(built.ok()) << built.status().to_string();
  Result<Profile> parsed = profile_from_json(read_text(json_path));
  EXPECT_TRUE(parsed.ok()) << json_path << ": " << parsed.status().to_string();
  if (!built.ok() || !parsed.ok())
    return *Profile::from_object({});
  EXPECT_EQ(*profile_to_json(*built), *profile_to_json(*parsed)) << json_path;
  return *built;
}

TEST(ShippedProfiles, ReferenceProfilesLoadAndAreMarkedFromSpecification) {
  const std::vector<fs::path> files = json_files("reference");
  ASSERT_GE(files.size(), 3u);
  const std::string readme =
      read_text(fs::path(PSHARD_PROFILES_SOURCE_DIR) / "reference/README.md");
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    const Profile p = load_both(file);
    const fb::ProfileT& d = p.data();
    ASSERT_TRUE(d.machine && d.machine->cpu && d.machine->gpu && d.cpu && d.gpu && d.transfers);
    EXPECT_EQ(d.machine->name, file.stem().string());
    EXPECT_EQ(d.machine->cpu->source, fb::Provenance::FromSpecification);
    EXPECT_EQ(d.machine->gpu->source, fb::Provenance::FromSpecification);
    EXPECT_EQ(d.cpu->source, fb::Provenance::FromSpecification);
    EXPECT_EQ(d.gpu->source, fb::Provenance::FromSpecification);
    EXPECT_EQ(d.transfers->source, fb::Provenance::FromSpecification);
    EXPECT_NE(readme.find(file.stem().string()), std::string::npos) << "no sources in README.md";

    // Every question the estimator asks has an answer, within physical bounds.
    const ProfileLookup look(p);
    for (Load load : {Load::kIdle, Load::kUnderLoad}) {
      const double h2d = *look.transfer_bandwidth(Direction::kHostToDevice, 64u << 20,
                                                  HostMemoryKind::kPinned, load);
      EXPECT_GT(h2d, 1e9);
      EXPECT_LT(h2d, 64e9); // PCIe 5.0 x16 is 63 GB/s per direction
      EXPECT_GT(*look.cpu_matmul_flops(TensorType::kQ4_0, 1, 64u << 20, 8, load), 1e9);
    }
    EXPECT_GT(*look.gpu_matmul_flops(TensorType::kF16, 512, 256u << 20), 1e12);
    // CUDA cards: every plan reserves the CUDA kernels' scratch (CudaWorkspace::kBytes,
    // runtime/backends/cuda/cuda_workspace.h; make_reference.py repeats it).
    EXPECT_EQ(d.machine->gpu->kernel_workspace_bytes,
              (4ull + 8 + 24) * (1 << 20) + 65536 * 4 + 65536 * 8 + 3 * 1024 * 8);
  }
}

TEST(ShippedProfiles, MeasuredProfilesLoadAndAreMarkedMeasured) {
  for (const fs::path& file : json_files("measured")) {
    SCOPED_TRACE(file.string());
    const Profile p = load_both(file);
    const fb::ProfileT& d = p.data();
    ASSERT_TRUE(d.machine && d.machine->cpu && d.cpu && d.run);
    EXPECT_EQ(d.machine->cpu->source, fb::Provenance::Measured);
    EXPECT_EQ(d.cpu->source, fb::Provenance::Measured);
    EXPECT_FALSE(d.run->command_line.empty());
    EXPECT_FALSE(d.run->quick) << "ship profiles from the default run, not --quick";
  }
}

} // namespace
} // namespace pshard
