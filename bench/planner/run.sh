#!/usr/bin/env bash
# Builds bench-planner and runs it on the shared benchmark data: every packer
# strategy on MiniMalloc's A-K and idealloc's real graphs, then the synthetic
# sweep of `best`. Usage: bench/planner/run.sh [DATA_DIR] [bench-planner flags]
# DATA_DIR defaults to ../shared/bench-data relative to the repository root;
# MW_BUILD_DIR (default build) names the build directory. Every flag goes to
# bench-planner as given; `--extra PATH` (repeatable) adds a CSV, or every
# *.csv of a directory, to the real graphs, e.g. --mw-plan-export files:
#   bench/planner/run.sh --extra step.csv --extra more-graphs/
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
data_dir=$root/../shared/bench-data
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  data_dir=$1
  shift
fi
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
ninja -C "$build_dir" bench-planner >/dev/null
echo "measured on $(git -C "$root" rev-parse --short HEAD)$([ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && echo " + working tree")"
exec "$build_dir/bin/bench-planner" "$data_dir" "$@"
