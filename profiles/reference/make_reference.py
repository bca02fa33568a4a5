#!/usr/bin/env python3
"""Writes the reference profiles (profiles/reference/*.json) from public specifications.

These machines were not measured: every figure is a roofline built from the spec-sheet
numbers in MACHINES below (sources in README.md) and the stated efficiency assumptions,
and every part is marked "FromSpecification". Replace a reference profile with a measured
one (pshard-profile) as soon as such a machine is at hand.

    python3 profiles/reference/make_reference.py      # rewrites the JSON files beside it
"""
import json
import os

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30

# Grid: the same cells as a default pshard-profile run.
BASE_TYPES = ["F32", "F16", "BF16", "Q8_0", "Q4_0"]
# Types added in schema 1.2 (ggml's block bytes / values). Their cells are extrapolated
# from the base type nearest in bits per weight (EXTRAPOLATED_FROM): that type's kernel
# efficiency, with their own bytes per value; the ops strings and run notes say so.
NEW_TYPES = {"Q4_1": (20, 32), "Q5_0": (22, 32), "Q5_1": (24, 32), "Q2_K": (84, 256),
             "Q3_K": (110, 256), "Q4_K": (144, 256), "Q5_K": (176, 256), "Q6_K": (210, 256),
             "IQ4_NL": (18, 32), "IQ4_XS": (136, 256)}
TYPES = BASE_TYPES + list(NEW_TYPES)
BYTES_PER_VALUE = {"F32": 4.0, "F16": 2.0, "BF16": 2.0, "Q8_0": 34 / 32, "Q4_0": 18 / 32}
BYTES_PER_VALUE.update({t: b / v for t, (b, v) in NEW_TYPES.items()})


def nearest_base(wtype):
    """The base type nearest in bits per weight (ties: fewer bits), as the estimator borrows."""
    bits = BYTES_PER_VALUE[wtype] * 8
    return min(BASE_TYPES, key=lambda t: (abs(BYTES_PER_VALUE[t] * 8 - bits), BYTES_PER_VALUE[t]))


EXTRAPOLATED_FROM = {t: nearest_base(t) for t in NEW_TYPES}
EXTRAPOLATED_NOTE = ("cells of " + ", ".join(NEW_TYPES) + " extrapolated (not from any spec): "
                     "each the roofline of the base type nearest in bits per weight ("
                     + ", ".join(f"{t} from {b}" for t, b in EXTRAPOLATED_FROM.items())
                     + ") with the type's own bytes per value")
MATRIX_BYTES = [1 * MIB, 16 * MIB, 256 * MIB]
TOKENS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
LOAD_TOKENS = [1, 4, 16, 64, 256]
CTX_LENS = [256, 1024, 4096, 16384]
TRANSFER_BYTES = [4 * KIB, 64 * KIB, 1 * MIB, 16 * MIB, 64 * MIB]
COLS = 4096
ATTN = dict(n_heads=32, n_kv_heads=8, head_dim=128)

# Assumptions (README.md, "How the numbers are derived").
CPU_KERNEL_EFFICIENCY = {"F32": 0.5, "F16": 0.4, "BF16": 0.4, "Q8_0": 0.35, "Q4_0": 0.3}
CPU_KERNEL_EFFICIENCY.update({t: CPU_KERNEL_EFFICIENCY[b] for t, b in EXTRAPOLATED_FROM.items()})
DRAM_ACHIEVABLE = 0.70          # of theoretical DDR5 bandwidth, streaming reads
CACHE_BW_PER_CORE = 80e9        # bytes/s, last-level-cache reads per core
GPU_F32_EFFICIENCY = 0.70       # of FP32 shader peak (cuBLASLt SGEMM)
GPU_F16_EFFICIENCY = 0.60       # of dense FP16 tensor peak with FP32 accumulate
GPU_QUANT_EFFICIENCY = 0.40     # dequantize + FP16 tensor GEMM
GPU_DRAM_ACHIEVABLE = 0.85      # of VRAM theoretical bandwidth
GPU_LAUNCH_S = 5e-6
# The CUDA backend's fixed kernel scratch (runtime/backends/cuda/cuda_workspace.h,
# CudaWorkspace::kBytes): every GPU plan reserves it inside the budget. Keep in step.
CUDA_KERNEL_WORKSPACE_BYTES = (4 + 8 + 24) * 2**20 + 65536 * 4 + 65536 * 8 + 3 * 1024 * 8
# Schema 1.3 figures, EXTRAPOLATED (no card was measured, and no spec sheet states them):
# a grouped MoE launch (every routed expert of a pass in one kernel) is timed as the
# card's own matmul roofline over what it reads and computes, plus one launch; the
# per-kernel cost inside a CUDA graph is a conservative assumption (README.md).
GPU_GRAPH_LAUNCH_S = 2e-6
# Expert shapes (n_embd, expert FFN width, experts, experts per token): Qwen3-30B-A3B,
# Qwen3-235B-A22B, Mixtral-8x7B; with tokens per pass they span the cells' axes.
GROUPED_SHAPES = [(2048, 768, 128, 8), (4096, 1536, 128, 8), (4096, 14336, 8, 2)]
GROUPED_TYPES = BASE_TYPES  # other types: the estimator borrows the nearest in bits
GROUPED_NOTE = ("grouped MoE cells and graph_launch_overhead_s (schema 1.3) extrapolated "
                "(not measured, not from any spec): each grouped launch the roofline of the "
                "card's own matmul figures over the bytes of every routed expert the pass "
                "touches plus one launch, the graph overhead an assumed "
                f"{GPU_GRAPH_LAUNCH_S * 1e6:g} us per kernel")
PCIE_PINNED = {"HostToDevice": 0.82, "DeviceToHost": 0.80}  # of theoretical, per direction
PCIE_PAGEABLE = 0.45
LATENCY_S = {"Pinned": 8e-6, "Pageable": 12e-6}

MACHINES = [
    dict(
        name="laptop-rtx4060-8gb",
        description="Laptop: 8-core Zen 4 CPU (Ryzen 7 7840HS class), 32 GB DDR5-5600, "
                    "RTX 4060 Laptop GPU 8 GB on PCIe 4.0 x8",
        cpu=dict(model="AMD Ryzen 7 7840HS (reference)", vendor="AuthenticAMD", cores=8,
                 logical_cpus=16, ram_bytes=32 * GIB, llc_bytes=16 * MIB, ghz=4.5,
                 fp32_flops_per_cycle=32, dram_theoretical=89.6e9, per_thread_bw=25e9,
                 isa=["avx", "avx2", "avx512_bf16", "avx512_vnni", "avx512bw", "avx512f",
                      "avx512vl", "f16c", "fma"]),
        threads=[1, 2, 4, 8],
        gpu=dict(name="NVIDIA GeForce RTX 4060 Laptop GPU (reference)", cc=(8, 9), sms=24,
                 vram=8 * GIB, vram_bw=256e9, fp32=12.3e12, fp16_tensor=24.6e12,
                 pcie_gen=4, lanes=8)),
    dict(
        name="desktop-rtx4090-24gb",
        description="Desktop: 16-core Zen 4 CPU (Ryzen 9 7950X class), 64 GB DDR5-6000, "
                    "RTX 4090 24 GB on PCIe 4.0 x16",
        cpu=dict(model="AMD Ryzen 9 7950X (reference)", vendor="AuthenticAMD", cores=16,
                 logical_cpus=32, ram_bytes=64 * GIB, llc_bytes=64 * MIB, ghz=5.0,
                 fp32_flops_per_cycle=32, dram_theoretical=96e9, per_thread_bw=30e9,
                 isa=["avx", "avx2", "avx512_bf16", "avx512_vnni", "avx512bw", "avx512f",
                      "avx512vl", "f16c", "fma"]),
        threads=[1, 2, 4, 8, 16],
        gpu=dict(name="NVIDIA GeForce RTX 4090 (reference)", cc=(8, 9), sms=128,
                 vram=24 * GIB, vram_bw=1008e9, fp32=82.6e12, fp16_tensor=165.2e12,
                 pcie_gen=4, lanes=16)),
    dict(
        name="desktop-rtx5090-32gb",
        description="Desktop: 16-core Zen 5 CPU (Ryzen 9 9950X class), 64 GB DDR5-6000, "
                    "RTX 5090 32 GB on PCIe 5.0 x16",
        cpu=dict(model="AMD Ryzen 9 9950X (reference)", vendor="AuthenticAMD", cores=16,
                 logical_cpus=32, ram_bytes=64 * GIB, llc_bytes=64 * MIB, ghz=5.0,
                 fp32_flops_per_cycle=64, dram_theoretical=96e9, per_thread_bw=30e9,
                 isa=["avx", "avx2", "avx512_bf16", "avx512_vnni", "avx512bw", "avx512f",
                      "avx512vl", "f16c", "fma"]),
        threads=[1, 2, 4, 8, 16],
        gpu=dict(name="NVIDIA GeForce RTX 5090 (reference)", cc=(12, 0), sms=170,
                 vram=32 * GIB, vram_bw=1792e9, fp32=104.8e12, fp16_tensor=209.5e12,
                 pcie_gen=5, lanes=16)),
]

PCIE_GTS = {3: 8.0, 4: 16.0, 5: 32.0}


def pcie_theoretical(gen, lanes):
    return PCIE_GTS[gen] * 1e9 * lanes * 128 / 130 / 8   # bytes/s per direction


def cpu_read_bw(cpu, threads, minus=0.0):
    achievable = cpu["dram_theoretical"] * DRAM_ACHIEVABLE - minus
    return min(threads * cpu["per_thread_bw"], achievable)


def cpu_matmul_cell(cpu, wtype, n, nbytes, threads, dram_minus=0.0):
    rows = max(1, int(nbytes // (COLS * BYTES_PER_VALUE[wtype])))
    flops = 2.0 * rows * COLS * n
    used = min(threads, cpu["cores"])
    peak = used * cpu["ghz"] * 1e9 * cpu["fp32_flops_per_cycle"] * CPU_KERNEL_EFFICIENCY[wtype]
    if nbytes <= cpu["llc_bytes"] // 2:
        bw = used * CACHE_BW_PER_CORE
    else:
        bw = cpu_read_bw(cpu, threads, dram_minus)
    seconds = max(flops / peak, nbytes / bw)
    return dict(weight_type=wtype, n_tokens=n, matrix_bytes=nbytes, rows=rows, cols=COLS,
                threads=threads, seconds=seconds, flops_per_s=flops / seconds, repetitions=0)


def attention_cell(ctx, threads, peak_flops, bw, kv_bytes_per_value, launch=0.0):
    flops = 4.0 * ctx * ATTN["head_dim"] * ATTN["n_heads"]
    kv = 2.0 * ctx * ATTN["n_kv_heads"] * ATTN["head_dim"] * kv_bytes_per_value
    seconds = max(flops / peak_flops, kv / bw) + launch
    return dict(ctx_len=ctx, n_tokens=1, threads=threads, seconds=seconds,
                flops_per_s=flops / seconds, bytes_per_s=kv / seconds, repetitions=0, **ATTN)


def cpu_attention_cell(cpu, ctx, threads, dram_minus=0.0):
    used = min(threads, cpu["cores"])
    peak = used * cpu["ghz"] * 1e9 * cpu["fp32_flops_per_cycle"] * CPU_KERNEL_EFFICIENCY["F32"]
    return attention_cell(ctx, threads, peak, cpu_read_bw(cpu, threads, dram_minus), 4)


def gpu_peak(gpu, wtype):
    """Achieved FLOP/s of the GPU's matmuls of a type (the efficiencies above)."""
    return {"F32": gpu["fp32"] * GPU_F32_EFFICIENCY,
            "F16": gpu["fp16_tensor"] * GPU_F16_EFFICIENCY,
            "BF16": gpu["fp16_tensor"] * GPU_F16_EFFICIENCY}.get(
                wtype, gpu["fp16_tensor"] * GPU_QUANT_EFFICIENCY)


def gpu_matmul_cell(gpu, wtype, n, nbytes):
    rows = max(1, int(nbytes // (COLS * BYTES_PER_VALUE[wtype])))
    flops = 2.0 * rows * COLS * n
    seconds = max(flops / gpu_peak(gpu, wtype), nbytes / (gpu["vram_bw"] * GPU_DRAM_ACHIEVABLE)) + GPU_LAUNCH_S
    return dict(weight_type=wtype, n_tokens=n, matrix_bytes=nbytes, rows=rows, cols=COLS,
                threads=0, seconds=seconds, flops_per_s=flops / seconds, repetitions=0)


def grouped_expert_cell(gpu, wtype, shape, fused, n):
    """One grouped launch over n tokens routed uniformly: the expected distinct experts'
    matrices read once, every route's product computed, plus one launch."""
    embd, ff, n_expert, used = shape
    rows, cols = (ff, embd) if fused else (embd, ff)
    distinct = max(used, min(n_expert, round(n_expert * (1 - (1 - used / n_expert) ** n))))
    matrix_bytes = int(rows * cols * BYTES_PER_VALUE[wtype])
    per_route = 2 if fused else 1
    flops = 2.0 * rows * cols * n * used * per_route
    nbytes = distinct * matrix_bytes * per_route
    seconds = max(flops / gpu_peak(gpu, wtype),
                  nbytes / (gpu["vram_bw"] * GPU_DRAM_ACHIEVABLE)) + GPU_LAUNCH_S
    return dict(weight_type=wtype, n_tokens=n, n_expert=n_expert, n_expert_used=used,
                rows=rows, cols=cols, matrix_bytes=matrix_bytes, fused_gate_up=fused,
                distinct_experts=distinct, seconds=seconds, bytes_per_s=nbytes / seconds,
                repetitions=0)


def transfer_cell(direction, memory, nbytes, link):
    rate = link * (PCIE_PINNED[direction] if memory == "Pinned" else PCIE_PAGEABLE)
    seconds = LATENCY_S[memory] + nbytes / rate
    return dict(direction=direction, memory=memory, bytes=nbytes, seconds=seconds,
                bytes_per_s=nbytes / seconds, repetitions=0)


def bandwidth_cell(threads, buffer_bytes, rate):
    return dict(threads=threads, buffer_bytes=buffer_bytes, bytes_per_s=rate, repetitions=0)


def profile(m):
    cpu, gpu, threads = m["cpu"], m["gpu"], m["threads"]
    link = pcie_theoretical(gpu["pcie_gen"], gpu["lanes"])
    dma = link * PCIE_PINNED["HostToDevice"]          # host DRAM the copies take
    achievable = cpu["dram_theoretical"] * DRAM_ACHIEVABLE
    spec = "FromSpecification"
    big = MATRIX_BYTES[-1]
    return {
        "schema_major": 1,
        "schema_minor": 3,
        "machine": {
            "name": m["name"],
            "description": m["description"],
            "os": "",
            "cpu": {"model": cpu["model"], "vendor": cpu["vendor"], "cores": cpu["cores"],
                    "logical_cpus": cpu["logical_cpus"], "isa_features": cpu["isa"],
                    "ram_bytes": cpu["ram_bytes"], "llc_bytes": cpu["llc_bytes"], "source": spec},
            "gpu": {"name": gpu["name"], "compute_capability_major": gpu["cc"][0],
                    "compute_capability_minor": gpu["cc"][1], "sm_count": gpu["sms"],
                    "vram_bytes": gpu["vram"], "vram_bandwidth_bytes_per_s": gpu["vram_bw"],
                    "pcie_generation": gpu["pcie_gen"], "pcie_lanes": gpu["lanes"],
                    "driver_version": "", "toolkit_version": "", "source": spec,
                    "kernel_workspace_bytes": CUDA_KERNEL_WORKSPACE_BYTES},
            "gpu_status": "present (from specification)",
        },
        "run": {"tool": "profiles/reference/make_reference.py", "command_line":
                "python3 profiles/reference/make_reference.py", "created_utc": "",
                "duration_s": 0, "quick": False,
                "notes": "from specification: rooflines from the spec-sheet numbers and "
                         "assumptions in profiles/reference/README.md; not measured; "
                         + EXTRAPOLATED_NOTE + "; " + GROUPED_NOTE},
        "cpu": {
            "source": spec, "thread_counts": threads,
            "matmul_op": "roofline from specification (pshard::matmul not measured); "
                          "types added in schema 1.2 extrapolated, see run.notes",
            "matmul": [cpu_matmul_cell(cpu, t, n, b, th) for t in TYPES for b in MATRIX_BYTES
                       for th in threads for n in TOKENS],
            "attention_op": "roofline from specification (f32 KV)",
            "attention": [cpu_attention_cell(cpu, c, th) for th in threads for c in CTX_LENS],
            "read_bandwidth": [bandwidth_cell(th, 512 * MIB, cpu_read_bw(cpu, th)) for th in threads],
            "copy_bandwidth": [bandwidth_cell(1, 8 * MIB, min(cpu["per_thread_bw"], achievable / 2))],
        },
        "gpu": {
            "source": spec,
            "matmul_op": "roofline from specification (cuBLASLt not measured); "
                          "types added in schema 1.2 extrapolated, see run.notes",
            "matmul": [gpu_matmul_cell(gpu, t, n, b) for t in TYPES for b in MATRIX_BYTES
                       for n in TOKENS],
            "attention_op": "roofline from specification (f16 KV)",
            "attention": [attention_cell(c, 0, gpu["fp16_tensor"] * 0.3,
                                         gpu["vram_bw"] * GPU_DRAM_ACHIEVABLE, 2, GPU_LAUNCH_S)
                          for c in CTX_LENS],
            "read_bandwidth_bytes_per_s": gpu["vram_bw"] * GPU_DRAM_ACHIEVABLE,
            "launch_overhead_s": GPU_LAUNCH_S,
            "grouped_expert_op": "extrapolated from the matmul roofline (grouped kernels not "
                                 "measured), see run.notes",
            "grouped_expert": [grouped_expert_cell(gpu, t, sh, f, n) for t in GROUPED_TYPES
                               for sh in GROUPED_SHAPES for f in [True, False] for n in TOKENS],
            "graph_launch_overhead_s": GPU_GRAPH_LAUNCH_S,
        },
        "transfers": {
            "source": spec,
            "points": [transfer_cell(d, mem, b, link) for d in ["HostToDevice", "DeviceToHost"]
                       for mem in ["Pinned", "Pageable"] for b in TRANSFER_BYTES],
        },
        "under_load": {
            "source": spec,
            "load_description": "model: pinned host->device DMA at the PCIe rate, taking that "
                                "much of the host DRAM bandwidth",
            "load_bytes_per_s": dma,
            "cpu_matmul": [cpu_matmul_cell(cpu, t, n, big, th, dma) for t in TYPES
                           for th in threads for n in LOAD_TOKENS],
            "cpu_attention": [cpu_attention_cell(cpu, c, th, dma) for th in threads for c in CTX_LENS],
            "cpu_read_bandwidth": [bandwidth_cell(th, 512 * MIB, cpu_read_bw(cpu, th, dma))
                                   for th in threads],
            "compute_description": "model: memory-bound decode on every core, the copies keep "
                                   "at most half the host DRAM bandwidth",
            "transfers": [],  # filled by loaded_transfers()
            "copy_bandwidth": [bandwidth_cell(1, 8 * MIB, min(cpu["per_thread_bw"], achievable / 2) * 0.5)],
        },
    }


def loaded_transfers(m, p):
    """Transfers while the CPU decodes: the DMA keeps min(its rate, half the DRAM bandwidth)."""
    cpu = m["cpu"]
    half = cpu["dram_theoretical"] * DRAM_ACHIEVABLE / 2
    out = []
    for cell in p["transfers"]["points"]:
        seconds = cell["seconds"]
        rate = cell["bytes"] / seconds
        streaming = cell["bytes"] / (seconds - LATENCY_S[cell["memory"]])
        if streaming > half:
            seconds = LATENCY_S[cell["memory"]] + cell["bytes"] / half
            rate = cell["bytes"] / seconds
        out.append(dict(cell, seconds=seconds, bytes_per_s=rate))
    return out


def to_json(value, indent=0):
    """JSON with one measurement cell (a table of scalars) per line, so diffs stay readable."""
    pad = " " * indent
    if isinstance(value, dict):
        if all(not isinstance(v, (dict, list)) for v in value.values()):
            return json.dumps(value)
        items = [f'{pad} {json.dumps(k)}: {to_json(v, indent + 1)}' for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return json.dumps(value)
        items = [pad + " " + to_json(v, indent + 1) for v in value]
        return "[\n" + ",\n".join(items) + "\n" + pad + "]"
    return json.dumps(value)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    for m in MACHINES:
        p = profile(m)
        p["under_load"]["transfers"] = loaded_transfers(m, p)
        with open(os.path.join(here, m["name"] + ".json"), "w") as f:
            f.write(to_json(p) + "\n")


if __name__ == "__main__":
    main()
