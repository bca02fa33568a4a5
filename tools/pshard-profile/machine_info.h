// What the host says about itself (Linux: /proc/cpuinfo, /sys, sysconf, uname), for the
// machine part of a measured profile. Anything unreadable is left empty or zero rather
// than failing the run: the measurements matter more than the labels.
#pragma once

#include "schemas/profile_generated.h"

#include <string>

namespace pshard::profiling {

fb::CpuInfoT describe_host_cpu();

// "Linux 6.1.0-18-amd64 x86_64"
std::string describe_host_os();

// Whether the NVIDIA driver reports any GPU (/proc/driver/nvidia/gpus), without
// needing the CUDA runtime: used only to word the "no GPU" status honestly.
bool nvidia_gpu_visible();

// A file-name-friendly machine kind from the CPU, e.g. "amd-epyc-2cpu-nogpu".
std::string default_machine_name(const fb::CpuInfoT& cpu, bool has_gpu);

} // namespace pshard::profiling
