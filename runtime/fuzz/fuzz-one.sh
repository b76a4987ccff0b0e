# Sourced by runtime/fuzz/run-sanitized.sh and test/fuzz/run-fuzzers.sh.
# fuzz_one TAG BINARY CORPUS WORK SECONDS MAX_LEN: runs a libFuzzer harness
# over its committed CORPUS (every seed must pass: a failure stops the
# caller under set -e), then for SECONDS of new inputs grown from a copy of
# it in WORK, so the repository's corpus stays as committed. A crash, leak,
# timeout or out-of-memory input found fails with its path (the reproducer,
# left in WORK); TAG names the caller in that message.
fuzz_one() {
  local tag=$1 binary=$2 corpus=$3 work=$4 seconds=$5 max_len=$6
  local name found
  name=$(basename "$binary")
  rm -rf "$work" && mkdir -p "$work/corpus"
  cp "$corpus"/* "$work/corpus/"
  echo "== $name: the committed corpus, then ${seconds} s"
  (cd "$work" && "$binary" -runs=0 "$corpus" 2>&1 | tail -1)
  (cd "$work" && "$binary" -max_total_time="$seconds" -max_len="$max_len" \
      -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 corpus 2>&1 |
      grep -E "^(stat::number_of_executed_runs|stat::new_units_added|Done|==)" || true)
  # ls with several globs fails when any one matches nothing: find instead.
  found=$(find "$work" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' \
    -o -name 'timeout-*' -o -name 'oom-*' \) | head -1)
  if [ -n "$found" ]; then
    echo "$tag: $name found an input that breaks it: $found" >&2
    exit 1
  fi
}
