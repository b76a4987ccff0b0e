#!/bin/sh
# offload_parity.sh BIN WORK FAMILY [mw-models flags...]
#
# Offloaded weights are bit-identical to resident ones (docs/offload.md,
# "runtime"): mw-models FAMILY's forward (--logits) and its @prefill and
# @decode (--inference), planned with --mw-train-pipeline as they are and
# after --mw-offload for weights=cpu and weights=nvme, prefetch 0, 1 and 2
# and pinned-layers 0 and 1, run by mw-run on the CPU:
#   - forward: 2 steps, --save-outputs, cmp against the resident run;
#   - decode: 3 steps (the KV cache carried between them), cmp likewise;
#   - generate: mw-run --generate over @prefill and @decode (sharing the
#     host store), greedy, the tokens diffed;
# nvme from the default weights file the run writes under path= and from
# --weights (the resident run's saved weights, read by offset); every
# offloaded run's --report json has bytes streamed and its measured peak
# equal to the planned one. Prints one line per step kind and a verdict.
set -e
PATH=$1:$PATH
work=$2
family=$3
shift 3
rm -rf "$work" && mkdir -p "$work" && cd "$work"
mw-models "$family" "$@" --logits -o fwd.mlir
mw-models "$family" "$@" --inference --max-batch 2 -o inf.mlir

# plan IN NAME [mw-opt flags...]: NAME.forward/.prefill/.decode.mwplan
plan() {
  in=$1 name=$2
  shift 2
  mw-opt "$in" "$@" --mw-train-pipeline -o "$name.mlir"
  for f in $(grep -o 'func.func @[a-z_]*' "$name.mlir" | sed 's/.*@//'); do
    mw-translate --mw-to-plan "$name.mlir" --mw-plan-function="$f" \
      -o "$name.$f.mwplan"
  done
}

# check REPORT: bytes streamed, measured peak = planned.
check() {
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m, o = r["memory"], r["offload"]
assert o and o["bytes_streamed"] > 0, sys.argv[1] + ": nothing streamed"
assert m["measured_peak_bytes"] == m["planned_peak_bytes"], sys.argv[1]
PY
}

gen() { # gen NAME [mw-run flags]: the generated tokens
  name=$1
  shift
  mw-run "$name.decode.mwplan" --generate --prefill "$name.prefill.mwplan" \
    --synthetic 3 --max-new-tokens 4 --greedy --print-tokens "$@" |
    grep '^request'
}

plan fwd.mlir base.f
plan inf.mlir base.i
mw-run base.f.forward.mwplan --steps 2 --save-outputs base.fwd.out > /dev/null
mw-run base.f.forward.mwplan --steps 0 --save-weights w.fwd > /dev/null
mw-run base.i.decode.mwplan --steps 3 --save-outputs base.dec.out > /dev/null
mw-run base.i.decode.mwplan --steps 0 --save-weights w.inf > /dev/null
gen base.i > base.gen

runs=0 differ=0
same() { # same A B: count a run, and a difference
  runs=$((runs + 1))
  cmp -s "$1" "$2" || { differ=$((differ + 1)); echo "DIFFERENT: $2"; }
}
for w in cpu nvme; do
  for k in 0 1 2; do
    for l in 0 1; do
      c=$w.k$k.l$l
      opt="weights=$w prefetch=$k pinned-layers=$l"
      [ $w = nvme ] && opt="$opt path=$work/$c.dir"
      plan fwd.mlir "$c.f" --mw-offload="$opt"
      plan inf.mlir "$c.i" --mw-offload="$opt"
      mw-run "$c.f.forward.mwplan" --steps 2 --save-outputs "$c.fwd.out" \
        --report json > "$c.fwd.json"
      check "$c.fwd.json"
      same base.fwd.out "$c.fwd.out"
      mw-run "$c.i.decode.mwplan" --steps 3 --save-outputs "$c.dec.out" \
        --report json > "$c.dec.json"
      check "$c.dec.json"
      same base.dec.out "$c.dec.out"
      gen "$c.i" > "$c.gen"
      same base.gen "$c.gen"
      if [ $w = nvme ]; then
        # The default weights file is complete and the only file there.
        ls "$c.dir" | grep -v '\.weights\.safetensors$' && exit 1
        mw-run "$c.f.forward.mwplan" --steps 2 --weights w.fwd \
          --save-outputs "$c.fwdw.out" > /dev/null
        same base.fwd.out "$c.fwdw.out"
        mw-run "$c.i.decode.mwplan" --steps 3 --weights w.inf \
          --save-outputs "$c.decw.out" > /dev/null
        same base.dec.out "$c.decw.out"
        gen "$c.i" --weights w.inf > "$c.genw"
        same base.gen "$c.genw"
      fi
    done
  done
done
echo "offload $family: $runs runs, $differ differ from the resident step"
