#!/usr/bin/env bash
# One ZeRO configuration on N MPI ranks against its references.
#
# usage: zero_mpi_check.sh BIN WORK STEP.mlir N "ZERO-OPTIONS" RTOL BATCH...
#
# STEP.mlir is a training step (mw-models --train); BATCH are the specs of
# its global batch for zero_ranks.py batch (tokens:4x32:256 ...). In WORK it
#   1. runs the one-rank step 3 steps from the initialization of --seed 4 on
#      that batch (the reference);
#   2. compiles --mw-zero="ZERO-OPTIONS ranks=N" and runs it on N ranks
#      (mpirun) from the same whole checkpoint and batch, 3 steps, saving a
#      sharded checkpoint;
#   3. checks every rank's measured collectives against the memory report's
#      and its measured peak against its planned peak;
#   4. runs the same 3 steps with mw-eval --ranks N from the ranks' pieces
#      and requires every rank's state to equal mw-run's bit for bit;
#   5. consolidates the checkpoint and compares it with the reference's
#      weights within RTOL (the order of the sums differs), and the losses.
# MW_MPIRUN overrides the launcher (default: mpirun --allow-run-as-root
# --oversubscribe, as CI runs it); MW_CHECK_IGNORE (a,b,...) names tensors
# step 5 does not compare: those whose gradient is zero in exact arithmetic
# (attention key biases), where both sides hold rounding noise.
set -euo pipefail
bin=$1 work=$2 step=$3 n=$4 zopts=$5 rtol=$6
shift 6
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
read -r -a mpirun <<< "${MW_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"
mkdir -p "$work"
cd "$work"

if [ ! -f ref3.safetensors ]; then
  python3 "$here/zero_ranks.py" batch batch.safetensors "$@"
  "$bin/mw-opt" "$step" --mw-train-pipeline 2>/dev/null |
    "$bin/mw-translate" --mw-to-plan -o ref.mwplan
  "$bin/mw-run" ref.mwplan --steps 0 --seed 4 --save-weights init.safetensors >/dev/null
  "$bin/mw-run" ref.mwplan --steps 3 --weights init.safetensors \
    --inputs batch.safetensors --reference-matmul \
    --save-weights ref3.safetensors --report json > ref.json
fi

tag="n$n.$(echo "$zopts" | tr -c 'a-z0-9=\n' '_' | tr '=' '-')"
"$bin/mw-opt" "$step" --mw-zero="$zopts ranks=$n" -o "$tag.mlir"
"$bin/mw-opt" "$tag.mlir" --mw-train-pipeline 2>/dev/null |
  "$bin/mw-translate" --mw-to-plan -o "$tag.mwplan"
"$bin/mw-opt" "$tag.mlir" --mw-memory-report=format=json -o /dev/null > "$tag.report.json"
rm -rf "$tag.ck0" "$tag.ck3"
"${mpirun[@]}" -np "$n" "$bin/mw-run" "$tag.mwplan" --steps 0 \
  --weights init.safetensors --save-weights "$tag.ck0" >/dev/null
"${mpirun[@]}" -np "$n" "$bin/mw-run" "$tag.mwplan" --steps 3 \
  --weights init.safetensors --inputs batch.safetensors --reference-matmul \
  --save-weights "$tag.ck3" --report json > "$tag.run.json"
python3 "$here/zero_ranks.py" comm "$tag.run.json" "$tag.report.json"
python3 "$here/zero_ranks.py" peak "$tag.run.json"
python3 "$here/zero_ranks.py" losses ref.json "$tag.run.json" "$rtol"

python3 "$here/zero_ranks.py" split batch.safetensors "$n" "$tag.batch.rank%r.safetensors"
state="$tag.ck0/step-0/rank-%r.safetensors"
for i in 1 2 3; do
  "$bin/mw-eval" "$tag.mlir" --entry train_step --ranks "$n" \
    --rank-inputs "$state" --rank-inputs "$tag.batch.rank%r.safetensors" \
    --outputs "$tag.eval$i.safetensors" 2>/dev/null
  state="$tag.eval$i.rank%r.safetensors"
done
for ((r = 0; r < n; ++r)); do
  python3 "$here/compare_safetensors.py" "$tag.ck3/step-3/rank-$r.safetensors" \
    "$tag.eval3.rank$r.safetensors" > "$tag.eval.rank$r.txt" ||
    { cat "$tag.eval.rank$r.txt"; echo "$tag: rank $r differs from mw-eval --ranks $n"; exit 1; }
done
echo "mw-eval --ranks $n: every rank's state bit for bit"

"$bin/mw-run" --consolidate "$tag.ck3" -o "$tag.full.safetensors" >/dev/null
ignore=()
[ -n "${MW_CHECK_IGNORE:-}" ] && ignore=(--ignore "$MW_CHECK_IGNORE")
python3 "$here/compare_safetensors.py" ref3.safetensors "$tag.full.safetensors" \
  --rtol "$rtol" "${ignore[@]}"
echo "$tag: OK"
