#!/bin/sh
# fused_models.sh BIN WORK FAMILY [mw-models flags...]
#
# A training step of mw-models FAMILY, fused (mw-opt --mw-fuse
# --mw-train-pipeline) and run by mw-run --reference-matmul for two steps,
# against mw-eval on the unfused step chained for two steps. Prints the
# number of fused kernels in the plan and compare_safetensors.py's verdict
# on the weights and optimizer state. FUSED_PIPELINE replaces the mw-opt
# pipeline (default: --mw-fuse --mw-train-pipeline); mw-run's planned and
# measured peak line is printed too.
set -e
PATH=$1:$PATH
work=$2.$3
here=$(dirname "$0")
shift 2
mw-models "$@" --train -o "$work.mlir"
# shellcheck disable=SC2086
mw-opt "$work.mlir" ${FUSED_PIPELINE:---mw-fuse --mw-train-pipeline} -o "$work.planned.mlir" 2>/dev/null
mw-translate --mw-to-plan "$work.planned.mlir" -o "$work.mwplan"
echo "fused kernels: $(mw-translate --mw-plan-json "$work.planned.mlir" | grep -c '"op": "mw.fusion"')"
mw-eval "$work.mlir" --entry train_step --random-inputs 11 --save-inputs "$work.s0" --outputs "$work.s1" > /dev/null 2>&1
mw-eval "$work.mlir" --entry train_step --inputs "$work.s0" --inputs "$work.s1" --outputs "$work.s2" > /dev/null 2>&1
mw-run "$work.mwplan" --weights "$work.s0" --inputs "$work.s0" --steps 2 \
  --reference-matmul --save-weights "$work.w2" | grep '^memory:' 
python3 "$here/compare_safetensors.py" "$work.s2" "$work.w2" --ignore loss
