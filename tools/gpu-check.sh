#!/usr/bin/env bash
# gpu-check.sh RESULTS_DIR — the CUDA backend's check on a machine with an NVIDIA GPU.
#
# In about 8 minutes (the runs stop at PSHARD_CHECK_SECONDS; tests, profile and compiles
# have timeouts of their own), downloading nothing:
#   1. finds or builds the binaries (CUDA for this GPU's architecture only),
#   2. runs the GPU tests (device contract, conformance against the CPU, plan invariance;
#      the MoE dispatch's conformance as its own row),
#   3. profiles the GPU and CPU (pshard-profile --backend cuda) and prints the
#      grouped-expert cells it measured,
#   4. generates an 8B-shaped model (Llama-3-8B geometry) in F16 and Q8_0, and a
#      Qwen3-30B-A3B-shaped qwen3moe model in Q4_0 (q/k norms, NeoX RoPE, 128 experts);
#      two small MoE models (top-8 of 16, top-2 of 8) run greedily on cuda and on cpu,
#      their texts compared, and the top-2 one's embedding (pshard-run --embedding),
#   5. compiles them for budgets 2, 4, 8 GiB and full residency, searched and (the 8B
#      shapes) with each forced strategy (gpu-only, static, dynamic, layers),
#   6. runs pshard-run with each plan (prompt of ~1024 tokens, then decode), and
#      compares the two transfer modes (cudaHostRegister vs pinned staging),
# then prints a table and writes RESULTS_DIR/gpu-check.json (and every run's own JSON
# under RESULTS_DIR/runs/). Runs are ordered by importance (every model fully resident
# first, the Qwen3-30B-A3B shape leading); when the time budget is nearly spent the rest
# are recorded as skipped rather than overrunning. On a device machine, run it through
# tools/gpu-session.sh, which also brings the results back.
#
# Environment:
#   PSHARD_BUILD_DIR     binaries made elsewhere: a build folder, or the flat folder
#                        tools/gpu-carry.sh makes, the CUDA plugin libpshard_cuda.so
#                        among them (built with -DPSHARD_BUILD_COMPILER=OFF they need only
#                        libc, libstdc++ and — the plugin — libcublasLt here); without it,
#                        this script configures and builds (needs FlatBuffers, CLI11 and
#                        GoogleTest on this machine)
#   PSHARD_CUDA_ARCH     CUDA architecture to build (default: nvidia-smi's, else 90)
#   PSHARD_CHECK_SECONDS when the runs stop being started (default 450 s from the start)
#   PSHARD_CHECK_DENSE=1 write random weights (default: sparse files, zero weights —
#                        same bytes moved and multiplied, much faster to make)
#   PSHARD_CHECK_SCHEDULES  a folder of llama8b-<f16|q8_0>-<strategy>.pshard and
#                        qwen3moe30b-q4_0-auto.pshard compiled elsewhere
#                        from this machine's profile, instead of compiling here (needed
#                        only when pshard-compile cannot run here, e.g. one built with
#                        the MLIR part links LLVM); the models are deterministic
#   PSHARD_CHECK_DRY_RUN=1  no GPU needed: the emu backend stands in for cuda and the
#                        model is shrunk (checks this script on a CPU-only machine)
set -euo pipefail

usage() { echo "usage: $0 RESULTS_DIR" >&2; exit 2; }
[[ $# -eq 1 ]] || usage

RESULTS=$(mkdir -p "$1" && cd "$1" && pwd)
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
START=$(date +%s)
BUDGET_S=${PSHARD_CHECK_SECONDS:-450}
DRY=${PSHARD_CHECK_DRY_RUN:-0}
BACKEND=cuda
[[ $DRY == 1 ]] && BACKEND=emu
LOG="$RESULTS/gpu-check.log"
mkdir -p "$RESULTS/runs" "$RESULTS/work"
: >"$LOG"

say() { printf '[%4ds] %s\n' "$(($(date +%s) - START))" "$*" | tee -a "$LOG" >&2; }
elapsed() { echo $(($(date +%s) - START)); }
time_left() { echo $((BUDGET_S - $(elapsed))); }

# "key": number from a compact JSON text.
json_num() { grep -o "\"$1\":[-0-9.eE+]*" <<<"$2" | head -n1 | cut -d: -f2 || true; }

# A number with one decimal (divided by $2 when given), or "-" when absent.
fmt1() { [[ -n $1 ]] && awk -v v="$1" -v d="${2:-1}" 'BEGIN { printf "%.1f", v / d }' || echo -; }

# --- 1. binaries -------------------------------------------------------------------
detect_arch() {
  local cap
  if [[ -n ${PSHARD_CUDA_ARCH:-} ]]; then
    echo "$PSHARD_CUDA_ARCH"
  elif cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1) &&
    [[ $cap =~ ^[0-9]+\.[0-9]+$ ]]; then
    echo "${cap/./}"
  else
    echo 90
  fi
}

BUILD=${PSHARD_BUILD_DIR:-}
if [[ -z $BUILD ]]; then
  ARCH=$(detect_arch)
  BUILD="$RESULTS/build"
  say "building for sm_$ARCH in $BUILD"
  if ! cmake -S "$REPO" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="$ARCH" >>"$LOG" 2>&1; then
    say "configure failed (see $LOG): build elsewhere and set PSHARD_BUILD_DIR (docs/cuda.md)"
    exit 1
  fi
  ninja -C "$BUILD" pshard-run pshard-compile pshard-mkmodel pshard-profile pshard_cuda \
    cuda_device_test cuda_conformance_test cuda_plan_invariance_test \
    cuda_moe_grouped_plan_test >>"$LOG" 2>&1 ||
    { say "build failed (see $LOG)"; exit 1; }
fi

# Absolute, so the paths found below (the plugin's above all) hold wherever they are used.
BUILD=$(cd "$BUILD" && pwd)

# A binary by name anywhere under the build folder (a carried flat folder works too).
bin() {
  local found
  found=$(find "$BUILD" -name "$1" -type f -perm -u+x 2>/dev/null | head -n1)
  [[ -n $found ]] || { say "missing binary $1 under $BUILD"; return 1; }
  echo "$found"
}
RUN=$(bin pshard-run)
# pshard-run loads libpshard.so; a carried build folder's RPATH points elsewhere.
LIBPSHARD=$(find "$BUILD" -name 'libpshard.so*' 2>/dev/null | head -n1)
if [[ -n $LIBPSHARD ]]; then
  LD_LIBRARY_PATH="$(dirname "$LIBPSHARD")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export LD_LIBRARY_PATH
fi
# The CUDA plugin, which pshard-run and pshard-profile dlopen for --backend cuda: named
# explicitly, so a carried folder's layout (or stale RUNPATHs) cannot hide it.
PLUGIN=$(find "$BUILD" -name libpshard_cuda.so -type f 2>/dev/null | head -n1)
if [[ -n $PLUGIN ]]; then
  export PSHARD_CUDA_PLUGIN="$PLUGIN"
  say "CUDA plugin: $PLUGIN"
else
  say "no libpshard_cuda.so under $BUILD: --backend cuda will fail (carry it, docs/cuda.md)"
fi
COMPILE=$(bin pshard-compile || true) # optional: see PSHARD_CHECK_SCHEDULES
MKMODEL=$(bin pshard-mkmodel)
PROFILE=$(bin pshard-profile)
# Name what a carried binary lacks here before anything fails obscurely; without the
# plugin's libraries nothing of the check can run on the GPU, so stop at once.
for b in "$RUN" "$LIBPSHARD" "$PLUGIN" "$COMPILE" "$MKMODEL" "$PROFILE" \
  $(find "$BUILD" -name 'cuda_*_test' -type f -perm -u+x 2>/dev/null); do
  [[ -n $b ]] || continue
  missing=$(ldd "$b" 2>/dev/null | awk '/not found/ { print $1 }' | tr '\n' ' ' || true)
  [[ -z $missing ]] && continue
  say "$(basename "$b") needs libraries this machine lacks: $missing"
  if [[ $b == "$PLUGIN" && $DRY != 1 ]]; then
    say "the CUDA plugin cannot load: put the folder of $missing on LD_LIBRARY_PATH (tools/gpu-session.sh looks for it)"
    exit 1
  fi
done

GPU_NAME=$(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null |
  head -n1 || true)
say "GPU: ${GPU_NAME:-none visible (dry run: $DRY)}"

# --- 2. GPU tests ------------------------------------------------------------------
TESTS_JSON=""
ROWS_JSON=""
write_summary() { # the JSON of whatever has run so far
  printf '{"gpu":"%s","backend":"%s","dry_run":%s,"elapsed_s":%d,' "${GPU_NAME:-}" "$BACKEND" \
    "$([[ $DRY == 1 ]] && echo true || echo false)" "$(elapsed)" >"$RESULTS/gpu-check.json"
  printf '"cuda_plugin":"%s","cuda_backend":"%s",' "${PLUGIN:-}" "${CUDA_BACKEND:-}" \
    >>"$RESULTS/gpu-check.json"
  printf '"tests":[%s],"runs":[%s]}\n' "${TESTS_JSON%,}" "${ROWS_JSON%,}" >>"$RESULTS/gpu-check.json"
}
# Rows: name, binary, gtest filter. Seconds each may take: the invariance test runs every
# plan of seven models; the MoE row is part of the conformance binary, run alone so its
# result stands on its own line.
declare -A TEST_TIMEOUT=([cuda_device_test]=45 [cuda_conformance_test]=90
  [cuda_moe_conformance]=60 [cuda_moe_grouped_plan_test]=20 [cuda_plan_invariance_test]=150)
# The conformance binary's MoE cases run once, in their own row.
TEST_ROWS=("cuda_device_test cuda_device_test *" "cuda_conformance_test cuda_conformance_test -*Moe*"
  "cuda_moe_conformance cuda_conformance_test *Moe*"
  "cuda_moe_grouped_plan_test cuda_moe_grouped_plan_test *"
  "cuda_plan_invariance_test cuda_plan_invariance_test *")
for row in "${TEST_ROWS[@]}"; do
  read -r t binary filter <<<"$row"
  exe=$(bin "$binary" || true)
  if [[ -z $exe ]]; then
    TESTS_JSON+="{\"test\":\"$t\",\"result\":\"missing\"},"
    continue
  fi
  say "test $t"
  status=passed
  log="$RESULTS/$t.log"
  # Generated models go to the work folder; shared ones are read at the folder the build
  # baked in (PSHARD_SHARED_DIR: gpu-session.sh puts the carried ones there).
  if ! (cd "$RESULTS/work" && timeout "${TEST_TIMEOUT[$t]}" "$exe" --gtest_filter="$filter" \
    --gtest_output="json:$RESULTS/$t.json") >"$log" 2>&1; then
    status=failed
  fi
  passed=$(grep -o '^\[  PASSED  \] [0-9]*' "$log" | grep -o '[0-9]*$' || true)
  skipped=$(grep -o '^\[  SKIPPED \] [0-9]* test' "$log" | head -n1 | grep -o '[0-9][0-9]*' || true)
  if [[ $status == passed && ${passed:-0} == 0 && ${skipped:-0} != 0 ]]; then
    status=skipped
  fi
  say "  $status (${passed:-0} passed, ${skipped:-0} skipped; $log)"
  TESTS_JSON+="{\"test\":\"$t\",\"result\":\"$status\",\"passed\":${passed:-0},"
  TESTS_JSON+="\"skipped\":${skipped:-0}},"
done
write_summary

# --- 3. profile --------------------------------------------------------------------
PROF="$RESULTS/machine.pshprof"
PROFILE_ARGS=(--budget 45) # seconds of measuring (wall clock); the full grid, prefill tiers included
[[ $DRY == 1 ]] && PROFILE_ARGS=(--quick)
say "profiling ($BACKEND)"
PROFILE_MODE=full
if ! timeout 150 "$PROFILE" -o "$PROF" --json "$RESULTS/machine.pshprof.json" --backend "$BACKEND" \
  "${PROFILE_ARGS[@]}" -q >>"$LOG" 2>&1; then
  # The quick grid (fewer types and sizes, the grouped and graph cells included) still
  # lets the models compile and run; only if it fails too is there nothing to plan with.
  say "pshard-profile (full grid) failed or overran (see $LOG): the quick grid instead"
  PROFILE_MODE=quick
  if ! timeout 90 "$PROFILE" -o "$PROF" --json "$RESULTS/machine.pshprof.json" \
    --backend "$BACKEND" --quick -q >>"$LOG" 2>&1; then
    say "pshard-profile failed (see $LOG); the test results are in $RESULTS/gpu-check.json"
    exit 1
  fi
fi
say "profile: $PROFILE_MODE grid"
# The grouped MoE cells (GpuMeasurements.grouped_expert, one object per cell in the JSON)
# and the per-kernel overhead inside a CUDA graph: printed, counted in the summary. emu
# has neither (no grouped kernel, no graphs): the row says so.
GROUPED="$RESULTS/grouped-experts.txt"
PROF_JSON=$(tr -d ' \n\t' <"$RESULTS/machine.pshprof.json")
grouped_cells=$(grep -o '"grouped_expert":\[[^]]*\]' <<<"$PROF_JSON" | tr '}' '\n' |
  grep -c '"n_tokens"' || true)
graph_s=$(json_num graph_launch_overhead_s "$PROF_JSON")
[[ $graph_s =~ ^0(\.0*)?$ ]] && graph_s="" # 0: not measured
launch_s=$(json_num launch_overhead_s "$PROF_JSON")
{
  printf 'grouped-expert cells: %s; per kernel: %s s launched, %s inside a graph\n' \
    "${grouped_cells:-0}" "${launch_s:-?}" "${graph_s:+$graph_s s}${graph_s:-not measured}"
  printf '%-8s %-7s %-10s %-9s %-8s %10s %10s\n' type kind rows×cols experts tokens 'us' 'GB/s'
  grep -o '"grouped_expert":\[[^]]*\]' <<<"$PROF_JSON" | tr '}' '\n' | grep '"n_tokens"' |
    while read -r cell; do
      printf '%-8s %-7s %-10s %-9s %-8s %10s %10s\n' \
        "$(grep -o '"weight_type":"\?[A-Za-z0-9_]*' <<<"$cell" | sed 's/.*:"\?//')" \
        "$(grep -q '"fused_gate_up":true' <<<"$cell" && echo gate+up || echo down)" \
        "$(json_num rows "$cell")x$(json_num cols "$cell")" \
        "$(json_num n_expert_used "$cell")/$(json_num n_expert "$cell")" \
        "$(json_num n_tokens "$cell")" "$(fmt1 "$(json_num seconds "$cell")" 1e-6)" \
        "$(fmt1 "$(json_num bytes_per_s "$cell")" 1e9)"
    done || true # no cells: grep finds nothing
} >"$GROUPED"
# The table is long (hundreds of cells): the log and its file hold it; the console
# gets its first rows, which the session's output tail has room for.
head -n 6 "$GROUPED" >&2
if [[ ${grouped_cells:-0} -gt 0 ]]; then
  grouped_result=ok
elif [[ $BACKEND == emu ]]; then
  grouped_result="ok (none: emu has no grouped MoE kernel)"
else
  grouped_result="failed: no grouped-expert cells in the cuda profile"
fi
say "grouped-expert cells: ${grouped_cells:-0} ($grouped_result)"
TESTS_JSON+="{\"test\":\"grouped_expert_cells\",\"result\":\"$grouped_result\","
TESTS_JSON+="\"cells\":${grouped_cells:-0},\"graph_launch_overhead_s\":${graph_s:-null}},"
write_summary

# --- 4. models ---------------------------------------------------------------------
# Llama-3-8B: n_embd 4096, 32 layers, 32 heads, 8 KV heads, FFN 14336, vocab 128256.
GEOMETRY=(--n-embd 4096 --n-layer 32 --n-head 32 --n-head-kv 8 --n-ff 14336 --vocab 128256
  --ctx 8192 --rope-freq-base 500000)
if [[ $DRY == 1 ]]; then
  GEOMETRY=(--n-embd 256 --n-layer 4 --n-head 8 --n-head-kv 2 --n-ff 512 --vocab 2048)
fi
# Qwen3-30B-A3B (the paper's MoE): qwen3moe, n_embd 2048, 48 layers, 32 query / 4 KV heads
# of 128, 128 experts of 768 with 8 used, per-head q/k norms, NeoX RoPE; Q4_0.
MOE_GEOMETRY=(--arch qwen3moe --n-embd 2048 --n-layer 48 --n-head 32 --n-head-kv 4 --head-dim 128
  --n-ff 768 --n-expert 128 --n-expert-used 8 --vocab 151936 --ctx 8192 --rope-freq-base 1000000)
if [[ $DRY == 1 ]]; then
  MOE_GEOMETRY=(--arch qwen3moe --n-embd 256 --n-layer 4 --n-head 8 --n-head-kv 2 --head-dim 32
    --n-ff 128 --n-expert 16 --n-expert-used 4 --vocab 2048)
fi
SPARSE=(--sparse)
[[ ${PSHARD_CHECK_DENSE:-0} == 1 ]] && SPARSE=()
# The models by key: f16 and q8_0 are the Llama-3-8B shape, moe the Qwen3-30B-A3B one.
model_file() { [[ $1 == moe ]] && echo "$RESULTS/work/qwen3moe30b-q4_0.gguf" ||
  echo "$RESULTS/work/llama8b-$1.gguf"; }
sched_file() { local m; m=$(model_file "$1"); echo "${m%.gguf}-$2.pshard"; }
for type in f16 q8_0; do
  say "pshard-mkmodel $type"
  "$MKMODEL" -o "$(model_file "$type")" --name "llama3-8b-shaped-$type" --type "$type" \
    "${GEOMETRY[@]}" "${SPARSE[@]}" >>"$LOG" 2>&1
done
say "pshard-mkmodel moe (qwen3moe, q4_0)"
"$MKMODEL" -o "$(model_file moe)" --name "qwen3-30b-a3b-shaped-q4_0" --type q4_0 \
  "${MOE_GEOMETRY[@]}" "${SPARSE[@]}" >>"$LOG" 2>&1

# The cuda backend through the plugin, before anything depends on it: "ok" on a GPU; in
# the dry run (no GPU) the plugin must still load and stop at the driver ("no CUDA device").
TINY="$RESULTS/work/tiny-f16.gguf"
"$MKMODEL" -o "$TINY" --type f16 --n-embd 256 --n-layer 2 --n-head 8 --n-head-kv 2 --n-ff 512 \
  --vocab 2048 >>"$LOG" 2>&1
if cuda_err=$("$RUN" -m "$TINY" -p a -n 1 -c 256 --backend cuda 2>&1 >/dev/null); then
  CUDA_BACKEND=ok
else
  CUDA_BACKEND=$(tail -n1 <<<"$cuda_err" | tr -d '"\\')
fi
say "cuda backend: $CUDA_BACKEND"

# Small MoE models (random weights, so greedy decoding has no ties to speak of) on the
# backend under test and on the CPU: the same text (on emu it must be: plans are
# bit-identical; on cuda a different token is flagged, its float sums differing from the
# CPU's by rounding). Top-8 of 16 experts and top-2 of 8, Q4_0 and Q8_0, compiled against
# this machine's profile for a budget that holds the whole model (its experts on the
# device); without pshard-compile here they run unscheduled (CPU only), and say so.
moe_text() { # model backend [schedule]: the generated text's JSON
  local sched=()
  [[ -n ${3:-} ]] && sched=(-s "$3" --vram 256M)
  "$RUN" -m "$1" "${sched[@]}" -p "the quick brown fox" -n 12 -c 256 --temp 0 --ignore-eos \
    --json --backend "$2" 2>>"$LOG" | tr -d '\n' | grep -o '"text": *"[^"]*"' | tail -n1 || true
}
moe_vs_cpu() { # name type n_expert n_used
  local name=$1 model="$RESULTS/work/moe-$1.gguf" sched="$RESULTS/work/moe-$1.pshard" a b res=""
  "$MKMODEL" -o "$model" --type "$2" --arch qwen3moe --n-embd 256 --n-layer 2 --n-head 8 \
    --n-head-kv 2 --head-dim 32 --n-ff 128 --n-expert "$3" --n-expert-used "$4" --vocab 2048 \
    >>"$LOG" 2>&1 || res="failed: pshard-mkmodel"
  if [[ -z $res ]] && ! "$COMPILE" -m "$model" --profile "$PROF" -o "$sched" --budgets 256M \
    -c 256 -q >>"$LOG" 2>&1; then
    sched=""
  fi
  if [[ -z $res ]]; then
    a=$(moe_text "$model" "$BACKEND" "$sched")
    b=$(moe_text "$model" cpu "$sched")
    if [[ -z $a || -z $b ]]; then
      res="failed: a run failed (see $LOG)"
    elif [[ $a == "$b" ]]; then
      res=ok
    elif [[ $BACKEND == emu ]]; then
      res="failed: emu and cpu differ"
    else
      res="differs from cpu (rounding?): $a vs $b"
    fi
    [[ -n $sched ]] || res+=" (unscheduled: no pshard-compile here, CPU only)"
  fi
  say "moe $name on $BACKEND vs cpu: $res"
  res=${res//\"/\'}
  TESTS_JSON+="{\"test\":\"moe_model_${name}_${BACKEND}_vs_cpu\",\"result\":\"$res\"},"
}
moe_vs_cpu q4_0-e16k8 q4_0 16 8
moe_vs_cpu q8_0-e8k2 q8_0 8 2

# Embeddings (pshard-run --embedding: the last hidden states brought back from the device
# and pooled on the host) of the top-2 model, on the backend under test and on the CPU:
# on emu the same vector exactly, on cuda within 1e-3 in every value of the unit vector.
embedding_vs_cpu() {
  local model="$RESULTS/work/moe-q8_0-e8k2.gguf" sched="$RESULTS/work/moe-q8_0-e8k2.pshard"
  local args=() a b res diff
  [[ -f $sched ]] && args=(-s "$sched" --vram 256M)
  a=$("$RUN" -m "$model" "${args[@]}" -p "the quick brown fox jumps over the lazy dog" -c 256 \
    --embedding --pooling mean --backend "$BACKEND" 2>>"$LOG" || true)
  b=$("$RUN" -m "$model" "${args[@]}" -p "the quick brown fox jumps over the lazy dog" -c 256 \
    --embedding --pooling mean --backend cpu 2>>"$LOG" || true)
  if [[ -z $a || -z $b ]]; then
    res="failed: a run failed (see $LOG)"
  else
    diff=$(paste <(tr ' ' '\n' <<<"$a" | grep .) <(tr ' ' '\n' <<<"$b" | grep .) |
      awk '{d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d} END {printf "%.2e", m}')
    if [[ $BACKEND == emu ]]; then
      [[ $a == "$b" ]] && res=ok || res="failed: emu and cpu differ by up to $diff"
    elif awk -v d="$diff" 'BEGIN { exit !(d < 1e-3) }'; then
      res="ok (largest difference $diff)"
    else
      res="failed: differs from cpu by up to $diff"
    fi
    [[ -n ${args[*]} ]] || res+=" (unscheduled: no pshard-compile here, CPU only)"
  fi
  say "embedding on $BACKEND vs cpu: $res"
  TESTS_JSON+="{\"test\":\"embedding_${BACKEND}_vs_cpu\",\"result\":\"${res//\"/\'}\"},"
}
embedding_vs_cpu
write_summary

# --- 5. schedules ------------------------------------------------------------------
CTX=2048
full_budget_gib() { # weights + 2 GiB for KV cache, activations, slots and workspace
  local bytes
  bytes=$(stat -c %s "$1")
  echo $(((bytes >> 30) + 3))
}
STRATEGIES=(auto gpu-only static dynamic layers)
if [[ -n ${PSHARD_CHECK_SCHEDULES:-} ]]; then
  say "using schedules from $PSHARD_CHECK_SCHEDULES"
  cp "$PSHARD_CHECK_SCHEDULES"/{llama8b,qwen3moe30b}-*.pshard "$RESULTS/work/" ||
    say "  no schedules there"
elif ! "$COMPILE" --help >/dev/null 2>&1; then
  say "pshard-compile does not start here ($(ldd "$COMPILE" 2>/dev/null | grep -c 'not found') \
libraries not found): compile elsewhere from $PROF and set PSHARD_CHECK_SCHEDULES"
  STRATEGIES=()
fi
for type in f16 q8_0 moe; do
  [[ ${#STRATEGIES[@]} -gt 0 && -z ${PSHARD_CHECK_SCHEDULES:-} ]] || break
  model=$(model_file "$type")
  budgets="2G,4G,8G,$(full_budget_gib "$model")G"
  [[ $DRY == 1 ]] && budgets="8M,16M,32M,64M"
  strategies=("${STRATEGIES[@]}")
  [[ $type == moe ]] && strategies=(auto)
  for s in "${strategies[@]}"; do
    say "pshard-compile $type --strategy $s --budgets $budgets"
    timeout 60 "$COMPILE" -m "$model" --profile "$PROF" -o "$(sched_file "$type" "$s")" \
      --budgets "$budgets" -c "$CTX" --strategy "$s" -q >>"$LOG" 2>&1 ||
      say "  compile failed (see $LOG)"
  done
done

# --- 6. runs -----------------------------------------------------------------------
PROMPT="$RESULTS/work/prompt-1024.txt"
# The generated vocabulary has a token per printable character, the copied ones a token
# per common word: about 1024 tokens either way (the table shows the exact count).
printf 'a%.0s' $(seq 1023) >"$PROMPT"
N_PREDICT=${PSHARD_CHECK_PREDICT:-16}


TABLE="$RESULTS/gpu-check.txt"
printf '%-7s %-9s %-8s %-9s %9s %9s %12s %15s %17s %s\n' model strategy budget transfer \
  'decode/s' 'TTFT ms' 'MiB stream/t' 'peak/budget MiB' 'pred/meas ms/pass' result >"$TABLE"

run_one() { # type strategy budget transfer
  local type=$1 s=$2 budget=$3 transfer=$4 name out compact res tier1
  name="$type-$s-$budget-$transfer"
  out="$RESULTS/runs/$name.json"
  local sched
  sched=$(sched_file "$type" "$s")
  if (($(time_left) < 20)); then
    res="skipped: time budget spent"
  elif [[ ! -f $sched ]]; then
    res="skipped: no schedule"
  elif PSHARD_CUDA_TRANSFER=$transfer timeout "$(($(time_left) < 90 ? $(time_left) : 90))" \
    "$RUN" -m "$(model_file "$type")" -s "$sched" --backend "$BACKEND" \
    --vram "$budget" -f "$PROMPT" -n "$N_PREDICT" -c "$CTX" --temp 0 --ignore-eos --json \
    >"$out" 2>"$RESULTS/runs/$name.err"; then
    res=ok
  else
    res="failed (runs/$name.err)"
  fi
  compact=""
  [[ $res == ok ]] && compact=$(tr -d ' \n\t' <"$out")
  # The decode plan: tier 1's line in stats.plans.
  tier1=$(tr '{' '\n' <<<"$compact" | grep '"tier":1,' | head -n1 || true)
  local tps ttft streamed passes peak vbudget pred meas per_tok
  tps=$(json_num predicted_per_second "$compact")
  ttft=$(json_num time_to_first_token_ms "$compact")
  peak=$(json_num peak_vram_bytes "$compact")
  vbudget=$(json_num vram_budget_bytes "$compact")
  # Per decode pass: the tier-1 plan's own bytes and passes (prefill passes excluded).
  streamed=$(json_num bytes_streamed "$tier1")
  passes=$(json_num passes "$tier1")
  pred=$(json_num predicted_ms_per_pass "$tier1")
  meas=$(json_num measured_ms_per_pass "$tier1")
  per_tok=""
  [[ -n $streamed && -n $passes && $passes != 0 ]] && per_tok=$((streamed / passes))
  printf '%-7s %-9s %-8s %-9s %9s %9s %12s %15s %17s %s\n' "$type" "$s" "$budget" "$transfer" \
    "$(fmt1 "$tps")" "$(fmt1 "$ttft")" "$(fmt1 "$per_tok" 1048576)" \
    "$([[ -n $peak ]] && echo "$((peak >> 20))/$((vbudget >> 20))" || echo -)" \
    "$(fmt1 "$pred")/$(fmt1 "$meas")" "$res" | tee -a "$TABLE" >&2
  ROWS_JSON+="{\"model\":\"$type\",\"strategy\":\"$s\",\"budget\":\"$budget\","
  ROWS_JSON+="\"transfer\":\"$transfer\",\"result\":\"$res\",\"decode_tokens_per_s\":${tps:-null},"
  ROWS_JSON+="\"time_to_first_token_ms\":${ttft:-null},\"prompt_tokens\":$(json_num prompt_n "$compact" | grep . || echo null),"
  ROWS_JSON+="\"bytes_streamed_per_decode_pass\":${per_tok:-null},\"peak_vram_bytes\":${peak:-null},"
  ROWS_JSON+="\"vram_budget_bytes\":${vbudget:-null},\"decode_predicted_ms_per_pass\":${pred:-null},"
  ROWS_JSON+="\"decode_measured_ms_per_pass\":${meas:-null}},"
}

BUDGETS=(2G 4G 8G)
if [[ $DRY == 1 ]]; then
  BUDGETS=(8M 16M 32M)
  FULL=(64M 64M)
else
  FULL=("$(full_budget_gib "$RESULTS/work/llama8b-f16.gguf")G"
    "$(full_budget_gib "$RESULTS/work/llama8b-q8_0.gguf")G")
fi
say "runs: searched plans fully resident (the Qwen3-30B-A3B shape first), then at 2/4/8 GiB, then the transfer comparison, graphs and forced strategies"
# The Qwen3-MoE shape: attention with q/k norms and NeoX RoPE, 128 routed experts. Fully
# resident it is the issue's 150 tok/s line: the row that must not be cut by the budget.
full_moe="$(full_budget_gib "$(model_file moe)")G"
[[ $DRY == 1 ]] && full_moe=64M
run_one moe auto "$full_moe" register
run_one q8_0 auto "${FULL[1]}" register
run_one f16 auto "${FULL[0]}" register
for type in moe q8_0 f16; do
  for b in "${BUDGETS[@]}"; do run_one "$type" auto "$b" register; done
done
# The transfer engine's two modes on the same plans (vs the register runs above).
run_one q8_0 auto "${BUDGETS[1]}" staging
run_one f16 auto "${BUDGETS[1]}" staging
# Decode passes as CUDA graphs (docs/cuda.md), off then on, on a fully resident Q8_0 plan
# (gpu-only at full residency: every sub-layer resident, nothing streamed). The transfer
# column names the mode (transfers are register: run_one hands it to PSHARD_CUDA_TRANSFER,
# which takes anything but "staging" as register); the log says how many passes each run
# replayed from graphs (graph_passes in runs/*.json).
for graphs in 0 1; do
  PSHARD_CUDA_GRAPHS=$graphs run_one q8_0 gpu-only "${FULL[1]}" "graphs-$graphs"
  graph_run="$RESULTS/runs/q8_0-gpu-only-${FULL[1]}-graphs-$graphs.json"
  replayed=$(json_num graph_passes "$(tr -d ' \n\t' 2>/dev/null <"$graph_run" || true)")
  say "  PSHARD_CUDA_GRAPHS=$graphs: ${replayed:-no} passes replayed as graphs"
done
for s in gpu-only static dynamic layers; do
  for type in q8_0 f16; do
    full=${FULL[0]}
    [[ $type == q8_0 ]] && full=${FULL[1]}
    for b in "${BUDGETS[@]}" "$full"; do run_one "$type" "$s" "$b" register; done
  done
done

# --- summary -----------------------------------------------------------------------
write_summary
cat "$TABLE"
say "done: $RESULTS/gpu-check.json, $TABLE"
