// strategy=optimal saved-budget=P: the exact saved-bytes optimum. Every
// saved activation the backward pass reads is kept or recomputed once
// (shared by all its backward uses) from what is kept and the arguments;
// the solver picks the ops to recompute with the least recompute cost
// whose kept bytes fit (the Lagrangian hull by max-flow, CBC where the hull
// leaves a gap), and `verbose` says whether it is proven.
//
// The hand-written step below saves three activations, each read by one
// weight gradient (cost=flops; matmul 2*M*N*K, gelu 8 per element):
//   %a = x @ w1        4x16, 256 B; recompute 1024 FLOPs
//   %b = gelu(x @ w2)  4x8, 128 B; recompute 768 FLOPs: 256 for the gelu and
//                      512 for %t = x @ w2, which is not saved (the gelu
//                      alone reads it), so it is recomputed too
//   %c = x @ w3        4x8, 128 B; recompute 512 FLOPs
// 512 B in all. The optimum by hand, per saved-budget:
//   512: keep all, 0 FLOPs
//   384: drop %c, 512 (dropping %b costs 768, %a frees more than needed at 1024)
//   256: drop %a, 1024 (%b and %c free the same 256 B for 1280)
//   128: drop %a and %c, 1536 (%a and %b: 1792)
//   0:   drop all, 2304
// The hull of (bytes freed, FLOPs) has the vertices (0, 0), (384, 1536) and
// (512, 2304): %a and %c both cost 4 FLOPs per byte, %b 6. At 512, 128 and 0
// saved bytes the optimum is a vertex (source=hull); at 384 and 256 the
// hull's bound (512 and 1024, on the line through the first two vertices) is
// below its next vertex (1536) and CBC finds the optimum, which meets it.
// auto takes the same plans; before it offered the solver's optimum, its
// best candidates recomputed 768 FLOPs at 384 (%b dropped) and 1792 at 128
// (%a and %b dropped).

// RUN: mw-opt %s --mw-remat="strategy=optimal saved-budget=512 cost=flops verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=S512
// S512: saved_activation_bytes=512 {{.*}}recompute_flops=0 {{.*}}optimality=proven gap=0.000% bound=0.000000e+00 bound_unit=flops {{.*}}source=hull
// RUN: mw-opt %s --mw-remat="strategy=optimal saved-budget=384 cost=flops verbose=true" -o %t.384.mlir 2>&1 | FileCheck %s --check-prefix=S384
// S384: saved_activation_bytes=384 {{.*}}recompute_flops=512 {{.*}}chosen="saved-bytes optimum (cbc)" {{.*}}optimality=proven gap=0.000% bound=5.120000e+02 bound_unit=flops solver_cost=5.120000e+02 plan_cost=5.120000e+02 source=cbc hull_points=3 hull_bound=5.120000e+02 hull_incumbent=1.536000e+03 milp_vars=4 milp_rows=3
// RUN: FileCheck %s --check-prefix=IR384 < %t.384.mlir
// IR384:     mw.remat.saved_activation_bytes = 384
// IR384:     %[[C:.*]] = mw.matmul %arg0, %arg3 {mw.recompute}
// IR384-NEXT: mw.matmul %[[C]], %{{.*}} {transpose_lhs}
// IR384-NOT: mw.recompute
// RUN: mw-opt %s --mw-remat="strategy=optimal saved-budget=256 cost=flops verbose=true" -o %t.256.mlir 2>&1 | FileCheck %s --check-prefix=S256
// S256: saved_activation_bytes=256 {{.*}}recompute_flops=1024 {{.*}}optimality=proven gap=0.000% bound=1.024000e+03 {{.*}}source=cbc
// RUN: mw-opt %s --mw-remat="strategy=optimal saved-budget=128 cost=flops verbose=true" -o %t.128.mlir 2>&1 | FileCheck %s --check-prefix=S128
// S128: saved_activation_bytes=128 {{.*}}recompute_flops=1536 {{.*}}optimality=proven gap=0.000% bound=1.536000e+03 {{.*}}source=hull
// RUN: mw-opt %s --mw-remat="strategy=optimal saved-budget=0 cost=flops verbose=true" -o %t.0.mlir 2>&1 | FileCheck %s --check-prefix=S0
// S0: saved_activation_bytes=0 {{.*}}recompute_flops=2304 {{.*}}optimality=proven {{.*}}source=hull
// Percentages are of the saved bytes: 75% is 384 B.
// RUN: mw-opt %s --mw-remat="strategy=optimal saved-budget=75% cost=flops" | FileCheck %s --check-prefix=PCT
// PCT: mw.remat.recompute_flops = 512 {{.*}}mw.remat.saved_activation_bytes = 384 {{.*}}mw.remat.saved_budget_bytes = 384
// In seconds (cost=time) the same plans; the bound is lowered by half a
// femtosecond per op for the rounding of the costs.
// RUN: mw-opt %s --mw-remat="strategy=optimal saved-budget=384 verbose=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIME
// TIME: saved_activation_bytes=384 {{.*}}optimality=proven {{.*}}bound_unit=seconds

// auto offers the solver's optimum among its candidates.
// RUN: mw-opt %s --mw-remat="saved-budget=384 cost=flops" | FileCheck %s --check-prefix=AUTO384
// AUTO384: mw.remat.recompute_flops = 512 {{.*}}mw.remat.saved_activation_bytes = 384
// RUN: mw-opt %s --mw-remat="saved-budget=128 cost=flops" -o %t.auto128.mlir
// RUN: FileCheck %s --check-prefix=AUTO128 < %t.auto128.mlir
// AUTO128: mw.remat.recompute_flops = 1536 {{.*}}mw.remat.saved_activation_bytes = 128

// Invalid options: both budgets; below what the step must keep (its one
// saved activation is also returned).
// RUN: not mw-opt %s --mw-remat="strategy=optimal saved-budget=128 budget=90%" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: mw-remat: strategy=optimal takes budget or saved-budget, not both; strategy=auto takes both
// RUN: not mw-opt %s --mw-remat="strategy=optimal saved-budget=12XB" -o /dev/null 2>&1 | FileCheck %s --check-prefix=MALFORMED
// MALFORMED: mw-remat: malformed saved-budget '12XB'
// RUN: not mw-opt %S/Inputs/remat-forced.mlir --mw-remat="strategy=optimal saved-budget=64" -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=FORCED
// FORCED: error: mw-remat: saved-budget 64 B is below what @train_step must keep: recomputing every forward op still keeps 128 B (values the backward pass reads that cannot be recomputed)

// The rewritten steps compute the same loss and gradients, bit for bit.
// RUN: mw-eval %s --entry train_step --random-inputs 5 --save-inputs %t.in --print > %t.ref
// RUN: mw-eval %t.384.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.256.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.128.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.0.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// RUN: mw-eval %t.auto128.mlir --entry train_step --inputs %t.in --print | diff %t.ref -
// And on gpt2-tiny (unfused attention, layer norms with their mean and
// rstd results), where the optimum is proven at 30% and 0.
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train -o %t.gpt.mlir
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=optimal saved-budget=30% cost=flops verbose=true" -o %t.gpt30.mlir 2>&1 | FileCheck %s --check-prefix=GPT30
// GPT30: saved_activation_bytes=196608 {{.*}}recompute_flops=6860800 {{.*}}optimality=proven
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=optimal saved-budget=0 cost=flops" -o %t.gpt0.mlir
// Deterministic: the same input gives the same IR byte for byte.
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=optimal saved-budget=30% cost=flops" -o %t.gpt30b.mlir
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=optimal saved-budget=30% cost=flops" -o %t.gpt30c.mlir
// RUN: diff %t.gpt30b.mlir %t.gpt30c.mlir
// RUN: mw-eval %t.gpt.mlir --entry train_step --random-inputs 3 --save-inputs %t.gpt.in --print > %t.gpt.ref
// RUN: mw-eval %t.gpt30.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-eval %t.gpt0.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -

func.func @train_step(%x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"},
                      %w1: tensor<8x16xf32> {mw.role = #mw.role<param>, mw.name = "w1"},
                      %w2: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "w2"},
                      %w3: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "w3"},
                      %v1: tensor<16x8xf32> {mw.role = #mw.role<param>, mw.name = "v1"},
                      %v2: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "v2"},
                      %v3: tensor<8x8xf32> {mw.role = #mw.role<param>, mw.name = "v3"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"},
        tensor<16x8xf32> {mw.role = #mw.role<grad>, mw.name = "v1"},
        tensor<8x8xf32> {mw.role = #mw.role<grad>, mw.name = "v2"},
        tensor<8x8xf32> {mw.role = #mw.role<grad>, mw.name = "v3"}) {
  %a = mw.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %y1 = mw.matmul %a, %v1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  %t = mw.matmul %x, %w2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %b = mw.gelu %t : tensor<4x8xf32>
  %y2 = mw.matmul %b, %v2 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %c = mw.matmul %x, %w3 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %y3 = mw.matmul %c, %v3 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %s = mw.add %y1, %y2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %s2 = mw.add %s, %y3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %loss = mw.reduce_sum %s2 axes = [0, 1] : tensor<4x8xf32> -> tensor<f32>
  %dy = mw.splat 1.000000e+00 : tensor<4x8xf32>
  %dv3 = mw.matmul %c, %dy {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %dv2 = mw.matmul %b, %dy {transpose_lhs} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
  %dv1 = mw.matmul %a, %dy {transpose_lhs} : (tensor<4x16xf32>, tensor<4x8xf32>) -> tensor<16x8xf32>
  return %loss, %dv1, %dv2, %dv3 : tensor<f32>, tensor<16x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
}
