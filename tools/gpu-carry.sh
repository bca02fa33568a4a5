#!/usr/bin/env bash
# gpu-carry.sh [ARCH] — builds, on this machine, everything tools/gpu-check.sh needs on a
# bare GPU machine (docs/cuda.md, "Running it from a build made elsewhere") and gathers it
# into one flat folder, build-gpu-carry/, small enough to travel with the working tree.
#
#   bash tools/gpu-carry.sh 90          # sm_90 (H200); 86, 89, 120 for client cards
#   # then the device tool's run: "bash tools/gpu-session.sh", carrying build-gpu-carry
#
# Release, without the MLIR part (pshard-compile plans without it), FlatBuffers,
# GoogleTest and the CUDA runtime linked statically: the binaries need only glibc,
# libstdc++, the toolkit's libcublasLt (the plugin and the CUDA tests) and what the
# folder bundles (libstb, which libpshard.so links for images). The script
# strips the binaries, carries the shared models the CUDA tests read (built to look for
# them in /tmp/pshard-shared, where gpu-session.sh puts them), checks the folder and the
# tracked files against the device tool's 64 MiB limit, and dry-runs gpu-session.sh on
# it (emu stands in for the GPU), so a device session starts with binaries known to load
# and a check known to finish.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
arch=${1:-90}
build="$root/build-gpu"
carry="$root/build-gpu-carry"
limit_mib=64
shared_on_device=/tmp/pshard-shared # baked into the tests (PSHARD_SHARED_DIR)
shared_models=(stories260K.gguf stories260K-Q8_0-mixed.gguf stories260K-moe4x2-exact.gguf)

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES="$arch" -DPSHARD_BUILD_COMPILER=OFF \
  -DPSHARD_SHARED_DIR="$shared_on_device" >/dev/null
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
strip --strip-unneeded "$carry"/* # symbols are not needed there; the carry limit is
mkdir -p "$carry/shared-models"
for m in "${shared_models[@]}"; do
  [[ -f $root/../shared/models/$m ]] && cp "$root/../shared/models/$m" "$carry/shared-models/"
done
echo "$shared_on_device" >"$carry/shared-dir.txt"
# A bare machine provides glibc, libstdc++, libgcc_s and the CUDA toolkit's cuBLAS; any
# other shared library a binary links (Debian's libstb for images) travels in the folder,
# where gpu-check.sh puts it on LD_LIBRARY_PATH with libpshard.so.
base='^(linux-vdso|/lib64/ld-linux|libc\.|libm\.|librt\.|libpthread\.|libdl\.|libgcc_s\.|libstdc\+\+\.|libcublasLt\.|libcublas\.|libpshard\.so)'
for f in "$carry"/*; do
  [[ -f $f && -x $f ]] || continue # the binaries and libraries, not the models
  { ldd "$f" 2>/dev/null || true; } | awk '$2 == "=>" { print $1, $3 }' | { grep -Ev "$base" || true; } |
    while read -r name path; do
      if [[ ! -f $path ]]; then
        echo "gpu-carry: $(basename "$f") needs $name, not found here either" >&2
        exit 1
      fi
      [[ -f $carry/$name ]] || { cp -L "$path" "$carry/$name"; echo "gpu-carry: bundled $name"; }
    done
done
mib=$(du -sm "$carry" | cut -f1)
tracked_mib=$(($(cd "$root" && git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -n1 | cut -f1) >> 20))
if ((mib + tracked_mib + 2 >= limit_mib)); then
  echo "gpu-carry: $carry ($mib MiB) and the tracked files ($tracked_mib MiB) pass the" \
    "${limit_mib} MiB the device tool carries" >&2
  exit 1
fi

# The session itself, here, on the carried files (emu for the GPU, shrunk models).
dry="$build/dry-run-out"
rm -rf "$dry"
PSHARD_CHECK_DRY_RUN=1 OUT="$dry" bash "$root/tools/gpu-session.sh" >"$build/dry-run.log" 2>&1 ||
  { echo "gpu-carry: the dry run of gpu-session.sh failed (see $build/dry-run.log)" >&2; exit 1; }
for f in gpu-check.json gpu-check.txt gpu-check.log gpu-check.tgz; do
  [[ -s $dry/$f ]] || { echo "gpu-carry: the dry run brought no $f back" >&2; exit 1; }
done
echo "gpu-carry: $carry ($mib MiB, sm_$arch) is ready; the session's dry run passed."
echo "Device run: command \"bash tools/gpu-session.sh\", carry [\"build-gpu-carry\"], timeout_s 580"
