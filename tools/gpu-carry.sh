#!/usr/bin/env bash
# gpu-carry.sh [ARCH] — builds, on this machine, everything tools/gpu-check.sh needs on a
# bare GPU machine (docs/cuda.md, "Running it from a build made elsewhere") and gathers it
# into one flat folder, build-gpu-carry/, small enough to travel with the working tree.
#
#   bash tools/gpu-carry.sh 90          # sm_90 (H200); 86, 89, 120 for client cards
#   # then, on the GPU machine, carrying build-gpu-carry:
#   PSHARD_BUILD_DIR=build-gpu-carry bash tools/gpu-check.sh results
#
# Release, without the MLIR part (pshard-compile plans without it), FlatBuffers,
# GoogleTest and the CUDA runtime linked statically: the binaries need only glibc,
# libstdc++, the toolkit's libcublasLt (the plugin and the CUDA tests) and what the
# folder bundles (libstb, which libpshard.so links for images). The script
# checks the folder against the device tool's 64 MiB carry limit and dry-runs
# gpu-check.sh on it (emu stands in for the GPU), so a device session starts with
# binaries known to load and a check script known to finish.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-90}
build="$root/build-gpu"
carry="$root/build-gpu-carry"
limit_mib=64

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DPSHARD_BUILD_COMPILER=OFF >/dev/null
targets=(pshard-run pshard-compile pshard-mkmodel pshard-profile pshard pshard_cuda
  cuda_device_test cuda_conformance_test cuda_plan_invariance_test cuda_moe_grouped_plan_test)
ninja -C "$build" -j "$(nproc)" "${targets[@]}"

rm -rf "$carry"
mkdir -p "$carry"
for name in pshard-run pshard-compile pshard-mkmodel pshard-profile libpshard.so \
  libpshard_cuda.so cuda_device_test cuda_conformance_test cuda_plan_invariance_test \
  cuda_moe_grouped_plan_test; do
  file=$(find "$build" -name "$name" -type f | head -n1)
  [[ -n $file ]] || { echo "gpu-carry: $name was not built under $build" >&2; exit 1; }
  cp "$file" "$carry/"
done
# A bare machine provides glibc, libstdc++, libgcc_s and the CUDA toolkit's cuBLAS; any
# other shared library a binary links (Debian's libstb for images) travels in the folder,
# where gpu-check.sh puts it on LD_LIBRARY_PATH with libpshard.so.
base='^(linux-vdso|/lib64/ld-linux|libc\.|libm\.|librt\.|libpthread\.|libdl\.|libgcc_s\.|libstdc\+\+\.|libcublasLt\.|libcublas\.|libpshard\.so)'
for f in "$carry"/*; do
  ldd "$f" 2>/dev/null | awk '$2 == "=>" { print $1, $3 }' | { grep -Ev "$base" || true; } |
    while read -r name path; do
      if [[ ! -f $path ]]; then
        echo "gpu-carry: $(basename "$f") needs $name, not found here either" >&2
        exit 1
      fi
      [[ -f $carry/$name ]] || { cp -L "$path" "$carry/$name"; echo "gpu-carry: bundled $name"; }
    done
done
mib=$(du -sm "$carry" | cut -f1)
if ((mib >= limit_mib)); then
  echo "gpu-carry: $carry is $mib MiB, over the ${limit_mib} MiB carry limit" >&2
  exit 1
fi

# The check itself, here, on the carried files (emu for the GPU, shrunk models).
dry="$build/dry-run"
rm -rf "$dry"
PSHARD_CHECK_DRY_RUN=1 PSHARD_BUILD_DIR="$carry" bash "$root/tools/gpu-check.sh" "$dry" \
  >"$build/dry-run.log" 2>&1 ||
  { echo "gpu-carry: the dry run of gpu-check.sh failed (see $build/dry-run.log)" >&2; exit 1; }
echo "gpu-carry: $carry ($mib MiB, sm_$arch) is ready; gpu-check.sh dry run passed."
echo "On the GPU machine, carrying build-gpu-carry:"
echo "  PSHARD_BUILD_DIR=build-gpu-carry bash tools/gpu-check.sh results"
