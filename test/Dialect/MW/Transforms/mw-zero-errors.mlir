// Bad input to --mw-zero: one readable error each, and a non-zero exit.
// RUN: not mw-opt %s --mw-autodiff --mw-zero="stage=4 ranks=2" 2>&1 | FileCheck %s --check-prefix=STAGE
// STAGE: error: mw-zero: stage=4 is not a ZeRO stage (0, 1, 2 or 3)
// RUN: not mw-opt %s --mw-autodiff --mw-zero="ranks=0" 2>&1 | FileCheck %s --check-prefix=RANKS
// RANKS: error: mw-zero: ranks=0: give the number of data-parallel ranks, at least 1
// RUN: not mw-opt %s --mw-autodiff --mw-zero="ranks=3" 2>&1 | FileCheck %s --check-prefix=BATCH
// BATCH: error: 'func.func' op mw-zero: the batch of 'x' ('tensor<4x3xf32>') is not divisible by ranks=3
// RUN: not mw-opt %s --mw-zero="ranks=2 function=forward" 2>&1 | FileCheck %s --check-prefix=NOOPT
// NOOPT: error: 'func.func' op mw-zero: the step has no optimizer update (mw.adamw or mw.sgd); run --mw-autodiff first
// RUN: not mw-opt %s --mw-autodiff --mw-zero="ranks=2 function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// NOFUNC: error: mw-zero: no function @nope to shard (function=)
// RUN: not mw-opt %s --mw-autodiff --mw-zero="ranks=2 overlap=maybe" 2>&1 | FileCheck %s --check-prefix=OVERLAP
// OVERLAP: error: mw-zero: overlap=maybe: expected on or off
// RUN: not mw-opt %s --mw-autodiff --mw-zero="ranks=2 reduce-bucket=0" 2>&1 | FileCheck %s --check-prefix=BUCKET
// BUCKET: error: mw-zero: reduce-bucket=0: a bucket holds at least one element
// Grad-accum micro-batches must split evenly across the ranks.
// RUN: mw-models gpt --preset gpt2-tiny --train --grad-accum 2 -o %t.accum.mlir
// RUN: not mw-opt %t.accum.mlir --mw-zero="ranks=2" 2>&1 | FileCheck %s --check-prefix=ACCUM
// ACCUM: 'mw.slice' op mw-zero cannot split the batch here: the slice's offset or size along the batch is not divisible by the rank count
// A transpose that moves the batch out of dimension 0.
// RUN: not mw-opt %S/Inputs/zero-transpose.mlir --mw-autodiff --mw-zero="ranks=2" 2>&1 | FileCheck %s --check-prefix=MOVE
// MOVE: 'mw.transpose' op mw-zero cannot split the batch here: the transpose moves dimension 0
// MOVE-NOT: func.func

func.func @forward(%w: tensor<3x2xf32> {mw.role = #mw.role<param>, mw.name = "w"},
                   %x: tensor<4x3xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                   %y: tensor<4xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %l = mw.cross_entropy %h, %y : (tensor<4x2xf32>, tensor<4xi32>) -> tensor<f32>
  return %l : tensor<f32>
}
