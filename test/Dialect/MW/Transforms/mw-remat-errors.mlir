// Every diagnostic of --mw-remat.

// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir

// RUN: not mw-opt %t.mlir --mw-remat=budget=12XB -o /dev/null 2>&1 | FileCheck %s --check-prefix=MALFORMED
// RUN: not mw-opt %t.mlir --mw-remat=budget=-5MB -o /dev/null 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: mw-remat: malformed budget '{{.*}}' (expected bytes with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, a percentage like 60%, or auto)

// selective on a fused-attention step (the default) has nothing to drop: a
// warning, not silence. With unfused attention it recomputes and says
// nothing.
// RUN: mw-opt %t.mlir --mw-remat=strategy=selective -o /dev/null 2>&1 | FileCheck %s --check-prefix=SELECTIVE
// SELECTIVE: warning: {{.*}}mw-remat: strategy=selective recomputes nothing in @train_step: it drops only core attention values (scores, probabilities), and this step has none (fused mw.attention keeps them inside its kernel); use every-k, sqrt or a budget (budget=NN% or saved-budget=NN%) instead
// RUN: mw-models gpt --preset gpt2-tiny --train --attention=unfused -o %t.unfused.mlir
// RUN: mw-opt %t.unfused.mlir --mw-remat=strategy=selective -o /dev/null 2>&1 | count 0

// budget=auto is the target's device memory; the host has none.
// RUN: not mw-opt %t.mlir --mw-remat="budget=auto target=cpu" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO-CPU
// AUTO-CPU: mw-remat: budget=auto plans for the target's device memory, and target=cpu has none; give bytes or a percentage
// A step that does not fit an H200 (9.7 G fp32 parameters with AdamW):
// RUN: mw-models mlp --preset mlp-tiny --hidden 98304 --in-features 98304 --layers 2 --train -o %t.big.mlir
// RUN: not mw-opt %t.big.mlir --mw-remat=budget=auto -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO-H200
// Its backward pass alone needs more arena than the budget leaves, which
// is answered before any search (the search's smallest peak was
// 154639270300 B).
// AUTO-H200: error: {{.*}}mw-remat: budget 141000000000 B (141.00 GB = 131.32 GiB) (budget=auto: the memory of target h200) is unreachable for @train_step: every plan's arena holds at least 38660604160 B (38.66 GB = 36.01 GiB), the backward pass's own buffers at its fullest op (gradients, gathered parameters, buckets: no recompute changes them), over the arena's share of the budget, 25021333860 B (25.02 GB = 23.30 GiB) (the persistent state is 115978666140 B (115.98 GB = 108.01 GiB))
// AUTO-H200: note: {{.*}}the fullest op of the backward pass: 'mw.{{[a-z_]+}}'{{( in .*)?}}

// A byte budget below the arguments is answered before anything is
// measured; one between them and the persistent state (the arguments and
// the returned loss) after measuring the save-all step.
// RUN: not mw-opt %t.mlir --mw-remat=budget=1MiB -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=ARGS
// ARGS: error: {{.*}}mw-remat: budget 1048576 B (1.05 MB = 1.00 MiB) is below the persistent state of @train_step: its arguments alone are 1422856 B (1.42 MB = 1.36 MiB) (parameters, optimizer state, inputs), which no rematerialization can reduce
// RUN: not mw-opt %t.mlir --mw-remat=budget=1422866 -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FLOOR
// FLOOR: error: {{.*}}mw-remat: budget 1422866 B (1.42 MB = 1.36 MiB) is below the persistent state of @train_step, 1422868 B (1.42 MB = 1.36 MiB) (parameters, optimizer state, inputs, outputs), which no rematerialization can reduce

// The smallest peak the pass reaches is 1986836 B; below it the
// budget is unreachable, and the buffers live at that peak are listed.
// Every plan holds at least 563712 B of backward buffers in the arena, so
// below 563712 + 1422868 = 1986580 B the budget is unreachable without a
// search; between the two the search says so.
// RUN: not mw-opt %t.mlir --mw-remat=budget=1900000 -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=BELOW-FLOOR
// BELOW-FLOOR: error: {{.*}}mw-remat: budget 1900000 B (1.90 MB = 1.81 MiB) is unreachable for @train_step: every plan's arena holds at least 563712 B (563.71 KB = 550.50 KiB), the backward pass's own buffers at its fullest op (gradients, gathered parameters, buckets: no recompute changes them), over the arena's share of the budget, 477132 B (477.13 KB = 465.95 KiB) (the persistent state is 1422868 B (1.42 MB = 1.36 MiB))
// BELOW-FLOOR: note: loc("h.{{[0-9]+}}.{{[a-z]+}}"): the fullest op of the backward pass: 'mw.{{[a-z_]+}}' in h.{{[0-9]+}}.{{[a-z]+}}
// RUN: not mw-opt %t.mlir --mw-remat=budget=1986700 -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNREACHABLE
// UNREACHABLE: error: {{.*}}mw-remat: budget 1986700 B (1.99 MB = 1.89 MiB) is unreachable for @train_step: the smallest planned peak found is 1986836 B (1.99 MB = 1.89 MiB) (arena 563968 B (563.97 KB = 550.75 KiB) + persistent 1422868 B (1.42 MB = 1.36 MiB), strategy {{[^)]*}}); save-all peak 2197780 B (2.20 MB = 2.10 MiB)
// UNREACHABLE: note: loc("{{.*}}"): live at the peak: '{{.*}}', {{[0-9]+}} B

// RUN: not mw-opt %t.mlir --mw-remat="function=forward" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBACKWARD
// NOBACKWARD: mw-remat: @forward has no backward pass: no op outside the forward pass (the ops the loss depends on) uses a forward value; run --mw-autodiff first

// RUN: not mw-opt %t.mlir --mw-remat="function=nope" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: mw-remat: no function @nope with a body (set function=NAME)

// RUN: not mw-opt %t.mlir --mw-remat=strategy=bogus -o /dev/null 2>&1 | FileCheck %s --check-prefix=STRATEGY
// STRATEGY: mw-remat: unknown strategy 'bogus' (expected auto, none, all, every-k, sqrt, selective, revolve or optimal)

// RUN: not mw-opt %t.mlir --mw-remat=strategy=optimal -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPTIMAL
// OPTIMAL: mw-remat: strategy=optimal needs a budget (budget=BYTES or NN%, or saved-budget=BYTES or NN%)

// RUN: not mw-opt %t.mlir --mw-remat="strategy=optimal budget=95% time-limit=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIMELIMIT
// TIMELIMIT: mw-remat: time-limit must be a positive number of seconds

// A fixed strategy under a budget it does not meet.
// RUN: not mw-opt %t.mlir --mw-remat="strategy=sqrt budget=2000000" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED
// FIXED: error: {{.*}}mw-remat: strategy=sqrt plans a peak of 2117140 B (2.12 MB = 2.02 MiB) (arena 694272 B (694.27 KB = 678.00 KiB) + persistent 1422868 B (1.42 MB = 1.36 MiB)), over the budget 2000000 B (2.00 MB = 1.91 MiB); strategy=auto finds the least recompute under a budget

// saved-budget: malformed, on a fixed strategy, and below what a step must
// keep (its one saved activation is also returned).
// RUN: not mw-opt %t.mlir --mw-remat=saved-budget=12XB -o /dev/null 2>&1 | FileCheck %s --check-prefix=SAVED-MALFORMED
// RUN: not mw-opt %t.mlir --mw-remat=saved-budget=auto -o /dev/null 2>&1 | FileCheck %s --check-prefix=SAVED-MALFORMED
// SAVED-MALFORMED: mw-remat: malformed saved-budget '{{.*}}' (expected bytes with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, or a percentage like 30%)
// RUN: not mw-opt %t.mlir --mw-remat="strategy=sqrt saved-budget=30%" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SAVED-FIXED
// SAVED-FIXED: mw-remat: saved-budget is for strategy=auto and optimal; strategy=sqrt keeps what it keeps
// RUN: not mw-opt %S/Inputs/remat-forced.mlir --mw-remat=saved-budget=64 -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=SAVED-FORCED
// SAVED-FORCED: error: mw-remat: saved-budget 64 B is below what @train_step must keep: the fewest saved-activation bytes of any candidate are 128 B (values the backward pass reads that cannot be recomputed)

// RUN: not mw-opt %t.mlir --mw-remat=target=tpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: mw-remat: unknown target 'tpu' (expected h200, h100, a100, v100, V100-16GB, {{.*}}, B200-192GB or cpu)

// RUN: not mw-opt %t.mlir --mw-remat="strategy=every-k k=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=K
// K: mw-remat: k must be >= 1, got 0

// A step without layer locations and without mw.layer attributes cannot be
// split into blocks.
// RUN: mw-opt %t.mlir -mlir-print-debuginfo | sed -e 's/loc("h\.[0-9]*\.[a-z]*")/loc("x")/' -e 's/mw\.layer = /not_a_layer = /g' > %t.noloc.mlir
// RUN: not mw-opt %t.noloc.mlir --mw-remat=strategy=every-k -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBLOCKS
// NOBLOCKS: mw-remat: strategy=every-k needs transformer blocks, named by op locations with a layer index (loc("h.0.attn"), loc("model.layers.0.mlp")); @train_step has none
// RUN: not mw-opt %t.noloc.mlir --mw-remat=strategy=revolve -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=NOBLOCKS-REVOLVE
// NOBLOCKS-REVOLVE: mw-remat: strategy=revolve cannot reverse @train_step: the step has no transformer blocks (mw.layer = "h.N...")

// revolve reverses one forward pass: with gradient accumulation the later
// micro-batches' blocks run after the first backward.
// RUN: mw-models llama --preset llama-tiny --train --grad-accum 2 -o %t.accum.mlir
// RUN: not mw-opt %t.accum.mlir --mw-remat=strategy=revolve -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=ACCUM
// ACCUM: mw-remat: strategy=revolve cannot reverse @train_step: forward op 'mw.{{[a-z_]+}}' (model.layers.{{[0-9]+}}.{{[a-z_.]+}}) follows backward op 'mw.{{[a-z_]+}}' ({{[a-z_.0-9]*}}): gradient accumulation's micro-batches, or links whose forward and backward ops interleave
// RUN: not mw-opt %t.mlir --mw-remat="strategy=revolve units=layers" -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNITS
// UNITS: mw-remat: unknown units 'layers' (expected regions or blocks)
// RUN: not mw-opt %t.mlir --mw-remat="strategy=revolve snapshots=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SNAPSHOTS
// SNAPSHOTS: mw-remat: snapshots must be >= 0 (0: ceil(log2(links))), got -1
// RUN: not mw-opt %t.mlir --mw-remat="strategy=revolve budget=1900000" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REVOLVE-OVER
// REVOLVE-OVER: mw-remat: strategy=revolve snapshots={{[0-9]+}} plans a peak of {{[0-9]+}} B ({{.*}}), over the budget 1900000 B (1.90 MB = 1.81 MiB); fewer snapshots hold less, and strategy=auto finds the least recompute under a budget
