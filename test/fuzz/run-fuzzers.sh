#!/usr/bin/env bash
# The compiler side's input readers fuzzed under AddressSanitizer and UBSan:
# what the ctest entry compiler-fuzzers runs (issue 20, part 2; the runtime's
# loaders are runtime/fuzz/run-sanitized.sh). Each harness is built with
# clang straight from its sources (no second CMake build of the compiler):
#   csv_fuzzer        mw-pack's CSV reader and the packer (lib/Planning, plain
#                     C++); its contract is in test/fuzz/csv_fuzzer.cpp;
#   deepspeed_fuzzer  the DeepSpeed configuration reader (lib/Zero), linked
#                     with Debian's libLLVM, which stays uninstrumented;
#   ir_fuzzer         MLIR parse + verify + --mw-train-pipeline on small
#                     steps, linked with the build's libMemwallCompiler.so
#                     (COMPILER_BUILD/lib) and Debian's MLIR, uninstrumented:
#                     blind mutation, catching crashes and silent failures.
# The corpora hold valid seeds and corrupted ones (regression inputs that
# must be rejected with a diagnostic, e.g. corpus/ir/bad-*.ir).
# Each runs over its committed corpus (test/fuzz/corpus/*: every seed must
# pass), then for MW_FUZZ_SECONDS (default 15) seconds of new inputs grown
# from it in a scratch copy, so the repository's corpus stays as committed.
# A crash, a sanitizer report or a broken contract fails the run and leaves
# the reproducer in BUILD/fuzz-<harness>/.
# Usage: test/fuzz/run-fuzzers.sh [BUILD [COMPILER_BUILD]]
#   (defaults build/compiler-fuzz and build)
set -eEuo pipefail
# Say which step failed: ctest shows only this script's output.
trap 'echo "compiler-fuzzers: failed (exit $?) at line $LINENO: $BASH_COMMAND" >&2' ERR
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/compiler-fuzz}
compiler_build=${2:-$root/build}
mkdir -p "$build" && build=$(cd "$build" && pwd) # the harnesses run from their work folders
compiler_build=$(cd "$compiler_build" 2>/dev/null && pwd || echo "$compiler_build")
seconds=${MW_FUZZ_SECONDS:-15}
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then
  echo "compiler-fuzzers: no clang++ (apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 1
fi
launcher=()
command -v ccache >/dev/null && launcher=(ccache)
llvm=/usr/lib/llvm-19
common=(-std=c++17 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined
        -fno-sanitize-recover=undefined -I"$root/include")
mkdir -p "$build/obj"

# build_harness NAME COMPILE_FLAGS LINK_FLAGS SOURCE...: objects (through
# ccache) instrumented for coverage, linked with libFuzzer's main.
build_harness() {
  local name=$1 compile=$2 link=$3
  shift 3
  local objects=() source object
  for source in "$@"; do
    object=$build/obj/$name-$(basename "${source%.cpp}").o
    # shellcheck disable=SC2086 # compile is a word list
    "${launcher[@]}" "$cxx" "${common[@]}" -fsanitize=fuzzer-no-link \
      -I"$llvm/include" $compile -c "$source" -o "$object"
    objects+=("$object")
  done
  # shellcheck disable=SC2086 # link is a word list
  "$cxx" "${common[@]}" -fsanitize=fuzzer "${objects[@]}" $link -o "$build/$name"
}

planning=()
for file in Csv Packer Instance Greedy SpanTree BestPacker CanonicalSearch ExactPacker; do
  planning+=("$root/lib/Planning/$file.cpp")
done
echo "== building the harnesses in $build"
build_harness csv_fuzzer "" "" "$here/csv_fuzzer.cpp" "${planning[@]}"
build_harness deepspeed_fuzzer "-fno-exceptions" \
  "-L$llvm/lib -Wl,-rpath,$llvm/lib -lLLVM" \
  "$here/deepspeed_fuzzer.cpp" "$root/lib/Zero/DeepSpeedConfig.cpp"
harnesses=(csv deepspeed)
if [ -f "$compiler_build/lib/libMemwallCompiler.so" ]; then
  # Debian's MLIR is built without RTTI and exceptions; so is this harness.
  build_harness ir_fuzzer "-fno-rtti -fno-exceptions" \
    "-L$compiler_build/lib -Wl,-rpath,$compiler_build/lib -lMemwallCompiler -L$llvm/lib -Wl,-rpath,$llvm/lib -lMLIR -lLLVM" \
    "$here/ir_fuzzer.cpp"
  harnesses+=(ir)
else
  echo "compiler-fuzzers: no $compiler_build/lib/libMemwallCompiler.so: ir_fuzzer skipped" >&2
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# shellcheck source=../../runtime/fuzz/fuzz-one.sh
. "$root/runtime/fuzz/fuzz-one.sh"
for harness in "${harnesses[@]}"; do
  fuzz_one compiler-fuzzers "$build/${harness}_fuzzer" "$here/corpus/$harness" \
    "$build/fuzz-$harness" "$seconds" 16384
done
echo "compiler-fuzzers: OK"
