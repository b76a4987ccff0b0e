#!/usr/bin/env bash
# The runtime under AddressSanitizer and UBSan, and its loaders fuzzed: what
# the ctest entry runtime-sanitizers runs (issue 20, part 2). The runtime
# builds alone (no MLIR), with clang, in BUILD (default build/runtime-asan):
#   1. its unit tests (mwrt-unittests) under ASan + UBSan, any report fatal;
#   2. mw-run, end to end under ASan + UBSan: trains the committed seed
#      plan corpus/plan/mlp-train.mwplan for 3 steps, saves its weights and
#      optimizer state, and resumes from them for 2 more (a plan format
#      change must regenerate the seed: docs/runtime.md);
#   3. each libFuzzer harness (plan_fuzzer, safetensors_fuzzer) over its
#      committed corpus (runtime/fuzz/corpus/*: every seed must pass), then
#      for MWRT_FUZZ_SECONDS (default 20) seconds of new inputs from it, in a
#      scratch copy so the repository's corpus stays as committed.
# A crash, a sanitizer report or a broken contract fails the run and leaves
# the input in BUILD/fuzz-<harness>/ (crash-*, the reproducer).
# Usage: runtime/fuzz/run-sanitized.sh [BUILD]
set -eEuo pipefail
# Say which step failed: ctest shows only this script's output.
trap 'echo "runtime-sanitizers: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runtime=$(cd "$here/.." && pwd)
build=${1:-$runtime/../build/runtime-asan}
mkdir -p "$build" && build=$(cd "$build" && pwd) # the harnesses run from their work folders
seconds=${MWRT_FUZZ_SECONDS:-20}
cc=$(command -v clang-14 || command -v clang)
cxx=$(command -v clang++-14 || command -v clang++)
if [ -z "$cc" ] || [ -z "$cxx" ]; then
  echo "runtime-sanitizers: no clang (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
cmake -G Ninja -S "$runtime" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" "${launcher[@]}" \
  -DMWRT_CUDA=OFF -DMWRT_MPI=OFF -DMWRT_SANITIZE=ON -DMWRT_FUZZ=ON >/dev/null
ninja -C "$build" mwrt-unittests mw-run plan_fuzzer safetensors_fuzzer | tail -1

# allocator_may_return_null: a test asks for 32 PiB on purpose and expects
# the allocation to fail, not ASan to abort.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
echo "== mwrt-unittests under ASan + UBSan"
"$build/bin/mwrt-unittests" --gtest_brief=1

echo "== mw-run under ASan + UBSan (train, save, resume)"
"$build/bin/mw-run" "$here/corpus/plan/mlp-train.mwplan" --device cpu --steps 3 \
  --save-weights "$build/mw-run-weights.safetensors" >/dev/null
"$build/bin/mw-run" "$here/corpus/plan/mlp-train.mwplan" --device cpu --steps 2 \
  --weights "$build/mw-run-weights.safetensors" \
  --save-weights "$build/mw-run-resumed.safetensors" >/dev/null

# shellcheck source=fuzz-one.sh
. "$here/fuzz-one.sh"
for harness in plan safetensors; do
  fuzz_one runtime-sanitizers "$build/bin/${harness}_fuzzer" \
    "$here/corpus/$harness" "$build/fuzz-$harness" "$seconds" 65536
done
echo "runtime-sanitizers: OK"
