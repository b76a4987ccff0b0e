// End to end: a linalg program on tensors, bufferized with upstream passes,
// runs with the same printed result (a) as bufferized and (b) after
// --mw-static-arena and --mw-verify-plan, both lowered to LLVM by upstream
// passes and run by mlir-cpu-runner. Everything runs in stock mlir-opt-19
// with the plugin; mw-opt's own registration must give the same plan.
//
// RUN: %mlir_opt %s --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:   --buffer-deallocation-pipeline -mlir-print-debuginfo -o %t.bufferized.mlir
//
// (a) Bufferized as is.
// RUN: %mlir_opt %t.bufferized.mlir --convert-linalg-to-loops \
// RUN:   --expand-strided-metadata --lower-affine --finalize-memref-to-llvm \
// RUN:   --convert-scf-to-cf --convert-cf-to-llvm --convert-arith-to-llvm \
// RUN:   --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | %mlir_cpu_runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils \
// RUN: | sed -e 's/base@ = 0x[0-9a-f]*/base@ = ADDR/' > %t.reference.txt
// RUN: FileCheck %s --check-prefix=OUT < %t.reference.txt
//
// (b) Planned and checked, then lowered and run the same way.
// RUN: %mlir_opt --load-pass-plugin=%mw_plugin --load-dialect-plugin=%mw_plugin \
// RUN:   --pass-pipeline="builtin.module(mw-static-arena{remarks=true},func.func(mw-verify-plan))" \
// RUN:   %t.bufferized.mlir -o %t.planned.mlir 2> %t.remarks.txt
// RUN: FileCheck %s --check-prefix=PLAN < %t.planned.mlir
// RUN: FileCheck %s --check-prefix=REMARK < %t.remarks.txt
// RUN: %mlir_opt %t.planned.mlir --convert-linalg-to-loops \
// RUN:   --expand-strided-metadata --lower-affine --finalize-memref-to-llvm \
// RUN:   --convert-scf-to-cf --convert-cf-to-llvm --convert-arith-to-llvm \
// RUN:   --convert-func-to-llvm --reconcile-unrealized-casts \
// RUN: | %mlir_cpu_runner -e main -entry-point-result=void \
// RUN:   -shared-libs=%mlir_c_runner_utils,%mlir_runner_utils \
// RUN: | sed -e 's/base@ = 0x[0-9a-f]*/base@ = ADDR/' > %t.planned.txt
// RUN: diff %t.reference.txt %t.planned.txt
//
// mw-opt bufferizes and plans on its own, with the same result.
// RUN: mw-opt %s --one-shot-bufferize="bufferize-function-boundaries" \
// RUN:   --buffer-deallocation-pipeline --mw-static-arena --mw-verify-plan \
// RUN:   -o %t.mw-opt.mlir 2>/dev/null
// RUN: diff %t.planned.mlir %t.mw-opt.mlir

// The MLP's intermediate buffers (named by their tensor.empty's loc), in op
// order, with their lifetimes over the positions of @mlp's 23 top-level ops
// after bufferization (2 constants come first):
//   h1 = x W1          8x32xf32 1024 B  [2, 7)   -> +1024
//   r1 = relu(h1)      8x32xf32 1024 B  [5, 12)  -> +0
//   h2 = r1 W2         8x32xf32 1024 B  [7, 12)  -> +1024  (reuse h1)
//   s  = h2 + r1       8x32xf32 1024 B  [10, 15) -> +2048
//   y  = s W3          8x8xf32   256 B  [12, 17) -> +0     (reuse r1)
//   z  = y * 0.5       8x8xf32   returned: not planned
// At ops 10 and 11, r1, h2 and s are live: 3072 B is the lower bound, and
// the plan meets it (without reuse: 4352 B).
// PLAN-LABEL: func.func @mlp
// PLAN-SAME:    mw.arena_alignment = 256 : i64, mw.arena_size = 3072 : i64, mw.lower_bound = 3072 : i64
// PLAN:         %[[ARENA:.*]] = memref.alloc() {alignment = 256 : i64, mw.arena} : memref<3072xi8>
// PLAN-DAG:     %[[C0:.*]] = arith.constant 0 : index
// PLAN-DAG:     %[[C1024:.*]] = arith.constant 1024 : index
// PLAN-DAG:     %[[C2048:.*]] = arith.constant 2048 : index
// PLAN:         memref.view %[[ARENA]][%[[C1024]]][] {mw.buffer = "h1"}
// PLAN:         memref.view %[[ARENA]][%[[C0]]][] {mw.buffer = "r1"}
// PLAN:         memref.view %[[ARENA]][%[[C1024]]][] {mw.buffer = "h2"}
// PLAN:         memref.view %[[ARENA]][%[[C2048]]][] {mw.buffer = "s"}
// PLAN:         memref.view %[[ARENA]][%[[C0]]][] {mw.buffer = "y"}
// PLAN:         %[[Z:.*]] = memref.alloc() {{.*}} : memref<8x8xf32>
// PLAN-NOT:     memref.dealloc %{{.*}} : memref<8x32xf32>
// PLAN:         memref.dealloc %[[ARENA]] : memref<3072xi8>
// PLAN-NEXT:    return %[[Z]] : memref<8x8xf32>
// The inputs main passes to @mlp escape into the call: main is not planned.
// PLAN-LABEL: func.func @main
// PLAN-NOT:     mw.arena
// REMARK: remark: loc("z"): returned buffer is not planned: 'z'
// REMARK: remark: loc("x"): buffer escaping into 'func.call' is not planned: 'x'

// OUT:      Unranked Memref base@ = ADDR rank = 2 offset = 0 sizes = [8, 8] strides = [8, 1] data =
// OUT-NEXT: [
#id = affine_map<(i, j) -> (i, j)>
func.func private @printMemrefF32(memref<*xf32>)

func.func @mlp(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>,
               %w2: tensor<32x32xf32>, %w3: tensor<32x8xf32>) -> tensor<8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e0 = tensor.empty() : tensor<8x32xf32> loc("h1")
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h1 = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>)
                      outs(%f0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e1 = tensor.empty() : tensor<8x32xf32> loc("r1")
  %r1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : tensor<8x32xf32>) outs(%e1 : tensor<8x32xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.maximumf %a, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x32xf32> loc("h2")
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h2 = linalg.matmul ins(%r1, %w2 : tensor<8x32xf32>, tensor<32x32xf32>)
                      outs(%f2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<8x32xf32> loc("s")
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2, %r1 : tensor<8x32xf32>, tensor<8x32xf32>) outs(%e3 : tensor<8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %sum = arith.addf %a, %b : f32
    linalg.yield %sum : f32
  } -> tensor<8x32xf32>
  %e4 = tensor.empty() : tensor<8x8xf32> loc("y")
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %y = linalg.matmul ins(%s, %w3 : tensor<8x32xf32>, tensor<32x8xf32>)
                     outs(%f4 : tensor<8x8xf32>) -> tensor<8x8xf32>
  %e5 = tensor.empty() : tensor<8x8xf32> loc("z")
  %z = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%y : tensor<8x8xf32>) outs(%e5 : tensor<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %p = arith.mulf %a, %half : f32
    linalg.yield %p : f32
  } -> tensor<8x8xf32>
  return %z : tensor<8x8xf32>
}

// Deterministic inputs: element (i, j) = ((a*i + b*j) mod 11) / 8 - 0.5.
func.func @pattern(%i: index, %j: index, %a: index, %b: index) -> f32 {
  %c11 = arith.constant 11 : index
  %eighth = arith.constant 0.125 : f32
  %half = arith.constant 0.5 : f32
  %ai = arith.muli %a, %i : index
  %bj = arith.muli %b, %j : index
  %sum = arith.addi %ai, %bj : index
  %mod = arith.remui %sum, %c11 : index
  %int = arith.index_cast %mod : index to i32
  %float = arith.sitofp %int : i32 to f32
  %scaled = arith.mulf %float, %eighth : f32
  %v = arith.subf %scaled, %half : f32
  return %v : f32
}

func.func @main() {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c7 = arith.constant 7 : index
  %x0 = tensor.empty() : tensor<8x16xf32> loc("x")
  %x = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%x0 : tensor<8x16xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = func.call @pattern(%i, %j, %c3, %c5) : (index, index, index, index) -> f32
    linalg.yield %v : f32
  } -> tensor<8x16xf32>
  %w10 = tensor.empty() : tensor<16x32xf32> loc("w1")
  %w1 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%w10 : tensor<16x32xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = func.call @pattern(%i, %j, %c7, %c2) : (index, index, index, index) -> f32
    linalg.yield %v : f32
  } -> tensor<16x32xf32>
  %w20 = tensor.empty() : tensor<32x32xf32> loc("w2")
  %w2 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%w20 : tensor<32x32xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = func.call @pattern(%i, %j, %c4, %c1) : (index, index, index, index) -> f32
    linalg.yield %v : f32
  } -> tensor<32x32xf32>
  %w30 = tensor.empty() : tensor<32x8xf32> loc("w3")
  %w3 = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel"]}
      outs(%w30 : tensor<32x8xf32>) {
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %v = func.call @pattern(%i, %j, %c5, %c3) : (index, index, index, index) -> f32
    linalg.yield %v : f32
  } -> tensor<32x8xf32>
  %r = func.call @mlp(%x, %w1, %w2, %w3)
      : (tensor<8x16xf32>, tensor<16x32xf32>, tensor<32x32xf32>, tensor<32x8xf32>) -> tensor<8x8xf32>
  %u = tensor.cast %r : tensor<8x8xf32> to tensor<*xf32>
  %m = bufferization.to_memref %u : memref<*xf32>
  func.call @printMemrefF32(%m) : (memref<*xf32>) -> ()
  return
}
