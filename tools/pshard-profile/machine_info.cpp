#include "tools/pshard-profile/machine_info.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/utsname.h>
#include <unistd.h>

namespace pshard::profiling {
namespace {

// The ISA features pshard's kernels dispatch on, or that explain their speed.
const std::set<std::string>& interesting_flags() {
  static const std::set<std::string> flags = {
      "sse4_2",     "avx",      "avx2",     "fma",         "f16c",        "avx_vnni",
      "avx512f",    "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16",
      "avx512vbmi", "amx_tile", "amx_bf16", "amx_int8",    "asimd",       "asimddp",
      "sve",        "sve2",     "i8mm",     "bf16"};
  return flags;
}

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b])))
    ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1])))
    --e;
  return s.substr(b, e - b);
}

// "32768K" → bytes
uint64_t parse_cache_size(const std::string& text) {
  uint64_t value = 0;
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])))
    value = value * 10 + static_cast<uint64_t>(text[i++] - '0');
  if (i < text.size() && (text[i] == 'K' || text[i] == 'k'))
    value *= 1024;
  else if (i < text.size() && (text[i] == 'M' || text[i] == 'm'))
    value *= 1024 * 1024;
  return value;
}

uint64_t largest_cache_bytes() {
  uint64_t best = 0;
  int best_level = 0;
  std::error_code ec;
  const std::filesystem::path dir = "/sys/devices/system/cpu/cpu0/cache";
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::ifstream level_file(entry.path() / "level"), size_file(entry.path() / "size");
    int level = 0;
    std::string size;
    if (!(level_file >> level) || !(size_file >> size))
      continue;
    if (level > best_level || (level == best_level && parse_cache_size(size) > best)) {
      best_level = level;
      best = parse_cache_size(size);
    }
  }
  return best;
}

} // namespace

fb::CpuInfoT describe_host_cpu() {
  fb::CpuInfoT cpu;
  cpu.source = fb::Provenance::Measured;
  std::ifstream in("/proc/cpuinfo");
  std::set<std::pair<std::string, std::string>> physical_cores; // (package, core id)
  std::set<std::string> flags;
  std::string line, package;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos)
      continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (key == "model name" && cpu.model.empty())
      cpu.model = value;
    else if ((key == "vendor_id" || key == "CPU implementer") && cpu.vendor.empty())
      cpu.vendor = value;
    else if (key == "physical id")
      package = value;
    else if (key == "core id")
      physical_cores.insert({package, value});
    else if ((key == "flags" || key == "Features") && flags.empty()) {
      std::istringstream words(value);
      std::string word;
      while (words >> word)
        if (interesting_flags().count(word))
          flags.insert(word);
    }
  }
  cpu.isa_features.assign(flags.begin(), flags.end());
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  cpu.logical_cpus = online > 0 ? static_cast<uint32_t>(online) : 1;
  cpu.cores =
      physical_cores.empty() ? cpu.logical_cpus : static_cast<uint32_t>(physical_cores.size());
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    cpu.ram_bytes = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  cpu.llc_bytes = largest_cache_bytes();
  return cpu;
}

std::string describe_host_os() {
  struct utsname u {};
  if (::uname(&u) != 0)
    return "";
  return std::string(u.sysname) + " " + u.release + " " + u.machine;
}

bool nvidia_gpu_visible() {
  std::error_code ec;
  const std::filesystem::path dir = "/proc/driver/nvidia/gpus";
  return std::filesystem::is_directory(dir, ec) &&
         std::filesystem::directory_iterator(dir, ec) != std::filesystem::directory_iterator();
}

std::string default_machine_name(const fb::CpuInfoT& cpu, bool has_gpu) {
  std::string slug;
  for (char c : cpu.model) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u))
      slug += static_cast<char>(std::tolower(u));
    else if (!slug.empty() && slug.back() != '-')
      slug += '-';
    if (slug.size() >= 32)
      break;
  }
  while (!slug.empty() && slug.back() == '-')
    slug.pop_back();
  if (slug.empty())
    slug = "cpu";
  return slug + "-" + std::to_string(cpu.logical_cpus) + "cpu" + (has_gpu ? "" : "-nogpu");
}

} // namespace pshard::profiling
