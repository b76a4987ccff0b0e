#!/usr/bin/env bash
# Memwall beside its peers on the same graph (issue 19, part 3): GPT-2 small
# from transformers (eager attention, imported through python/memwall) and
# from mw-models (--attention=unfused), against PyTorch eager autograd's
# saved activations, AOTAutograd's min-cut partitioner at
# activation_memory_budget 1.0 ... 0.1 (saved bytes and recompute FLOPs,
# beside --mw-remat's auto at the same saved bytes), TorchInductor's kernels
# and bytes beside Memwall's plan, and XLA (jax, bench/peers/jax_gpt2.py: the
# same step, plain and written to save less) when it is installed
# (bench/peers/setup-jax.sh): its memory_analysis() temp bytes beside
# Memwall's arena. A benchmark, not a test: it asserts nothing and is not in
# ctest.
# Usage: bench/peers/run.sh [--layers N] [--seq S] [--budgets 1.0,0.5,...]
#          [--no-inductor] [--inductor-layers N] [--inductor-seq S] [--no-xla]
#          [--out DIR]
#   --layers          transformer blocks (default 12, GPT-2 small)
#   --seq             sequence length (default 1024; batch is 1, f32)
#   --budgets         activation_memory_budget values (default 1.0,0.9,...,0.1)
#   --no-inductor     skip TorchInductor (it compiles and runs the step for
#                     real: minutes on 2 cores)
#   --inductor-layers, --inductor-seq
#                     a smaller model for Inductor alone (default: --layers,
#                     --seq); the kernel table then says it is not comparable
#   --no-xla          skip XLA even where jax is installed
#   --out             records and the table (default $MW_BUILD_DIR/bench-peers)
# MW_BUILD_DIR (default build) names the build directory; MW_OPT, MW_MODELS and
# MW_TRANSLATE override the binaries (default $MW_BUILD_DIR/bin/...); MW_VENV
# names the Python environment with torch and transformers (default
# $MW_BUILD_DIR/venv); MW_JAX_VENV the one with jax (default
# $MW_BUILD_DIR/jax-venv, else MW_VENV's).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build_dir=${MW_BUILD_DIR:-$root/build}
layers=12
seq=1024
budgets=1.0,0.9,0.8,0.7,0.6,0.5,0.4,0.3,0.2,0.1
inductor=1
ind_layers=
ind_seq=
out=
xla=1
usage() { sed -n '13,30p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --layers) layers=${2:?--layers needs N}; shift 2 ;;
    --seq) seq=${2:?--seq needs S}; shift 2 ;;
    --budgets) budgets=${2:?--budgets needs a list}; shift 2 ;;
    --no-inductor) inductor=; shift ;;
    --inductor-layers) ind_layers=${2:?}; shift 2 ;;
    --inductor-seq) ind_seq=${2:?}; shift 2 ;;
    --no-xla) xla=; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "error: unknown argument '$1'" >&2; usage ;;
  esac
done
ind_layers=${ind_layers:-$layers}
ind_seq=${ind_seq:-$seq}
out=${out:-$build_dir/bench-peers}
venv=${MW_VENV:-$build_dir/venv}
py=$venv/bin/python
if ! [ -x "$py" ] || ! "$py" -c 'import torch, transformers' 2>/dev/null; then
  echo "error: $py cannot import torch and transformers (scripts/setup makes" \
       "\$MW_BUILD_DIR/venv; MW_VENV names another)" >&2
  exit 1
fi

if [ -z "${MW_OPT:-}" ] || [ -z "${MW_MODELS:-}" ] || [ -z "${MW_TRANSLATE:-}" ]; then
  if [ ! -f "$build_dir/build.ninja" ]; then
    cmake -G Ninja -S "$root" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  fi
  ninja -C "$build_dir" mw-models mw-opt mw-translate >/dev/null
fi
mw_opt=${MW_OPT:-$build_dir/bin/mw-opt}
mw_models=${MW_MODELS:-$build_dir/bin/mw-models}
mw_translate=${MW_TRANSLATE:-$build_dir/bin/mw-translate}

mkdir -p "$out"
log=$out/log.txt
: >"$log"
step() { echo "== $*" >&2; }
commit=$(git -C "$root" rev-parse --short HEAD)
[ -n "$(git -C "$root" status --porcelain 2>/dev/null)" ] && commit="$commit + working tree"
machine="$(nproc) CPUs ($(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
jax_line=$("$here/jax-python.sh" "$build_dir" "$py" "$xla")
jax_py=
case $jax_line in measured\ *) jax_py=${jax_line#measured }; jax_line=measured ;; esac
"$py" - "$out/meta.json" "$layers" "$seq" "$commit" "$machine" "$jax_line" <<'PY'
import json, sys
path, layers, seq, commit, machine, jax = sys.argv[1:]
json.dump({"layers": int(layers), "seq": int(seq), "commit": commit,
           "machine": machine, "jax": jax}, open(path, "w"))
PY

t0=$SECONDS
step "PyTorch: eager autograd and the min-cut partitioner (fake tensors)"
"$py" "$here/peers.py" remat --layers "$layers" --seq "$seq" --budgets "$budgets" \
  --json "$out/torch-remat.json" 2>>"$log"

step "import: transformers GPT2LMHeadModel, eager attention, through python/memwall"
"$py" "$here/peers.py" import --layers "$layers" --seq "$seq" \
  --json "$out/import.json" -o "$out/import.mlir" 2>>"$log"
"$mw_opt" "$out/import.mlir" --mw-autodiff="optimizer=adamw" -o "$out/step-import.mlir"

step "models: mw-models gpt --preset gpt2-small --attention=unfused"
"$mw_models" gpt --preset gpt2-small --attention=unfused --layers "$layers" --seq "$seq" \
  --batch 1 --train -o "$out/step-models.mlir"

for src in import models; do
  step "Memwall ($src): --mw-remat at PyTorch's saved bytes, the planned step's kernels"
  "$py" "$here/peers.py" memwall --source "$src" --step "$out/step-$src.mlir" \
    --torch "$out/torch-remat.json" --mw-opt "$mw_opt" --mw-translate "$mw_translate" \
    --json "$out/mw-$src.json" 2>>"$log"
done

rm -f "$out/inductor.json"
if [ -n "$inductor" ]; then
  step "TorchInductor (CPU): compile and run one fw+bw ($ind_layers layers, seq $ind_seq)"
  "$py" "$here/peers.py" inductor --layers "$ind_layers" --seq "$ind_seq" \
    --json "$out/inductor.json" 2>>"$log"
fi
rm -f "$out/xla.json"
if [ "$jax_line" = measured ]; then
  step "XLA (jax): the same step, plain and written to save less (compiled, not run)"
  "$jax_py" "$here/jax_gpt2.py" --layers "$layers" --seq "$seq" --time none \
    --json "$out/xla.json" 2>>"$log"
fi
step "done in $((SECONDS - t0)) s; log: $log"

"$py" "$here/peers.py" table "$out" | tee "$out/table.md"
