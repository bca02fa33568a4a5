#!/usr/bin/env bash
# Installs the Debian packages pshard builds with. Safe to run again: it only
# calls apt-get when something is missing. Needs root (or sudo) on a fresh machine.
set -euo pipefail

packages=(
  cmake ninja-build g++ ccache pkg-config
  libgtest-dev libgmock-dev libbenchmark-dev
  libflatbuffers-dev flatbuffers-compiler libcli11-dev
  libpcre2-dev               # Unicode regular expressions of the BPE pre-tokenizers
  libicu-dev                 # Unicode data of the WordPiece normalizer (build time only)
  libcpp-httplib-dev nlohmann-json3-dev   # pshard-server: HTTP and JSON; routing profiles
  libstb-dev                 # stb_image: decoding PNG and JPEG images for vision models
  chromium                   # the chat page's test in a headless browser
  clang libclang-rt-14-dev   # libFuzzer and the sanitizer runtimes
  python3 python3-numpy   # numpy: the float64 reference forward pass in tests/tools
  python3-sentencepiece python3-protobuf  # the Unigram tokenizer's test trains models with it
)
# node and npm for the server's test with the official OpenAI JavaScript library: Debian's
# packages only where there is none (a NodeSource nodejs brings its own npm, and Debian's
# npm would conflict with it).
if ! command -v npm >/dev/null 2>&1; then
  packages+=(nodejs npm)
fi
# The planner compiler's MLIR (PSHARD_WITH_COMPILER=0 skips it: the compiler's MLIR
# half is then not built, everything else is).
if [[ "${PSHARD_WITH_COMPILER:-1}" == 1 ]]; then
  packages+=(libmlir-16-dev mlir-16-tools llvm-16-dev llvm-16-tools)
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "pshard: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) != 0 ]]; then sudo="sudo"; fi
$sudo apt-get update -q
# On CI's fresh machine (CI set, as CI services do), dpkg skips its fsync after each file:
# thousands of small files (npm's node packages, LLVM's headers) unpack faster, and
# a machine that crashes mid-install is thrown away anyway. Elsewhere dpkg stays careful.
unsafe_io=()
if [[ -n "${CI:-}" ]]; then unsafe_io=(-o Dpkg::Options::=--force-unsafe-io); fi
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends \
  "${unsafe_io[@]}" "${missing[@]}"
