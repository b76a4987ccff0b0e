// RUN: mw-opt %s -split-input-file --mw-memory-report -o /dev/null -verify-diagnostics
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=format=yaml -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=output=%t.missing/dir/report.txt -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTPUT
// A failed run writes nothing.
// RUN: not test -e %t.missing

// The verdict's options: one error naming the option, with a location.
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=device-memory=abc -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=device-memory=0 -o /dev/null 2>&1 | FileCheck %s --check-prefix=SIZE0
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=device-memory=16XB -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNIT
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=target=TPU -o /dev/null 2>&1 | FileCheck %s --check-prefix=TARGET
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=target=cpu -o /dev/null 2>&1 | FileCheck %s --check-prefix=CPU
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report="device-memory=1GB ranks=0" -o /dev/null 2>&1 | FileCheck %s --check-prefix=RANKS
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report="device-memory=1GB function=step" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FUNCTION

// A step the verdict cannot plan: the nested pipeline's error, once, at the step.
// RUN: not mw-opt %S/Inputs/verdict-unplannable.mlir --allow-unregistered-dialect --mw-memory-report=device-memory=1GB -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNPLANNABLE

// UNPLANNABLE: verdict-unplannable.mlir:2:1: error: mw-memory-report: planning a copy of @train_step for the verdict failed: op was not bufferized
// UNPLANNABLE-NOT: error
// SIZE: mw-memory-report.mlir:0:0: error: mw-memory-report: device-memory='abc' is not a size (expected a positive number with an optional unit: B, KB, MB, GB, TB (powers of 10), KiB, MiB, GiB, TiB (powers of 2), e.g. 16GB)
// SIZE0: error: mw-memory-report: device-memory='0' is not a size
// UNIT: error: mw-memory-report: device-memory='16XB' is not a size
// TARGET: error: mw-memory-report: unknown target 'TPU' (expected h200, h100, a100, v100, V100-16GB, RTX4090, V100-32GB, A100-40GB, A6000, L40S, A100-80GB, H100-80GB, H200-141GB, B200-192GB or cpu)
// CPU: error: mw-memory-report: target 'cpu' has no device memory to check against; give device-memory=SIZE
// RANKS: error: mw-memory-report: ranks=0 must be at least 1
// FUNCTION: error: mw-memory-report: no function @step for the verdict; name the step with function=NAME
// SIZE-NOT: module
// FUNCTION-NOT: func.func

// FORMAT: error: mw-memory-report: unknown format 'yaml' (expected text, json or html)
// OUTPUT: error: mw-memory-report: cannot write '{{.*}}report.txt':

// expected-error@+1 {{argument #0 has a dynamic shape 'tensor<?x4xf32>'; the memory report needs static shapes}}
func.func @dynamic_arg(%a: tensor<?x4xf32>) {
  return
}

// -----

func.func @dynamic_result_of_foreign_op(%a: tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<4xf32>
  // expected-error@+1 {{result #0 of 'tensor.empty' has a dynamic shape 'tensor<?xf32>'; the memory report needs static shapes}}
  %e = tensor.empty(%n) : tensor<?xf32>
  return
}
