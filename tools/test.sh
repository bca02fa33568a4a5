#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build
# everything with the tests, and run the whole suite three ways:
#   1. the normal build (RelWithDebInfo), every test;
#   2. an AddressSanitizer + UndefinedBehaviorSanitizer build, every test;
#   3. the GGUF reader's libFuzzer target for a bounded time (clang).
# PSHARD_TEST_FAST=1 runs only the first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)

# Seconds since the epoch time $1, for the per-phase times CI's log shows (and the README quotes).
elapsed() { echo $(($(date +%s) - $1)); }
start=$(date +%s)

run_suite() { # name, build dir, build target, ctest regex, extra cmake args...
  local name=$1 dir=$2 target=$3 regex=$4 t
  shift 4
  echo "=== pshard tests: $name ($dir)" >&2
  t=$(date +%s)
  cmake -S "$root" -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" --target "$target" -j "$jobs"
  echo "=== pshard time: $name build $(elapsed "$t") s" >&2
  t=$(date +%s)
  ctest --test-dir "$dir" -j "$jobs" --output-on-failure --timeout 900 -R "$regex" |
    tee "$dir/ctest-summary.log"
  echo "=== pshard time: $name tests $(elapsed "$t") s" >&2
  # ctest's "N% tests passed, F tests failed out of T" line, summed over the suites.
  local line
  line=$(grep -E "tests passed, [0-9]+ tests? failed out of [0-9]+" "$dir/ctest-summary.log" | tail -1)
  total_failed=$((total_failed + $(sed -E 's/.* ([0-9]+) tests? failed out of.*/\1/' <<<"$line")))
  total_run=$((total_run + $(sed -E 's/.*out of ([0-9]+).*/\1/' <<<"$line")))
}
total_run=0
total_failed=0

bash "$root/tools/install-deps.sh"
echo "=== pshard time: packages $(elapsed "$start") s" >&2

# The CUDA backend compiles (its tests skip without a GPU) for one architecture here to
# keep the build short; tools/gpu-check.sh builds for the GPU it runs on.
# Line tables only (-g1): file:line in backtraces and sanitizer reports for a quarter less
# compile time than full -g (variables for a debugger need a build of one's own).
run_suite main "$root/build-test" all . -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DCMAKE_CUDA_ARCHITECTURES="${PSHARD_TEST_CUDA_ARCHS:-86}"
if [[ "${PSHARD_TEST_FAST:-0}" != 1 ]]; then
  # -O1, as the sanitizers' own docs advise: half the build time of -O2 -g (4.6x on the
  # AVX-512 K-quant kernels), with file:line in every report.
  sanitizer_flags="-O1 -g1 -DNDEBUG"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite "asan+ubsan" "$root/build-asan" all . -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitizer_flags" \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitizer_flags" \
    -DPSHARD_SANITIZE=ON -DPSHARD_ENABLE_CUDA=OFF -DPSHARD_BUILD_COMPILER=OFF
  CC=clang CXX=clang++ run_suite fuzz "$root/build-fuzz" fuzz_all fuzz \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPSHARD_FUZZ=ON -DPSHARD_ENABLE_CUDA=OFF \
    -DPSHARD_BUILD_COMPILER=OFF
fi
echo "pshard: all test suites passed in $(elapsed "$start") s" >&2
echo "$((total_run - total_failed)) passed, $total_failed failed"
