// RUN: mw-opt %s -split-input-file --mw-memory-report -o /dev/null -verify-diagnostics
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=format=yaml -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORMAT
// RUN: not mw-opt %S/mw-memory-report.mlir --mw-memory-report=output=%t.missing/dir/report.txt -o /dev/null 2>&1 | FileCheck %s --check-prefix=OUTPUT
// A failed run writes nothing.
// RUN: not test -e %t.missing

// FORMAT: error: mw-memory-report: unknown format 'yaml' (expected text or json)
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
