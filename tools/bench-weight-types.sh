#!/usr/bin/env bash
# The weight-type benchmark behind the README's pshard-bench table (issue: every weight
# type at the memory-bandwidth limit). Writes the 1B-shaped model in every type and mix
# and the 8-expert MoE in Q8_0 (random weights: the shape is what decides the speed),
# then runs pshard-bench over them with the bandwidth probe in the same run.
#
#   tools/bench-weight-types.sh [BUILD_DIR=build-rel] [OUT_DIR=bench-models] [REPS=3]
#
# Extra pshard-bench flags through PSHARD_BENCH_FLAGS (e.g. "-t 1 --isa avx2").
set -euo pipefail
build=${1:-build-rel}
out=${2:-bench-models}
reps=${3:-3}
types=${PSHARD_BENCH_TYPES:-"f16 bf16 q8_0 q4_0 q4_1 q5_0 q5_1 iq4_nl mxfp4 q2_k q3_k_m q4_k_m q5_k_m q6_k q3_k q4_k q5_k iq4_xs"}
mk="$build/tools/pshard-mkmodel/pshard-mkmodel"
bench="$build/tools/pshard-bench/pshard-bench"
vocab="$(dirname "$0")/../../shared/vocab/ggml-vocab-llama-spm.gguf"
mkdir -p "$out"

dense=(--n-embd 2048 --n-layer 16 --n-head 32 --n-head-kv 8 --n-ff 8192 --vocab 32000)
moe=(--n-embd 1024 --n-layer 16 --n-head 16 --n-head-kv 8 --n-ff 4096 --n-expert 8
     --n-expert-used 2 --vocab 32000)
tok=()
[[ -f "$vocab" ]] && tok=(--tokenizer-from "$vocab")

models=()
for t in $types; do
  f="$out/llama1b-$t.gguf"
  [[ -f "$f" ]] || "$mk" -o "$f" "${dense[@]}" --type "$t" "${tok[@]}"
  models+=("$f")
done
f="$out/moe8x2-q8_0.gguf"
[[ -f "$f" ]] || "$mk" -o "$f" "${moe[@]}" --type q8_0 "${tok[@]}"
models+=("$f")

IFS=, ; list="${models[*]}" ; unset IFS
# shellcheck disable=SC2086
"$bench" -m "$list" -p 128 -n 32 -t 2 -r "$reps" ${PSHARD_BENCH_FLAGS:-}
