#!/usr/bin/env bash
# The README's first command: install what is missing, build pshard, and run its main
# job end to end on a small default model (the shared stories260K when it is there,
# otherwise a model pshard generates itself):
#   1. a machine profile — the shipped reference laptop (RTX 4060, 8 GB) by default;
#      PSHARD_PROFILE=measure profiles this machine's emulated GPU instead (~20 s);
#   2. pshard-compile: plans for VRAM budgets below the model's size, tiers 1/4/16;
#   3. pshard-run with the plans on the GPU — CUDA when this build has it and a GPU is
#      present, else the emulated GPU (emu) — at a budget smaller than the model, then
#      once more with every sub-layer on the GPU so weights stream (trace written).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${PSHARD_BUILD_DIR:-$root/build}"

bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPSHARD_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target pshard-run pshard-mkmodel pshard-compile \
  pshard-profile pshard_shipped_profiles

model="$root/../shared/models/stories260K.gguf"
if [[ ! -f "$model" ]]; then
  model="$build/models/quickstart.gguf"
  mkdir -p "$(dirname "$model")"
  echo "pshard: $root/../shared/models/stories260K.gguf not found; generating $model" >&2
  "$build/tools/pshard-mkmodel/pshard-mkmodel" -o "$model" --n-embd 128 --n-layer 4 \
    --n-head 8 --n-head-kv 4 --n-ff 352 --vocab 512 --type f16
fi
work="$build/quickstart"
mkdir -p "$work"

backend=emu
if "$build/tools/pshard-run/pshard-run" --help 2>/dev/null | grep -q cuda &&
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 &&
  "$build/tools/pshard-run/pshard-run" -m "$model" -p x -n 1 --backend cuda >/dev/null 2>&1; then
  backend=cuda
fi

profile="$build/profiles/laptop-rtx4060-8gb.pshprof"
if [[ "${PSHARD_PROFILE:-}" == measure ]]; then
  profile="$work/emu.pshprof"
  echo "pshard: 1/3 profiling this machine's emulated GPU -> $profile" >&2
  "$build/tools/pshard-profile/pshard-profile" --backend emu --quick -q -o "$profile"
else
  echo "pshard: 1/3 using the shipped profile $profile (PSHARD_PROFILE=measure measures this machine)" >&2
fi

# The budgets are what the plans may use besides the GPU kernels' fixed scratch: none on
# the emulated GPU, CUDA's (the profile's kernel_workspace_bytes, ~37 MiB) on a real one.
scratch=0
[[ $backend == cuda ]] && scratch=38559744
kib() { echo "$((scratch / 1024 + $1))K"; }
budgets="0,$(kib 512),$(kib 768),$(kib 2048)"
vram=$(kib 768)
ws=(--kernel-workspace "$scratch")

echo "pshard: 2/3 compiling plans for $(basename "$model") ($(du -k "$model" | cut -f1) KiB)" >&2
"$build/tools/pshard-compile/pshard-compile" -m "$model" --profile "$profile" \
  -o "$work/model.pshard" --budgets "$budgets" --tiers 1,4,16 -c 256 "${ws[@]}"
"$build/tools/pshard-compile/pshard-compile" -m "$model" --profile "$profile" \
  -o "$work/model-streamed.pshard" --budgets "$vram" --tiers 1,4,16 -c 256 --strategy gpu-only \
  -q "${ws[@]}"

echo "pshard: 3/3 running on $backend with a VRAM budget of 768 KiB besides the kernels'" \
  "scratch (the model is larger)" >&2
"$build/tools/pshard-run/pshard-run" -m "$model" -s "$work/model.pshard" --backend "$backend" \
  --vram "$vram" -c 256 -p "Once upon a time" -n 64 --temp 0
echo "pshard: again with every sub-layer on the GPU, weights streamed ($work/trace.json)" >&2
"$build/tools/pshard-run/pshard-run" -m "$model" -s "$work/model-streamed.pshard" \
  --backend "$backend" --vram "$vram" -c 256 -p "Once upon a time" -n 64 --temp 0 \
  --trace "$work/trace.json"
