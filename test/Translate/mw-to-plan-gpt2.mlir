// gpt2-tiny's training step end to end: mw-models | mw-opt pipeline |
// mw-translate. The plan has one kernel per mw.kernel of train_step and one
// persistent per argument plus the two buffers the step allocates and
// returns (the loss and the next optimizer step); the same input gives the
// same bytes; an arena argument gives the same plan as an arena allocation.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.step.mlir
// RUN: mw-opt %t.step.mlir --mw-bufferize --mw-static-arena --mw-verify-plan -mlir-print-debuginfo -o %t.planned.mlir 2>/dev/null
// RUN: mw-translate %t.planned.mlir --mw-to-plan -o %t.a.mwplan
// RUN: mw-translate %t.planned.mlir --mw-to-plan -o %t.b.mwplan
// RUN: cmp %t.a.mwplan %t.b.mwplan
// RUN: od -A n -c -j 4 -N 4 %t.a.mwplan | FileCheck %s --check-prefix=IDENT
// RUN: mw-translate %t.planned.mlir --mw-plan-json -o %t.json
// RUN: FileCheck %s < %t.json

// Counted from the IR: mw.kernel ops and arguments of train_step (the last
// function of the module).
// RUN: sed -n '/func.func @train_step/,$p' %t.planned.mlir | grep -c 'mw.kernel' > %t.ir-kernels
// RUN: grep -c '"op":' %t.json > %t.plan-kernels
// RUN: diff %t.ir-kernels %t.plan-kernels
// RUN: sed -n '/func.func @train_step/p' %t.planned.mlir | grep -o 'arg[0-9]*: memref' | grep -c . > %t.ir-args
// RUN: grep -c '"argument":[0-9]' %t.json > %t.plan-args
// RUN: diff %t.ir-args %t.plan-args

// RUN: mw-opt %t.step.mlir --mw-bufferize --mw-static-arena=arena=argument -o %t.arg.mlir 2>/dev/null
// RUN: mw-translate %t.arg.mlir --mw-plan-json -o %t.arg.json
// RUN: grep -v '"loc"' %t.json > %t.noloc.json
// RUN: grep -v '"loc"' %t.arg.json | diff %t.noloc.json -

// IDENT: M{{ +}}W{{ +}}P{{ +}}L

// CHECK:      "function": "train_step",
// CHECK:      "persistents": [
// CHECK-NEXT:   {"name":"wte","dtype":"f32","shape":[256,64],"role":"param","argument":0},
// CHECK:        {"name":"ln_f.bias.exp_avg","dtype":"f32","shape":[64],"role":"optimizer_state","argument":82},
// CHECK:        {"name":"optimizer.step","dtype":"i64","shape":[],"role":"optimizer_state","argument":84},
// CHECK-NEXT:   {"name":"tokens","dtype":"i32","shape":[2,32],"role":"input","argument":85},
// CHECK-NEXT:   {"name":"labels","dtype":"i32","shape":[2,32],"role":"label","argument":86},
// CHECK-NEXT:   {"name":"loss","dtype":"f32","shape":[],"role":"output","argument":-1},
// The next step counter is named after its result, which the argument's
// name already binds.
// CHECK-NEXT:   {"name":"result[[STEP:[0-9]+]]","dtype":"i64","shape":[],"role":"optimizer_state","argument":-1}
// CHECK-NEXT: {{^ *}}],{{$}}

// CHECK:      "op": "mw.embedding",
// CHECK-NEXT: "loc": "embeddings",
// CHECK:      "op": "mw.gelu",
// CHECK-NEXT: "loc": "h.0.mlp",
// CHECK-NEXT: "attrs": [
// CHECK-NEXT:   {"name":"approximate","kind":"string","value":"tanh"}
// CHECK:      "op": "mw.adamw",

// CHECK:      "results": [
// CHECK-NEXT:   {"name":"loss","role":"output","value":{"space":"persistent","persistent":87,"name":"loss",
// CHECK-NEXT:   {"name":"wte","role":"param","value":{"space":"persistent","persistent":0,"name":"wte",
// CHECK:        {"name":"optimizer.step","role":"optimizer_state","value":{"space":"persistent","persistent":88,"name":"result[[STEP]]",
// CHECK-NEXT: {{^ *}}],{{$}}
