// RUN: not mw-opt %s --one-shot-bufferize 2>&1 | FileCheck %s --check-prefix=RAW
// RUN: mw-opt %s --mw-form-kernels | not mw-opt --one-shot-bufferize 2>&1 | FileCheck %s --check-prefix=BODY

// Upstream One-Shot Bufferize alone does not know to form kernels or to skip
// their bodies; both are clear errors, not crashes or hangs.
// RAW: error: mw ops bufferize as mw.kernel ops: run --mw-form-kernels before One-Shot Bufferize, or use --mw-bufferize
// BODY: error: an mw op inside an mw.kernel body computes on the kernel's buffers and is not bufferized on its own: bufferize with --mw-bufferize, whose One-Shot Bufferize skips kernel bodies
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %a = mw.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
