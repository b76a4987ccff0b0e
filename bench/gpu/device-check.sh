#!/usr/bin/env bash
# The first-run check of the CUDA backend, as one command on a GPU host
# (CUDA 13 and PyTorch, no MLIR): runs what bench/gpu/prepare.sh put in the
# kit and writes every result under OUT.
#
#   bench/gpu/device-check.sh [KIT] [STEPS]   (default KIT: build/gpu-kit,
#                                              STEPS for the bench: 20)
# Environment: OUT (results; default build/gpu-check; the run tool's $OUT),
# MW_CHECK_SKIP_BENCH=1 (skip the GPT-2 small bench), MW_CHECK_DEVICE=cpu
# (a dry run of the checks on the CPU, to test this script where there is
# no GPU: every check but gtest's CUDA ones and the bench must pass).
#
# Checks, each one line PASS/FAIL/INFO in OUT/summary.txt:
#   gtest        the runtime's unit tests, CUDA ones included; none of the
#                CUDA tests may skip;
#   train.*      3 steps of each training plan on cuda against the CPU's
#                losses and weights (f32 1e-4, bf16/fp16 2e-2 relative) and
#                measured peak = planned; fused plans included (NVRTC);
#   offload.*    offloaded forward and decode on cuda bit-identical to the
#                resident cuda run (host store, copy stream, file reader),
#                measured peak = planned, bytes streamed; resident cuda
#                against the CPU within 1e-4;
#   generate     KV-cache generation on cuda, tokens beside the CPU's (INFO:
#                a greedy token may flip on a rounding tie);
#   nccl         ZeRO-2 with overlap at world size 1 through NCCL,
#                bootstrapped from torchrun's environment (no MPI): CPU's
#                losses within 1e-4, peak, collective bytes = the report's;
#   bench        bench/gpu/run.sh's GPT-2 small against PyTorch eager
#                (unfused and --mw-fuse plans, and a CUDA graph replay).
# Exits 0 when every check passes. Never stops at the first failure: the
# device is lent for minutes, so one run must say everything.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
kit=$(realpath "${1:-$root/build/gpu-kit}")
steps=${2:-20}
dev=${MW_CHECK_DEVICE:-cuda}
out=$(realpath -m "${OUT:-$root/build/gpu-check}")
mkdir -p "$out"
summary=$out/summary.txt
: >"$summary"
t0=$(date +%s)
note() { echo "$*" | tee -a "$summary"; }
pass() { note "PASS $1${2:+: $2}"; }
fail() { note "FAIL $1${2:+: $2}"; failures=$((failures + 1)); }
failures=0
py() { python3 "$@"; }

cat "$kit/MANIFEST" >"$out/kit-manifest.txt" 2>/dev/null || { echo "no kit at $kit (bench/gpu/prepare.sh)" >&2; exit 2; }
note "kit: $(head -n 1 "$kit/MANIFEST")"
note "repo: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi >"$out/nvidia-smi.txt" 2>&1 || true
note "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -n 1)"

mwrun=$kit/bin/mw-run
if ! "$mwrun" --help >/dev/null 2>"$out/mw-run-load.txt"; then
  fail load "the kit's mw-run does not start here: $(head -c 300 "$out/mw-run-load.txt")"
  ldd "$mwrun" >"$out/ldd.txt" 2>&1
  echo "see $out/ldd.txt" >>"$summary"
  exit 1
fi
ldd "$mwrun" >"$out/ldd.txt" 2>&1
export PATH=$kit/bin:$PATH

# The unit tests were compiled with the kit maker's paths (the eval-parity
# cases, mw-run, the plan corpus); give them those paths here.
made_root=$(strings "$kit/bin/mwrt-unittests" | sed -n 's#^\(/.*\)/runtime/test/eval_parity$#\1#p' | head -n 1)
if [ -n "$made_root" ] && [ "$made_root" != "$root" ] && [ ! -e "$made_root" ]; then
  mkdir -p "$(dirname "$made_root")" && ln -s "$root" "$made_root"
fi
if [ -n "$made_root" ]; then
  mkdir -p "$made_root/build-gpu/bin"
  [ -x "$made_root/build-gpu/bin/mw-run" ] || ln -sf "$mwrun" "$made_root/build-gpu/bin/mw-run"
fi

echo "== gtest"
(cd "$out" && timeout 600 "$kit/bin/mwrt-unittests" --gtest_output=json:"$out/gtest.json" >"$out/gtest.txt" 2>&1)
rc=$?
skipped=$(grep -E '^\[  SKIPPED \] .*(Cuda|Nccl)' "$out/gtest.txt" | sed 's/ (.*//' | sort -u)
cuda_run=$(grep -cE '^\[       OK \] .*(Cuda|Nccl)' "$out/gtest.txt")
if [ $rc -eq 0 ] && [ -z "$skipped" ]; then
  pass gtest "$(grep -E '^\[  PASSED  \]' "$out/gtest.txt"), $cuda_run CUDA tests ran"
else
  fail gtest "rc=$rc; failed: $(grep -E '^\[  FAILED  \] [A-Za-z]' "$out/gtest.txt" | sort -u | sed 's/.*\] //' | tr '\n' ' ')${skipped:+; CUDA skipped: $(echo "$skipped" | sed 's/.*\] //' | tr '\n' ' ')}"
fi

# peak_ok REPORT: measured = planned (one rank).
peak_ok() {
  py - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["per_rank"][0]["memory"] if "per_rank" in r else r["memory"]
ok = m["measured_peak_bytes"] == m["planned_peak_bytes"]
print(f"peak planned {m['planned_peak_bytes']} measured {m['measured_peak_bytes']}")
sys.exit(0 if ok else 1)
PY
}

echo "== training steps"
work=$kit/work
rm -rf "$work" && mkdir -p "$work"
cd "$work"
while read -r v name tol wtol; do
  log=$out/train.$v
  if ! mw-run "$kit/plans/$v.mwplan" --device "$dev" --weights "$kit/ref/$name.s0" \
      --inputs "$kit/ref/$name.s0" --steps 3 --save-weights "$work/$v.w3" \
      --report json >"$log.json" 2>"$log.err"; then
    fail "train.$v" "mw-run failed: $(tail -n 2 "$log.err" | tr '\n' ' ')"
    continue
  fi
  l=$(py "$kit/zero_ranks.py" losses "$kit/ref/$v.json" "$log.json" "$tol" 2>&1); lr=$?
  # The zero-gradient key biases and their moments (prepare.sh says why).
  ignore=$(py -c "import sys; sys.path.insert(0, sys.argv[1]); from compare_safetensors import load; print(','.join(n for n in load(sys.argv[2]) if 'key.bias' in n) or 'none')" "$kit" "$kit/ref/$v.w3")
  w=$(py "$kit/compare_safetensors.py" "$kit/ref/$v.w3" "$work/$v.w3" --rtol "$wtol" --ignore "$ignore" 2>&1 | tail -n 3); wr=$?
  p=$(peak_ok "$log.json" 2>&1); pr=$?
  ms=$(py -c "import json,sys; print(json.load(open(sys.argv[1])).get('median_step_ms'))" "$log.json" 2>/dev/null)
  if [ $lr -eq 0 ] && [ $wr -eq 0 ] && [ $pr -eq 0 ]; then
    pass "train.$v" "$l; weights within $wtol; $p; median step $ms ms"
  else
    fail "train.$v" "$l | $w | $p"
  fi
done <"$kit/train.txt"

echo "== offload"
off_run() { # off_run NAME KIND(f|i) OUTFILE: forward 2 steps or decode 3
  if [ "$2" = f ]; then
    mw-run "$kit/plans/$1.f.forward.mwplan" --device "$dev" --steps 2 \
      --save-outputs "$3" --report json >"$3.json" 2>"$3.err"
  else
    mw-run "$kit/plans/$1.i.decode.mwplan" --device "$dev" --steps 3 \
      --save-outputs "$3" --report json >"$3.json" 2>"$3.err"
  fi
}
if off_run off.base f "$work/base.fwd" && off_run off.base i "$work/base.dec"; then
  a=$(py "$kit/compare_safetensors.py" "$kit/ref/off.fwd.out" "$work/base.fwd" --rtol 1e-4 2>&1 | tail -n 2); ar=$?
  b=$(py "$kit/compare_safetensors.py" "$kit/ref/off.dec.out" "$work/base.dec" --rtol 1e-4 2>&1 | tail -n 2); br=$?
  if [ $ar -eq 0 ] && [ $br -eq 0 ]; then pass offload.resident "cuda forward and decode within 1e-4 of the CPU"
  else fail offload.resident "$a | $b"; fi
  while read -r n; do
    ok=1 why=""
    for k in f i; do
      o=$work/$n.$k
      if ! off_run "$n" "$k" "$o"; then ok=0 why="$why $k: mw-run failed: $(tail -n 1 "$o.err")"; continue; fi
      base=$work/base.fwd; [ $k = i ] && base=$work/base.dec
      cmp -s "$base" "$o" || { ok=0 why="$why $k: outputs differ from resident"; }
      p=$(peak_ok "$o.json" 2>&1) || { ok=0 why="$why $k: $p"; }
      s=$(py -c "import json,sys; o=json.load(open(sys.argv[1]))['offload']; print(o['bytes_streamed'])" "$o.json" 2>/dev/null)
      [ "${s:-0}" -gt 0 ] 2>/dev/null || { ok=0 why="$why $k: nothing streamed"; }
    done
    if [ $ok = 1 ]; then pass "offload.$n" "forward and decode bit-identical to resident, peak = planned, streamed"
    else fail "offload.$n" "$why"; fi
  done <"$kit/offload.txt"
else
  fail offload.resident "mw-run failed: $(tail -n 2 "$work/base.fwd.err" "$work/base.dec.err" 2>/dev/null | tr '\n' ' ')"
fi

echo "== generate (KV cache)"
if mw-run "$kit/plans/off.base.i.decode.mwplan" --device "$dev" --generate \
    --prefill "$kit/plans/off.base.i.prefill.mwplan" --synthetic 3 \
    --max-new-tokens 8 --greedy --print-tokens >"$out/generate.txt" 2>"$out/generate.err"; then
  grep '^request' "$out/generate.txt" >"$work/gen.txt"
  if cmp -s "$kit/ref/generate.txt" "$work/gen.txt"; then note "PASS generate: tokens equal the CPU's"
  else note "INFO generate: tokens differ from the CPU's (see generate.txt; rounding ties flip greedy picks)"; fi
else
  fail generate "$(tail -n 2 "$out/generate.err" | tr '\n' ' ')"
fi

echo "== NCCL, world size 1, torchrun environment"
if env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29511 \
    mw-run "$kit/plans/zero2.mwplan" --device "$dev" --steps 3 --report json \
    >"$out/nccl.json" 2>"$out/nccl.err"; then
  l=$(py "$kit/zero_ranks.py" losses "$kit/ref/zero2.json" "$out/nccl.json" 1e-4 2>&1); lr=$?
  p=$(peak_ok "$out/nccl.json" 2>&1); pr=$?
  c=$(py "$kit/zero_ranks.py" comm "$out/nccl.json" "$kit/ref/zero2.report.json" 2>&1); cr=$?
  if [ $lr -eq 0 ] && [ $pr -eq 0 ] && [ $cr -eq 0 ]; then pass nccl "$l; $p; $(echo "$c" | tr '\n' ';')"
  else fail nccl "$l | $p | $c"; fi
else
  fail nccl "$(tail -n 3 "$out/nccl.err" | tr '\n' ' ')"
fi

if [ "${MW_CHECK_SKIP_BENCH:-0}" != 1 ]; then
  echo "== bench: GPT-2 small, $steps steps"
  for v in gpt2-small gpt2-small.fused; do
    if MW_RUN=$mwrun OUT_DIR=$out/bench.$v "$root/bench/gpu/run.sh" \
        "$kit/plans/$v.mwplan" "$steps" >"$out/bench.$v.txt" 2>&1; then
      pass "bench.$v" "$(tail -n 6 "$out/bench.$v.txt" | head -n 3 | tr -s ' ' | tr '\n' ';')"
    else
      fail "bench.$v" "$(tail -n 3 "$out/bench.$v.txt" | tr '\n' ' ')"
    fi
  done
  if MWRT_CUDA_GRAPH=1 mw-run "$kit/plans/gpt2-small.mwplan" --device "$dev" \
      --steps "$steps" --report json >"$out/bench.graph.json" 2>"$out/bench.graph.err"; then
    pass bench.cuda-graph "median step $(py -c "import json,sys; print(json.load(open(sys.argv[1]))['median_step_ms'])" "$out/bench.graph.json") ms"
  else
    fail bench.cuda-graph "$(tail -n 2 "$out/bench.graph.err" | tr '\n' ' ')"
  fi
fi

note "took $(( $(date +%s) - t0 )) s; $failures failed"
exit $((failures > 0))
