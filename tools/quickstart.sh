#!/usr/bin/env bash
# The README's first command: install what is missing, build pshard, and run its
# main job end to end on a small default model (the shared stories260K when it is
# there, otherwise a model pshard generates itself).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="${PSHARD_BUILD_DIR:-$root/build}"

bash "$root/tools/install-deps.sh"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPSHARD_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" --target pshard-run pshard-mkmodel -j "$(nproc)"

model="$root/../shared/models/stories260K.gguf"
if [[ ! -f "$model" ]]; then
  model="$build/models/quickstart.gguf"
  mkdir -p "$(dirname "$model")"
  echo "pshard: $root/../shared/models/stories260K.gguf not found; generating $model" >&2
  "$build/tools/pshard-mkmodel/pshard-mkmodel" -o "$model" --n-embd 128 --n-layer 4 \
    --n-head 8 --n-head-kv 4 --n-ff 352 --vocab 512 --type f16
fi
echo "pshard: running $model" >&2
"$build/tools/pshard-run/pshard-run" -m "$model" -p "Once upon a time" -n 64 --temp 0
