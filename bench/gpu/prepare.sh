#!/usr/bin/env bash
# Prepares the GPU kit: everything bench/gpu/device-check.sh needs on a GPU
# host that has CUDA and PyTorch but no MLIR (the device a session may be
# lent; DEVELOPERS.md, docs/runtime-cuda.md "First run on a GPU").
#
#   bench/gpu/prepare.sh [KIT]        (default KIT: build/gpu-kit)
#
# Run here, on a machine with this repository's build (build/bin: mw-opt,
# mw-models, mw-translate, mw-eval, mw-run). It
#   1. builds runtime/ alone with the CUDA backend into build-gpu/ (sm_90;
#      no MPI, no OpenBLAS: the device has neither) and copies mw-run and
#      mwrt-unittests into KIT/bin;
#   2. plans the steps the device runs (KIT/plans) and records their CPU
#      results with this build's mw-run (KIT/ref): training steps (f32
#      unfused and fused, bf16, fp16), offloaded forward and decode steps,
#      a KV-cache generation, a ZeRO-2 step with overlap for NCCL at world
#      size 1, and GPT-2 small for bench/gpu/run.sh;
#   3. writes KIT/MANIFEST (commit, tools, sizes).
# The kit travels to the device with the run tool's `carry` (it must stay
# under 64 MiB); device-check.sh is the one command run there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=$(realpath -m "${1:-$root/build/gpu-kit}")
bin=${MW_BIN:-$root/build/bin}
gpu_build=${MW_GPU_BUILD:-$root/build-gpu}
for t in mw-opt mw-models mw-translate mw-eval mw-run; do
  [ -x "$bin/$t" ] || { echo "prepare.sh: $bin/$t not built (scripts/setup)" >&2; exit 1; }
done
PATH=$bin:$PATH

echo "== runtime/ with CUDA into $gpu_build"
cmake -G Ninja -S "$root/runtime" -B "$gpu_build" -DCMAKE_BUILD_TYPE=Release \
  -DMWRT_CUDA=ON -DMWRT_MPI=OFF -DMWRT_OPENBLAS=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc" >/dev/null
ninja -C "$gpu_build" mw-run mwrt-unittests >/dev/null

rm -rf "$kit"
mkdir -p "$kit/bin" "$kit/plans" "$kit/ref" "$kit/work"
cp "$gpu_build/bin/mw-run" "$gpu_build/bin/mwrt-unittests" "$kit/bin/"
strip "$kit/bin/mw-run" "$kit/bin/mwrt-unittests"
work=$kit/work
cd "$work"

# plan NAME MLIR [PIPELINE]: plans/NAME.mwplan (train_step or the one
# function) through PIPELINE (default --mw-train-pipeline).
plan() {
  local n=$1 in=$2 pipeline=${3:---mw-train-pipeline}
  mw-opt "$in" "$pipeline" -o "$n.p.mlir" 2>/dev/null
  mw-translate --mw-to-plan "$n.p.mlir" -o "$kit/plans/$n.mwplan"
}

echo "== training steps"
# name | mw-models arguments | CUDA tolerance of the losses | of the weights
# and states after 3 steps (relative to each tensor's largest value).
# Adam divides by the gradient's root mean square, so where a gradient is
# rounding noise the update is too: BERT's key biases have a zero gradient
# (softmax does not see a constant added to every score), and they and their
# moments are left out of the weight comparison (the CPU's BLAS and
# reference loops differ there by 100% already).
train_cases=(
  "gpt2-tiny|gpt --preset gpt2-tiny --train|1e-4|1e-3"
  "gpt2-tiny-unfused|gpt --preset gpt2-tiny --attention=unfused --train|1e-4|1e-3"
  "llama-tiny-bf16|llama --preset llama-tiny --train --precision bf16 --grad-accum 2|2e-2|5e-2"
  "bert-tiny-fp16|bert --preset bert-tiny --train --precision fp16|2e-2|5e-2"
  "mlp-tiny|mlp --preset mlp-tiny --train --optimizer sgd --momentum 0.9 --nesterov|1e-4|1e-3"
)
: >"$kit/train.txt"
for c in "${train_cases[@]}"; do
  IFS='|' read -r name args tol wtol <<<"$c"
  # shellcheck disable=SC2086
  mw-models $args -o "$name.mlir"
  plan "$name" "$name.mlir"
  plan "$name.fused" "$name.mlir" --mw-train-pipeline=fuse=true
  mw-eval "$name.mlir" --entry train_step --random-inputs 3 \
    --save-inputs "$kit/ref/$name.s0" --outputs "$name.e1" >/dev/null
  for v in "$name" "$name.fused"; do
    mw-run "$kit/plans/$v.mwplan" --weights "$kit/ref/$name.s0" \
      --inputs "$kit/ref/$name.s0" --steps 3 --save-weights "$kit/ref/$v.w3" \
      --report json >"$kit/ref/$v.json"
    echo "$v $name $tol $wtol" >>"$kit/train.txt"
  done
done

echo "== offloaded forward and decode (gpt2-tiny)"
mw-models gpt --preset gpt2-tiny --logits -o fwd.mlir
mw-models gpt --preset gpt2-tiny --inference --max-batch 2 -o inf.mlir
# split NAME IN [flags]: plans/NAME.<function>.mwplan for each function.
split() {
  local n=$1 in=$2 f
  shift 2
  mw-opt "$in" "$@" --mw-train-pipeline -o "$n.p.mlir" 2>/dev/null
  for f in $(grep -o 'func.func @[a-z_]*' "$n.p.mlir" | sed 's/.*@//'); do
    mw-translate --mw-to-plan "$n.p.mlir" --mw-plan-function="$f" \
      -o "$kit/plans/$n.$f.mwplan"
  done
}
split off.base.f fwd.mlir
split off.base.i inf.mlir
: >"$kit/offload.txt"
for c in "cpu 1 0" "cpu 2 1" "nvme 1 0" "nvme 2 1"; do
  read -r w k l <<<"$c"
  n=off.$w.k$k.l$l
  opt="weights=$w prefetch=$k pinned-layers=$l"
  # A relative path: the runs on the device start in KIT/work.
  [ "$w" = nvme ] && opt="$opt path=$n.dir"
  split "$n.f" fwd.mlir --mw-offload="$opt"
  split "$n.i" inf.mlir --mw-offload="$opt"
  echo "$n" >>"$kit/offload.txt"
done
mw-run "$kit/plans/off.base.f.forward.mwplan" --steps 2 \
  --save-outputs "$kit/ref/off.fwd.out" >/dev/null
mw-run "$kit/plans/off.base.i.decode.mwplan" --steps 3 \
  --save-outputs "$kit/ref/off.dec.out" >/dev/null
mw-run "$kit/plans/off.base.i.decode.mwplan" --generate \
  --prefill "$kit/plans/off.base.i.prefill.mwplan" --synthetic 3 \
  --max-new-tokens 8 --greedy --print-tokens | grep '^request' \
  >"$kit/ref/generate.txt"

echo "== ZeRO-2 with overlap, one rank (NCCL at world size 1)"
mw-models gpt --preset gpt2-tiny --batch 4 --train --optimizer=sgd \
  --momentum=0.9 -o zstep.mlir
mw-opt zstep.mlir --mw-zero="stage=2 ranks=1 overlap=on" -o zero.mlir
plan zero2 zero.mlir
mw-opt zero.mlir --mw-memory-report=format=json -o /dev/null \
  >"$kit/ref/zero2.report.json"
mw-run "$kit/plans/zero2.mwplan" --steps 3 --report json >"$kit/ref/zero2.json"

echo "== GPT-2 small for bench/gpu/run.sh"
mw-models gpt --preset gpt2-small --train -o small.mlir
plan gpt2-small small.mlir
plan gpt2-small.fused small.mlir --mw-train-pipeline=fuse=true

cp "$root/test/Runtime/Inputs/compare_safetensors.py" \
  "$root/test/Runtime/Inputs/zero_ranks.py" \
  "$root/test/Runtime/Inputs/pack_zero_weights.py" "$kit/"
rm -rf "$work" && mkdir -p "$work"
{
  echo "commit $(git -C "$root" rev-parse HEAD)$(git -C "$root" diff --quiet || echo ' (with uncommitted changes)')"
  echo "made $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
  echo "nvcc $(/usr/local/cuda/bin/nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "bytes $(du -sb "$kit" | cut -f1)"
} >"$kit/MANIFEST"
cat "$kit/MANIFEST"
size=$(du -sb "$kit" | cut -f1)
if [ "$size" -gt $((60 << 20)) ]; then
  echo "prepare.sh: the kit is $size bytes, over the 60 MiB a carry may hold" >&2
  exit 1
fi
