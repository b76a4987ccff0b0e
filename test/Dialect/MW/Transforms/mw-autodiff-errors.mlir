// RUN: mw-opt %s -split-input-file --mw-autodiff -verify-diagnostics
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="optimizer=lamb" -o /dev/null 2>&1 | FileCheck %s --check-prefix=OPT
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="precision=fp8" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PREC
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="grad-accum=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ACCUM
// Options out of range are errors naming the option and its range.
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="weight-decay=-0.5" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WD
// WD: error: mw-autodiff: weight-decay must be a finite number >= 0 (when not given: 0.01 for adamw, 0 for sgd), got '-0.5'
// -1 once stood for "not given" and was accepted silently (issue 20).
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="weight-decay=-1" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WD1
// WD1: error: mw-autodiff: weight-decay must be a finite number >= 0 (when not given: 0.01 for adamw, 0 for sgd), got '-1'
// RUN: not mw-models gpt --train --weight-decay=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=WD1
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="weight-decay=abc" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WDTEXT
// WDTEXT: got 'abc'

// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="optimizer=sgd momentum=2" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MOM
// MOM: error: mw-autodiff: momentum must lie in [0, 1) (the momentum buffer grows without bound otherwise), got 2.00
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="eps=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EPS
// EPS: error: mw-autodiff: eps must be finite and > 0 (AdamW divides by sqrt(v) + eps), got 0.00
// An empty step-name would write IR that does not parse again.
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="step-name=" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EMPTY
// EMPTY: error: mw-autodiff: step-name must name the function to create, got an empty name
// A grad-accum that would take minutes stops at once, naming the limit.
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="grad-accum=1000000" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: mw-autodiff: grad-accum=1000000 would build about {{[0-9]+}} ops ({{.*}}); the limit is 2000000 ops: use fewer, larger micro-batches
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="entry=missing" -o /dev/null 2>&1 | FileCheck %s --check-prefix=ENTRY
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="precision=bf16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="nesterov=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="step-name=forward" -o /dev/null 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="precision=fp16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP16
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="precision=fp16 loss-scale-window=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=WINDOW
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="precision=fp16 loss-scale-hysteresis=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=HYST
// RUN: not mw-opt %S/Inputs/linear-classifier.mlir --mw-autodiff="precision=fp16 loss-scale-min=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MIN

// OPT: error: mw-autodiff: unknown optimizer 'lamb' (expected adamw or sgd)
// PREC: error: mw-autodiff: unknown precision 'fp8' (expected fp32, bf16 or fp16)
// ACCUM: error: mw-autodiff: grad-accum must be >= 1, got 0
// ENTRY: error: mw-autodiff: no function @missing with a body (set entry=NAME)
// BF16: error: mw-autodiff: parameter 'fc.weight' has type 'tensor<8x4xf32>' but precision=bf16 computes in 'bf16'; generate the forward function in the compute type (mw-models --dtype)
// NESTEROV: error: mw-autodiff: nesterov needs optimizer=sgd and a non-zero momentum
// NAME: error: mw-autodiff: the module already has a symbol @forward (set step-name=NAME)
// FP16: error: mw-autodiff: parameter 'fc.weight' has type 'tensor<8x4xf32>' but precision=fp16 computes in 'f16'; generate the forward function in the compute type (mw-models --dtype)
// WINDOW: error: mw-autodiff: loss-scale-window must be >= 1, got 0
// HYST: error: mw-autodiff: loss-scale-hysteresis must be >= 1, got 0
// MIN: error: mw-autodiff: loss-scale-min must be finite and positive

// expected-error@+1 {{mw-autodiff: @forward must return one rank-0 float tensor (the loss), but returns 'tensor<4xf32>'}}
func.func @forward(%p: tensor<4xf32> {mw.role = #mw.role<param>}) -> tensor<4xf32> {
  return %p : tensor<4xf32>
}

// -----

// expected-error@+1 {{mw-autodiff: @forward has no argument with role #mw.role<param>}}
func.func @forward(%x: tensor<4xf32>) -> tensor<f32> {
  %s = mw.reduce_sum %x axes = [0] : tensor<4xf32> -> tensor<f32>
  return %s : tensor<f32>
}

// -----

func.func @forward(%p: tensor<8xf32> {mw.role = #mw.role<param>}) -> tensor<f32> {
  // expected-error@+1 {{'mw.slice' op the gradient of a strided slice is not supported}}
  %s = mw.slice %p offsets = [0] sizes = [4] strides = [2] : tensor<8xf32> -> tensor<4xf32>
  %l = mw.reduce_sum %s axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @forward(%p: tensor<4xf32> {mw.role = #mw.role<param>}, %dy: tensor<4xf32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.relu_grad' op lies on the path from the parameters to the loss but has no gradient rule}}
  %g = mw.relu_grad %p, %dy : tensor<4xf32>
  %l = mw.reduce_sum %g axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// expected-warning@+1 {{mw-autodiff: parameter 'unused' does not reach the loss; its gradient is zero}}
func.func @forward(%p: tensor<4xf32> {mw.role = #mw.role<param>, mw.name = "used"},
                   %q: tensor<4xf32> {mw.role = #mw.role<param>, mw.name = "unused"}) -> tensor<f32> {
  %l = mw.reduce_sum %p axes = [0] : tensor<4xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

func.func @forward(%x: tensor<2x4xf32> {mw.role = #mw.role<param>},
                   %g: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<f32> {
  // expected-error@+1 {{'mw.layer_norm' op result #2 (a saved statistic) is used on the path to the loss; its gradient is not supported}}
  %y, %mean, %rstd = mw.layer_norm %x, %g, %b : (tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2xf32>, tensor<2xf32>)
  %l = mw.reduce_sum %rstd axes = [0] : tensor<2xf32> -> tensor<f32>
  return %l : tensor<f32>
}
