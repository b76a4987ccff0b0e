// --mw-offload refuses what it cannot stream with one error at the module or
// the function, a non-zero exit and no output.
// RUN: not mw-opt %s --mw-offload="weights=cpu" -o %t.out 2>&1 | FileCheck %s --check-prefix=NOLAYERS
// RUN: not test -e %t.out
// RUN: not mw-opt %s --mw-offload="weights=cpu function=forward pinned-layers=3" 2>&1 | FileCheck %s --check-prefix=PINNED
// RUN: not mw-opt %s --mw-offload="weights=cpu function=forward prefetch=-1" 2>&1 | FileCheck %s --check-prefix=PREFETCH
// RUN: not mw-opt %s --mw-offload="weights=cpu function=forward pinned-layers=-2" 2>&1 | FileCheck %s --check-prefix=NEGPIN
// RUN: not mw-opt %s --mw-offload="weights=gpu function=forward" 2>&1 | FileCheck %s --check-prefix=WEIGHTS
// RUN: not mw-opt %s --mw-offload="function=forward" 2>&1 | FileCheck %s --check-prefix=NOWEIGHTS
// RUN: not mw-opt %s --mw-offload="weights=nvme function=forward" 2>&1 | FileCheck %s --check-prefix=NOPATH
// RUN: not mw-opt %s --mw-offload="weights=cpu path=/tmp function=forward" 2>&1 | FileCheck %s --check-prefix=CPUPATH
// RUN: not mw-opt %s --mw-offload="weights=cpu function=nope" 2>&1 | FileCheck %s --check-prefix=NOFUNC
// RUN: not mw-opt %s --mw-offload="weights=cpu function=train_step" 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: mw-opt %s --mw-offload="weights=cpu function=forward" -o %t.once.mlir
// RUN: not mw-opt %t.once.mlir --mw-offload="weights=cpu function=forward" 2>&1 | FileCheck %s --check-prefix=TWICE
// A training step from mw-models, as a whole module.
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.train.mlir
// RUN: not mw-opt %t.train.mlir --mw-offload="weights=cpu" 2>&1 | FileCheck %s --check-prefix=TRAINMODEL
// RUN: mw-opt %s --mw-train-pipeline -o %t.planned.mlir 2>/dev/null
// RUN: not mw-opt %t.planned.mlir --mw-offload="weights=cpu function=forward" 2>&1 | FileCheck %s --check-prefix=BUFFERIZED
// BUFFERIZED: error: mw-offload: @forward is bufferized; run --mw-offload on tensors, before --mw-bufferize or --mw-train-pipeline
// mw.fetch and mw.wait have no gradient rule: offload comes after autodiff.
// RUN: mw-models gpt --preset gpt2-tiny -o %t.fwd.mlir
// RUN: not mw-opt %t.fwd.mlir --mw-offload="weights=cpu" --mw-autodiff 2>&1 | FileCheck %s --check-prefix=AUTODIFF
// AUTODIFF: error: {{.*}}'mw.wait' op lies on the path from the parameters to the loss but has no gradient rule

// NOLAYERS: error: mw-offload: @unlayered has no layered parameters (an all-digit component in the mw.name of a param, as in 'h.3.attn.c_attn.weight'): nothing to stream
// NOLAYERS-NOT: error:
// PINNED: error: mw-offload: pinned-layers=3 exceeds the 2 layers of @forward
// PREFETCH: error: mw-offload: prefetch=-1 must be >= 0
// NEGPIN: error: mw-offload: pinned-layers=-2 must be >= 0
// WEIGHTS: error: mw-offload: weights='gpu' is not a place for weights (cpu, nvme)
// NOWEIGHTS: error: mw-offload: weights= (cpu or nvme) is required, or a config= whose zero_optimization.offload_param.device is cpu or nvme
// NOPATH: error: mw-offload: weights=nvme needs path=DIR, the directory of the weights file (or the config's offload_param.nvme_path)
// CPUPATH: error: mw-offload: path='/tmp' is for weights=nvme; weights=cpu keeps them in host memory
// NOFUNC: error: mw-offload: no function @nope to offload (function=)
// TRAIN: mw-offload-errors.mlir:[[#@LINE+22]]:1: error: mw-offload: offload of a training step is not supported: @train_step has gradient or optimizer-state arguments or results; --mw-offload streams the weights of forward, prefill and decode steps
// TWICE: error: mw-offload: @forward is offloaded already
// TRAINMODEL: error: {{.*}}mw-offload: offload of a training step is not supported: @train_step

func.func @forward(%e: tensor<4x4xf32> {mw.name = "wte", mw.role = #mw.role<param>},
                   %w0: tensor<4x4xf32> {mw.name = "h.0.w", mw.role = #mw.role<param>},
                   %w1: tensor<4x4xf32> {mw.name = "h.1.w", mw.role = #mw.role<param>},
                   %x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<2x4xf32> {mw.name = "y", mw.role = #mw.role<output>}) {
  %h = mw.matmul %x, %e : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %a = mw.matmul %h, %w0 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %b = mw.matmul %a, %w1 : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %b : tensor<2x4xf32>
}

func.func @unlayered(%e: tensor<4x4xf32> {mw.name = "wte", mw.role = #mw.role<param>},
                     %x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<2x4xf32> {mw.name = "y", mw.role = #mw.role<output>}) {
  %h = mw.matmul %x, %e : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %h : tensor<2x4xf32>
}

func.func @train_step(%w0: tensor<4x4xf32> {mw.name = "h.0.w", mw.role = #mw.role<param>},
                      %x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<4x4xf32> {mw.name = "h.0.w", mw.role = #mw.role<grad>}) {
  return %w0 : tensor<4x4xf32>
}
