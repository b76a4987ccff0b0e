// Stage 3 with overlap=on: each bucket's parameters are gathered ahead of
// their use by a depth fixed at compile time, depth = clamp(prefetch-bucket
// / largest bucket, 1, max-live-parameters / largest bucket - 1) (gather k
// starts before the wait of gather k - depth; the first `depth` gathers
// before the first wait), so the planned peak is the same in every step.
// gpt2-tiny, every parameter sharded (persistence-threshold=0), buckets of
// at most 30000 elements: the largest is 29696 + padding.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir

// Depth 1 (prefetch-bucket below a bucket): one gather in flight ahead.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 overlap=on persistence-threshold=0 reduce-bucket=30000 prefetch-bucket=1" -o %t.d1.mlir
// RUN: FileCheck %s --check-prefix=D1 < %t.d1.mlir
// D1: %all_gather = mesh.all_gather
// D1-NEXT: %all_gather_0 = mesh.all_gather
// D1-NEXT: mw.wait %all_gather reading
// D1-NOT: mesh.all_gather
// D1: %all_gather_1 = mesh.all_gather
// D1-NEXT: mw.wait %all_gather_0 reading
// D1-NOT: mesh.all_gather
// D1: %all_gather_2 = mesh.all_gather
// D1-NEXT: mw.wait %all_gather_1 reading

// Depth 2 (prefetch-bucket=60000, two buckets): two ahead, started in the
// order of their uses.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 overlap=on persistence-threshold=0 reduce-bucket=30000 prefetch-bucket=60000" -o %t.d2.mlir
// RUN: FileCheck %s --check-prefix=D2 < %t.d2.mlir
// D2: %all_gather = mesh.all_gather %[[P0:arg[0-9]+]]
// D2-NEXT: %all_gather_0 = mesh.all_gather %[[P1:arg[0-9]+]]
// D2-NEXT: %all_gather_1 = mesh.all_gather %[[P2:arg[0-9]+]]
// D2-NEXT: mw.wait %all_gather reading %[[P0]]
// D2-NOT: mesh.all_gather
// D2: %all_gather_2 = mesh.all_gather
// D2-NEXT: mw.wait %all_gather_0 reading %[[P1]]
// D2-NOT: mesh.all_gather
// D2: %all_gather_3 = mesh.all_gather
// D2-NEXT: mw.wait %all_gather_1 reading %[[P2]]

// A prefetch bucket larger than the model: every gather starts before the
// first wait (the forward's six and the backward's), as many as
// max-live-parameters allows; with max-live-parameters=90000 (three
// buckets) the depth is 2 again.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 overlap=on persistence-threshold=0 reduce-bucket=30000 prefetch-bucket=1000000" -o %t.all.mlir
// RUN: FileCheck %s --check-prefix=ALL < %t.all.mlir
// ALL-COUNT-12: mesh.all_gather
// ALL-NEXT: mw.wait %all_gather reading
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 overlap=on persistence-threshold=0 reduce-bucket=30000 prefetch-bucket=1000000 max-live-parameters=90000" -o %t.live.mlir
// RUN: diff %t.d2.mlir %t.live.mlir

// Where the gathers start changes no value: with one rank the programs give
// the same outputs, bit for bit.
// RUN: mw-opt %t.mlir --mw-zero="ranks=1 stage=3 overlap=on persistence-threshold=0 reduce-bucket=30000 prefetch-bucket=1" -o %t.r1.mlir
// RUN: mw-opt %t.mlir --mw-zero="ranks=1 stage=3 overlap=on persistence-threshold=0 reduce-bucket=30000 prefetch-bucket=1000000" -o %t.r1all.mlir
// RUN: mw-eval %t.r1.mlir --entry train_step --random-inputs 3 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.r1all.mlir --entry train_step --inputs %t.in --print | diff %t.ref -

// The planned per-rank report splits the arena by kind: gathered
// parameters (what the all-gathers write), gradient buckets, collectives in
// flight and activations, in all and at the peak, with the buffers live
// there. One bucket, gathered for the forward and again for the backward
// (474112 B each); the backward's gather starts before the forward's wait
// (depth 1 or more), so both are live at the peak.
// RUN: mw-opt %t.mlir --mw-zero="ranks=2 stage=3 overlap=on persistence-threshold=0" --mw-train-pipeline --mw-memory-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=KINDS
// KINDS: per rank: ZeRO stage 3 (attribute), 2 ranks
// KINDS: arena by kind (bytes, no reuse): activations {{[1-9][0-9]*}}; gradient_buckets {{[1-9][0-9]*}}; gathered_parameters 948224; collectives_in_flight 0;
// KINDS-NEXT: at the peak ({{[0-9]+}} B): activations {{[1-9][0-9]*}}; gradient_buckets {{[0-9]+}}; gathered_parameters 948224; collectives_in_flight 0;
// KINDS-NEXT: {{ +}}474112 B  gathered_parameters
// KINDS-NEXT: {{ +}}474112 B  gathered_parameters
