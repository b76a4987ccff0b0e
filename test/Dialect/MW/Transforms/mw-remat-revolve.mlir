// strategy=revolve: Griewank's binomial checkpointing over the chain of
// links (units=blocks: transformer blocks; units=regions, the default: a
// block's attention and MLP apart). With c snapshots it holds at most c + 1
// link inputs at once and recomputes the fewest links that allows
// (RematRevolve.h; docs/remat.md, "revolve").

// gpt2-tiny with 8 blocks, by blocks, each link's internals recomputed once
// with its sweep (internals=sweep): more snapshots, fewer recomputes.
// RUN: mw-models gpt --preset gpt2-tiny --layers 8 --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve units=blocks snapshots=1 internals=sweep verbose=true" -o %t.b1.mlir 2>&1 | FileCheck %s --check-prefix=B1
// B1: remark: {{.*}}mw-remat: strategy=revolve {{.*}} peak=6915604 {{.*}} recompute_flops=80806656 {{.*}} chosen="revolve blocks snapshots=1"
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve units=blocks snapshots=2 internals=sweep verbose=true" -o %t.b2.mlir 2>&1 | FileCheck %s --check-prefix=B2
// B2: remark: {{.*}}mw-remat: strategy=revolve {{.*}} recompute_flops=60332928 {{.*}} chosen="revolve blocks snapshots=2"
// internals=per-use (the default): each backward op of a link that reads
// its internals, after the first, recomputes them from the link's input
// where it needs them, so they do not live across the link's backward: a
// smaller peak for more recompute; by blocks and by regions the same peak.
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve units=blocks snapshots=1 verbose=true" -o %t.p1.mlir 2>&1 | FileCheck %s --check-prefix=P1
// P1: remark: {{.*}}mw-remat: strategy=revolve {{.*}} peak=6801684 {{.*}} recompute_flops=188180224 {{.*}} chosen="revolve blocks snapshots=1 per-use"
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve snapshots=1 verbose=true" -o %t.pr1.mlir 2>&1 | FileCheck %s --check-prefix=PR1
// PR1: remark: {{.*}}mw-remat: strategy=revolve {{.*}} peak=6801684 {{.*}} recompute_flops=163197568 {{.*}} chosen="revolve regions snapshots=1 per-use"
// With as many snapshots as blocks but one, every block input is kept from
// the forward pass and each block's internals are recomputed once, the
// last block's not at all: every-k k=1 less the last block.
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve units=blocks snapshots=7 internals=sweep verbose=true" -o %t.b7.mlir 2>&1 | FileCheck %s --check-prefix=B7
// B7: remark: {{.*}}mw-remat: strategy=revolve {{.*}} chosen="revolve blocks snapshots=7"
// snapshots beyond the links but one change nothing.
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve units=blocks snapshots=100 internals=sweep" -o %t.b100.mlir
// RUN: cmp %t.b7.mlir %t.b100.mlir
// The default: regions, ceil(log2(16)) = 4 snapshots, per use.
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve verbose=true" -o %t.r.mlir 2>&1 | FileCheck %s --check-prefix=REGIONS
// REGIONS: remark: {{.*}}mw-remat: strategy=revolve {{.*}} chosen="revolve regions snapshots=4 per-use"
// RUN: FileCheck %s --check-prefix=IR < %t.r.mlir
// IR: mw.remat.strategy = "revolve"
// IR: mw.recompute

// The same outputs, bit for bit, and through the training pipeline; the
// output is deterministic.
// RUN: mw-eval %t.mlir --entry train_step --random-inputs 7 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.b1.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.b2.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.b7.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.r.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.p1.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.pr1.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve snapshots=1" --mw-train-pipeline -o %t.p.mlir
// RUN: mw-eval %t.p.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-opt %t.mlir --mw-remat="strategy=revolve" -o %t.r2.mlir
// RUN: cmp %t.r.mlir %t.r2.mlir

// llama (bf16, RMSNorm, SwiGLU) and bert (fp16 with dynamic loss scaling,
// post-LN blocks): the same outputs.
// RUN: mw-models llama --preset llama-tiny --layers 4 --train --precision bf16 -o %t.llama.mlir
// RUN: mw-eval %t.llama.mlir --entry train_step --random-inputs 7 --save-inputs %t.llama.in --print > %t.llama.ref
// RUN: mw-opt %t.llama.mlir --mw-remat="strategy=revolve snapshots=1" -o %t.llama.r.mlir
// RUN: mw-eval %t.llama.r.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.mlir --mw-remat="strategy=revolve units=blocks snapshots=2" -o %t.llama.b.mlir
// RUN: mw-eval %t.llama.b.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-models bert --preset bert-tiny --layers 4 --train --precision fp16 -o %t.bert.mlir
// RUN: mw-eval %t.bert.mlir --entry train_step --random-inputs 7 --save-inputs %t.bert.in --print > %t.bert.ref
// RUN: mw-opt %t.bert.mlir --mw-remat="strategy=revolve snapshots=1" -o %t.bert.r.mlir
// RUN: mw-eval %t.bert.r.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -

// Values several links read: llama's rotary cos/sin tables (constants)
// and unfused attention's causal mask, recomputed or read where a sweep
// needs them; bf16 parameter casts go with their link.
// RUN: mw-models llama --preset llama-tiny --layers 4 --rotary --train -o %t.rot.mlir
// RUN: mw-eval %t.rot.mlir --entry train_step --random-inputs 3 --save-inputs %t.rot.in --print > %t.rot.ref
// RUN: mw-opt %t.rot.mlir --mw-remat="strategy=revolve snapshots=1" -o %t.rot.r.mlir
// RUN: mw-eval %t.rot.r.mlir --entry train_step --inputs %t.rot.in --print | diff %t.rot.ref -
// RUN: mw-models gpt --preset gpt2-tiny --layers 4 --attention=unfused --train --precision bf16 -o %t.unf.mlir
// RUN: mw-eval %t.unf.mlir --entry train_step --random-inputs 3 --save-inputs %t.unf.in --print > %t.unf.ref
// RUN: mw-opt %t.unf.mlir --mw-remat="strategy=revolve units=blocks snapshots=1" -o %t.unf.r.mlir
// RUN: mw-eval %t.unf.r.mlir --entry train_step --inputs %t.unf.in --print | diff %t.unf.ref -

// auto offers revolve's schedules. On a ZeRO-3 step of 32 wide blocks
// (8 ranks, every block's parameters gathered again for its backward) the
// inputs of the blocks dominate the arena near the smallest peaks: every-k
// k=1 keeps all 32 of them (peak 173171988 B), and below its peak the
// cheapest plans that fit are revolve's.
// RUN: mw-models gpt --preset gpt2-tiny --layers 32 --hidden 512 --heads 8 --ffn 2048 --seq 128 --vocab 256 --batch 8 --train -o %t.wide.mlir
// RUN: mw-opt %t.wide.mlir --mw-zero="stage=3 ranks=8" -o %t.z3.mlir
// RUN: mw-opt %t.z3.mlir --mw-remat="strategy=every-k k=1 hoist-updates=true verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EVERY
// EVERY: peak=173171988 {{.*}} arena_floor={{[1-9][0-9]*}}
// RUN: mw-opt %t.z3.mlir --mw-remat="budget=166000000 hoist-updates=true verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO166
// AUTO166: remark: {{.*}}mw-remat: strategy=auto budget=166000000 peak=165564692 {{.*}} chosen="revolve regions snapshots=8 last from forward"
// RUN: mw-opt %t.z3.mlir --mw-remat="budget=164000000 hoist-updates=true verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=AUTO164
// Lower, recomputing internals per use holds less than fewer snapshots do:
// 6 snapshots per use fit where 2 with the sweep's internals did.
// AUTO164: remark: {{.*}}mw-remat: strategy=auto budget=164000000 peak=163990804 {{.*}} recompute_flops=65583328768 {{.*}} chosen="revolve regions snapshots=6 last from forward per-use"

// At GPT-3 175B's width (8 blocks, ZeRO-3 over 64 ranks, one sample each,
// f32), per use lowers the arena by 402653184 B, the MLP's 2048 x 49152
// pre-activation: with its sweep it lives across the MLP's backward, where
// the gathered output projection's weight and its gradient are; per use it
// is remade for the GELU's gradient, after they are gone.
// RUN: mw-models gpt --preset gpt3-175b --layers 8 --batch 64 --train --emit-locations=false -o %t.g3.mlir
// RUN: mw-opt %t.g3.mlir --mw-zero="stage=3 ranks=64" --mw-remat="strategy=revolve snapshots=1 internals=sweep hoist-updates=true verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=G3-SWEEP
// G3-SWEEP: remark: {{.*}}mw-remat: strategy=revolve {{.*}} arena=6597591296 {{.*}} arena_floor=5792268288
// RUN: mw-opt %t.g3.mlir --mw-zero="stage=3 ranks=64" --mw-remat="strategy=revolve snapshots=1 hoist-updates=true verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=G3-USE
// G3-USE: remark: {{.*}}mw-remat: strategy=revolve {{.*}} arena=6194921728 {{.*}} chosen="revolve regions snapshots=1 per-use"

// A bad value of internals.
// RUN: not mw-opt %t.mlir --mw-remat="strategy=revolve internals=always" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD-INTERNALS
// BAD-INTERNALS: error: {{.*}}unknown internals 'always' (expected per-use or sweep)
