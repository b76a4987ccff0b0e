#!/usr/bin/env bash
# Per-rank model states of ZeRO steps beside the ZeRO paper's formulas, in one
# run: for each model and rank count, the training step (global batch = one
# sample per rank) goes through --mw-zero at stages 0-3 and
# --mw-memory-report=format=json; bench/zero/table.py prints the table.
# Usage: bench/zero/run.sh [--models a,b] [--ranks "1 8 64 1024"] [--out DIR]
#   --models  a comma-separated subset of: gpt2-xl, llama-7b-shaped,
#             gpt3-175b, or any mw-models preset (default: the three)
#   --ranks   the rank counts (default 1 8 64 1024)
#   --out     where the reports (zero-*.json) and table.md go (default
#             $MW_BUILD_DIR/bench-zero)
# MW_BUILD_DIR (default build) names the build directory; MW_OPT and
# MW_MODELS override the binaries (default $MW_BUILD_DIR/bin/mw-opt, ...).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
models=gpt2-xl,llama-7b-shaped,gpt3-175b
ranks="1 8 64 1024"
out=$build_dir/bench-zero
while [ $# -gt 0 ]; do
  case "$1" in
    --models) models=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "bench/zero/run.sh: unknown argument '$1' (see the header)" >&2; exit 2 ;;
  esac
done
mkdir -p "$out"
opt=${MW_OPT:-$build_dir/bin/mw-opt}
gen=${MW_MODELS:-$build_dir/bin/mw-models}
for m in ${models//,/ }; do
  family=${m%%-*}
  [ "$family" = gpt2 ] || [ "$family" = gpt3 ] && family=gpt
  for n in $ranks; do
    step=$out/$m-n$n.mlir
    "$gen" "$family" --preset "$m" --batch "$n" --train --emit-locations=false -o "$step"
    for s in 0 1 2 3; do
      start=$(date +%s.%N)
      "$opt" "$step" --mw-zero="stage=$s ranks=$n" \
        --mw-memory-report="format=json output=$out/zero-$m-n$n-s$s.json" -o /dev/null
      end=$(date +%s.%N)
      python3 -c "import json,sys; p=sys.argv[1]; d=json.load(open(p)); d['compile_s']=float(sys.argv[2]); d['model']=sys.argv[3]; json.dump(d, open(p,'w'))" \
        "$out/zero-$m-n$n-s$s.json" "$(echo "$end - $start" | bc)" "$m"
    done
    rm -f "$step"
  done
done
python3 "$here/table.py" "$out"/zero-*.json | tee "$out/table.md"
