#!/bin/sh
# offload_failures.sh BIN WORK
#
# gpt2-tiny's forward with its layers on "NVMe" (--mw-offload weights=nvme
# prefetch=1), run by mw-run:
#   - a truncated --weights file is refused, naming a tensor;
#   - a path= that is not a directory is refused when the defaults are
#     written there;
#   - with O_DIRECT refused (MWRT_OFFLOAD_DIRECT=0) reads fall back to
#     buffered ones, said once, and the outputs are unchanged;
#   - runs killed (SIGKILL) at several points while they initialize and
#     write the default weights file leave no partial file: the directory
#     holds nothing or the complete file.
PATH=$1:$PATH
work=$2
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
set -e
mw-models gpt --preset gpt2-tiny --logits -o fwd.mlir
mw-opt fwd.mlir --mw-train-pipeline -o base.mlir
mw-translate --mw-to-plan base.mlir -o base.mwplan
mw-opt fwd.mlir --mw-offload="weights=nvme prefetch=1 path=$work/dir" \
  --mw-train-pipeline -o off.mlir
mw-translate --mw-to-plan off.mlir -o off.mwplan
mw-run base.mwplan --save-outputs base.out > /dev/null
mw-run base.mwplan --save-weights w.safetensors > /dev/null

size=$(wc -c < w.safetensors)
head -c $((size / 2)) w.safetensors > half.safetensors
echo "truncated:"
mw-run off.mwplan --weights half.safetensors 2>&1 >/dev/null && exit 1

MWRT_OFFLOAD_DIRECT=0 mw-run off.mwplan --weights w.safetensors \
  --save-outputs buffered.out 2> buffered.err > /dev/null
echo "buffered: $(grep -c 'reading offloaded weights buffered' buffered.err) note(s)"
cmp base.out buffered.out && echo "buffered: outputs equal"

# Without --weights the defaults go to path=, which must be a directory.
: > afile
mw-opt fwd.mlir --mw-offload="weights=nvme prefetch=1 path=$work/afile" \
  --mw-train-pipeline -o file.mlir
mw-translate --mw-to-plan file.mlir -o file.mwplan
echo "not a directory:"
mw-run file.mwplan 2>&1 >/dev/null && exit 1

# A model whose default weights take a while to draw and write.
mw-models gpt --layers 4 --hidden 512 --heads 8 --vocab 4096 --seq 64 \
  --logits -o big.mlir
mw-opt big.mlir --mw-offload="weights=nvme prefetch=1 path=$work/big" \
  --mw-train-pipeline -o big.off.mlir
mw-translate --mw-to-plan big.off.mlir -o big.mwplan
mw-run big.mwplan > /dev/null
mv big/forward.weights.safetensors complete.safetensors
set +e
partial=0 complete=0 none=0
for delay in 0.05 0.1 0.2 0.4 0.6 0.8 1.2; do
  rm -rf big
  mw-run big.mwplan > /dev/null 2>&1 &
  pid=$!
  sleep $delay
  kill -9 $pid 2>/dev/null
  wait $pid 2>/dev/null
  files=$(ls -A big 2>/dev/null)
  if [ -z "$files" ]; then
    none=$((none + 1))
  elif [ "$files" = forward.weights.safetensors ] &&
       cmp -s big/forward.weights.safetensors complete.safetensors; then
    complete=$((complete + 1))
  else
    partial=$((partial + 1))
    echo "partial after $delay s: $files"
  fi
done
echo "killed: 7 runs, $partial left a partial file ($none nothing, $complete the complete file)"
