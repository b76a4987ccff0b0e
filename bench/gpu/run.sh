#!/usr/bin/env bash
# Memwall's CUDA backend against PyTorch eager on GPT-2 small, on a GPU host.
#
#   bench/gpu/run.sh PLAN.mwplan [STEPS]
#
# 1. builds runtime/ with the CUDA backend (no MLIR needed) into build-gpu/,
# 2. runs the CUDA tests (they must run, not skip, on a GPU host),
# 3. trains GPT-2 small for STEPS steps (default 20) with
#    `mw-run PLAN --device cuda --report json`,
# 4. runs bench/gpu/torch_gpt2.py (same config: batch 1, seq 1024, AdamW,
#    f32, TF32 off) and prints both side by side, as ratios.
#
# The plan comes from a machine with MLIR (docs/runtime-cuda.md):
#   mw-models gpt --preset gpt2-small --train | mw-opt --mw-train-pipeline \
#     | mw-translate --mw-to-plan -o gpt2-small.mwplan
# Environment: MW_RUN=PATH uses that mw-run (built with CUDA) and skips
# steps 1-2 (bench/gpu/device-check.sh passes the kit's); MWRT_CUDA_GRAPH=1
# replays steps as a CUDA graph;
# MWRT_CUDA_TF32=1 is *not* set here, to match PyTorch with TF32 off.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
  echo "usage: $0 PLAN.mwplan [STEPS]" >&2
  exit 2
fi
plan=$(realpath "$1")
steps=${2:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build-gpu}
out=${OUT_DIR:-$build/bench}
mkdir -p "$out"

mwrun=${MW_RUN:-}
if [[ -z "$mwrun" ]]; then
  echo "== building runtime/ with CUDA in $build"
  cmake -G Ninja -S "$root/runtime" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DMWRT_CUDA=ON >/dev/null
  ninja -C "$build"

  echo "== CUDA tests"
  (cd "$build" && ctest -R 'Cuda' --output-on-failure) | tee "$out/ctest.txt"
  if grep -q 'Skipped' "$out/ctest.txt"; then
    echo "error: CUDA tests skipped on this machine (no usable device?)" >&2
    exit 1
  fi
  mwrun=$build/bin/mw-run
fi

echo "== mw-run: $steps steps of $plan on cuda"
"$mwrun" "$plan" --device cuda --steps "$steps" --report json \
  >"$out/mwrun.json"

echo "== PyTorch eager GPT-2 small, $steps steps"
python3 "$root/bench/gpu/torch_gpt2.py" --steps "$steps" --json \
  >"$out/torch.json"

python3 - "$out/mwrun.json" "$out/torch.json" <<'PY'
import json, sys
ours = json.load(open(sys.argv[1]))
torch = json.load(open(sys.argv[2]))
mib = 1 << 20
rows = [
    ("median step (ms)", ours["median_step_ms"], torch["median_step_ms"]),
    ("peak memory (MiB)", ours["memory"]["measured_peak_bytes"] / mib,
     torch["max_memory_allocated_bytes"] / mib),
]
print(f"{'':24}{'memwall':>14}{'pytorch':>14}{'memwall/pytorch':>18}")
for name, a, b in rows:
    print(f"{name:24}{a:14.2f}{b:14.2f}{a / b:18.3f}")
print(f"{'first loss':24}{ours['losses'][0]:14.4f}{torch['losses'][0]:14.4f}")
print(f"{'last loss':24}{ours['losses'][-1]:14.4f}{torch['losses'][-1]:14.4f}")
print("memwall peak = arena + persistents + planned workspace; kernel scratch"
      " and the 32 MiB cuBLASLt workspace are outside it (docs/runtime-cuda.md)")
PY
