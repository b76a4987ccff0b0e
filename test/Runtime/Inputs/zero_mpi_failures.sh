#!/usr/bin/env bash
# How a multi-rank run ends when a rank fails.
#
# usage: zero_mpi_failures.sh BIN WORK PLAN.mwplan WEIGHTS.safetensors
#
# PLAN is a ZeRO plan for 2 ranks. Each case prints what the ranks said and
# how long the run took after the failure, and fails unless every rank
# exited non-zero, naming the failed rank, within a bounded time (60 s here;
# the cases take about a second, or the --comm-timeout).
set -uo pipefail
bin=$1 work=$2 plan=$3 weights=$4
read -r -a mpirun <<< "${MW_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"
mkdir -p "$work"
cd "$work"

# Runs mpirun in the background with rank 1's command line `$rank1` and
# everyone else's `$others`; rank 1 writes its pid to rank1.pid.
start() {
  rm -f rank1.pid out.txt
  (timeout 60 "${mpirun[@]}" -np 2 sh -c '
     if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then echo $$ > rank1.pid; exec '"$rank1"'
     else exec '"$others"'; fi' > out.txt 2>&1
   echo "exit $?" >> out.txt) &
  runner=$!
}
# Waits until rank 0 has printed step $1.
wait_for_step() {
  for _ in $(seq 1 600); do
    grep -q "^step $1 " out.txt 2>/dev/null && return 0
    sleep 0.1
  done
  echo "rank 0 never reached step $1"; cat out.txt; exit 1
}
finish() {
  local t0=$SECONDS
  wait "$runner"
  grep -v -e '^step ' -e '^-----' -e '^$' out.txt | grep -e 'mw-run' -e 'exit' -e 'rank 1 ' | sed 's/PID [0-9]*/PID N/'
  echo "ended $(( SECONDS - t0 <= 60 ? 1 : 0 )) (within 60 s)"
}

echo "== bad input on rank 1"
echo "not safetensors" > bad.safetensors
rank1="$bin/mw-run $plan --steps 1 --weights bad.safetensors"
others="$bin/mw-run $plan --steps 1 --weights $weights"
start; finish

echo "== rank 1 killed in the middle of the run"
rank1="$bin/mw-run $plan --steps 1000000 --weights $weights"
others="$rank1"
start; wait_for_step 2; kill -9 "$(cat rank1.pid)"; finish

echo "== rank 1 stopped (SIGSTOP): the others time out"
rank1="$bin/mw-run $plan --steps 1000000 --weights $weights --comm-timeout 3"
others="$rank1"
start; wait_for_step 2; kill -STOP "$(cat rank1.pid)"; finish
kill -9 "$(cat rank1.pid)" 2>/dev/null || true

echo "== a plan for 2 ranks started on 3"
timeout 60 "${mpirun[@]}" -np 3 "$bin/mw-run" "$plan" --steps 1 2>&1 | grep '^mw-run' | sort
echo "exit ${PIPESTATUS[0]}"
