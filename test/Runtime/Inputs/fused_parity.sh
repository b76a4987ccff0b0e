#!/bin/sh
# fused_parity.sh BIN FUSED.mlir UNFUSED.mlir WORK FUNCTION [RTOL]
#
# For one function of the hand-written fused kernels (fused-kernels.mlir):
# plans the fused and the unfused module (mw-opt --mw-bufferize
# --mw-static-arena, mw-translate --mw-to-plan), runs both plans for one
# step with mw-run --device cpu --reference-matmul on inputs mw-eval drew,
# and compares every result with mw-eval's on the fused IR: the fused plan
# within RTOL (default 0: bit for bit), the unfused plan bit for bit with
# mw-eval, and the fused and unfused plans' bytes with each other within
# RTOL. Prints "FUNCTION: eval ok, unfused ok, fused-vs-unfused ok" or the
# mismatches; exits non-zero on any.
set -e
PATH=$1:$PATH
fused=$2 unfused=$3 work=$4 f=$5 rtol=${6:-0}
here=$(dirname "$0")
compare="python3 $here/compare_safetensors.py"
[ -f "$work.fused.planned.mlir" ] || mw-opt "$fused" --mw-bufferize --mw-static-arena -o "$work.fused.planned.mlir"
[ -f "$work.unfused.planned.mlir" ] || mw-opt "$unfused" --mw-bufferize --mw-static-arena -o "$work.unfused.planned.mlir"
mw-translate --mw-to-plan --mw-plan-function=$f "$work.fused.planned.mlir" -o "$work.$f.fused.mwplan"
mw-translate --mw-to-plan --mw-plan-function=$f "$work.unfused.planned.mlir" -o "$work.$f.unfused.mwplan"
mw-eval "$fused" --entry $f --random-inputs 7 --save-inputs "$work.$f.in" --outputs "$work.$f.eval" > /dev/null
for kind in fused unfused; do
  mw-run "$work.$f.$kind.mwplan" --weights "$work.$f.in" --inputs "$work.$f.in" \
    --reference-matmul --save-outputs "$work.$f.$kind.out" > /dev/null
done
status=0
$compare "$work.$f.eval" "$work.$f.fused.out" --rtol $rtol > "$work.$f.c1" || status=1
$compare "$work.$f.eval" "$work.$f.unfused.out" > "$work.$f.c2" || status=1
$compare "$work.$f.unfused.out" "$work.$f.fused.out" --rtol $rtol > "$work.$f.c3" || status=1
if [ $status = 0 ]; then
  echo "$f: eval ok, unfused ok, fused-vs-unfused ok"
else
  cat "$work.$f.c1" "$work.$f.c2" "$work.$f.c3"
fi
exit $status
