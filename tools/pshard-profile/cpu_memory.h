// Memory bandwidth as the CPU kernels see it.
//
// Read bandwidth: threads sum-reduce disjoint parts of a buffer several times larger
// than the last-level cache (512 MiB by default), so every byte comes from DRAM. This is
// the roof of decode, which streams each weight once per token.
//
// Copy bandwidth: one thread memcpy's large chunks between two such buffers. This is the
// ceiling of the emulated GPU's copy engine, and the load used to emulate host->device
// DMA on machines without a GPU. Reported as bytes copied per second (each byte is read
// once and written once).
//
//   ReadBuffer buf(512 << 20);
//   fb::BandwidthPointT cell = time_read_bandwidth(buf, pool, 1.0);
#pragma once

#include "runtime/core/thread_pool.h"
#include "schemas/profile_generated.h"
#include "tools/pshard-profile/host_buffer.h"

#include <cstdint>

namespace pshard::profiling {

// Sums n 64-bit words; the result only keeps the compiler from dropping the reads.
uint64_t sum_words(const uint64_t* words, size_t n);

fb::BandwidthPointT time_read_bandwidth(const HostBuffer& buffer, ThreadPool& pool,
                                        double budget_s);

// memcpy of `chunk_bytes` at a time from src to dst, rotating through both.
fb::BandwidthPointT time_copy_bandwidth(const HostBuffer& src, HostBuffer& dst,
                                        uint64_t chunk_bytes, double budget_s);

} // namespace pshard::profiling
