#!/usr/bin/env bash
# gpu-session.sh — the one prepared command for a borrowed GPU machine (the device tool's
# `run`): it runs tools/gpu-check.sh on the binaries tools/gpu-carry.sh gathered here, and
# brings the results back through $OUT whatever happens.
#
#   # here, first:      bash tools/gpu-carry.sh 90
#   # device run:       command "bash tools/gpu-session.sh", carry ["build-gpu-carry"],
#   #                   timeout_s 580
#
# Before the check it makes the carried files runnable (modes may not survive the trip),
# finds the CUDA toolkit's libcublasLt (the plugin and the CUDA tests need it; where the
# toolkit lives differs between images) and puts the carried shared models where the
# carried tests look for them. The check runs under its own timeout, shorter than the
# tool's, so the packing below always happens: $OUT gets gpu-check.json, gpu-check.txt
# (the table), gpu-check.log and gpu-check.tgz (every file of the results but the
# generated models). The console ends with the table and the test rows, which the
# tool's output tail keeps.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
carry="$root/build-gpu-carry"
results="$root/gpu-results"
out=${OUT:-$root/gpu-session-out}
seconds=${PSHARD_SESSION_SECONDS:-540}
mkdir -p "$out"

[[ -d $carry ]] || { echo "gpu-session: no $carry: run tools/gpu-carry.sh here and carry it" >&2; exit 2; }
chmod +x "$carry"/* 2>/dev/null

# libcublasLt.so.13: the loader's cache, the usual toolkit folders, then pip's wheels.
lt=$(ldconfig -p 2>/dev/null | awk '/libcublasLt\.so\.13 / { print $NF; exit }')
[[ -n $lt ]] || lt=$(ls /usr/local/cuda*/lib64/libcublasLt.so.13 \
  /usr/local/cuda*/targets/x86_64-linux/lib/libcublasLt.so.13 /usr/local/cuda*/lib/libcublasLt.so.13 \
  2>/dev/null | head -n1)
if [[ -z $lt ]]; then
  for py in python3 /opt/torch/.venv/bin/python3; do
    site=$("$py" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null) || continue
    lt=$(find $site -name 'libcublasLt.so.13*' 2>/dev/null | head -n1)
    [[ -n $lt ]] && break
  done
fi
if [[ -n $lt ]]; then
  export LD_LIBRARY_PATH="$(dirname "$lt")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "gpu-session: libcublasLt: $lt"
else
  echo "gpu-session: libcublasLt.so.13 not found; the CUDA plugin will not load" >&2
fi

# The carried tests read the shared models at the folder gpu-carry.sh built them with.
if [[ -f $carry/shared-dir.txt ]]; then
  shared=$(cat "$carry/shared-dir.txt")
  mkdir -p "$shared/models" && cp "$carry"/shared-models/*.gguf "$shared/models/" 2>/dev/null &&
    echo "gpu-session: shared models in $shared/models"
fi
nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1 |
  head -n1

rm -rf "$results"
timeout -k 10 "$seconds" env PSHARD_BUILD_DIR="$carry" bash "$root/tools/gpu-check.sh" "$results"
rc=$?
[[ $rc == 124 || $rc == 137 ]] && echo "gpu-session: gpu-check.sh stopped at ${seconds} s" >&2

for f in gpu-check.json gpu-check.txt gpu-check.log; do
  [[ -f $results/$f ]] && cp "$results/$f" "$out/"
done
[[ -d $results ]] && tar czf "$out/gpu-check.tgz" --exclude=./work --exclude=./build -C "$results" .
echo "=== tests"
grep -o '"test":"[^"]*","result":"[^"]*"[^}]*' "$results/gpu-check.json" 2>/dev/null
echo "=== runs"
cat "$results/gpu-check.txt" 2>/dev/null
exit "$rc"
