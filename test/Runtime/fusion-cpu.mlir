// Fused kernels on the CPU backend (docs/fusion.md): one hand-written
// kernel per kind (Inputs/fused-kernels.mlir; what each fuses is annotated
// there), planned, translated and run by mw-run, against mw-eval on the same
// IR and against the same IR unfused (one op per kernel, Inputs/unfuse.py).
// In f32 every result is bit-identical, the matmul kernels with the
// evaluator's matmul loops (--reference-matmul). In bf16 and f16 the fused
// kernel keeps f32 intermediates: within one ulp of the largest magnitude
// (2^-7 relative in bf16, 2^-10 in f16), where the unfused plan matches
// mw-eval bit for bit.
//
// RUN: rm -f %t.fused.planned.mlir %t.unfused.planned.mlir
// RUN: python3 %S/Inputs/unfuse.py %S/Inputs/fused-kernels.mlir > %t.unfused.mlir
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t loop | FileCheck %s --check-prefix=LOOP
// LOOP: loop: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t loop_merge | FileCheck %s --check-prefix=MERGE
// MERGE: loop_merge: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t row_ln | FileCheck %s --check-prefix=LN
// LN: row_ln: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t row_softmax | FileCheck %s --check-prefix=SM
// SM: row_softmax: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t row_softmax_grad | FileCheck %s --check-prefix=SMG
// SMG: row_softmax_grad: eval ok, unfused ok, fused-vs-unfused ok
// A row kernel written over its input dy (read at the iteration index and
// along its rows; docs/fusion.md, aliasing): still bit for bit, and the plan
// gives dy and dx the same buffer.
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t row_softmax_grad_in_place | FileCheck %s --check-prefix=SMG-IP
// SMG-IP: row_softmax_grad_in_place: eval ok, unfused ok, fused-vs-unfused ok
// RUN: FileCheck %s --check-prefix=SMG-IP-PLAN < %t.fused.planned.mlir
// SMG-IP-PLAN-LABEL: func.func @row_softmax_grad_in_place
// SMG-IP-PLAN:       mw.kernel ins(%{{[a-z_0-9]+}}, %[[DY:[a-z_0-9]+]] : memref<4x8xf32>, memref<4x8xf32>) outs(%[[DY]] : memref<4x8xf32>)
// SMG-IP-PLAN-NEXT:  ^bb0(
// SMG-IP-PLAN-NEXT:    mw.softmax_grad
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t mm_gelu | FileCheck %s --check-prefix=MM
// MM: mm_gelu: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t mm_dgelu | FileCheck %s --check-prefix=DMM
// DMM: mm_dgelu: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t adamw3 | FileCheck %s --check-prefix=ADAM
// ADAM: adamw3: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t row_ln_bf16 0.0078125 | FileCheck %s --check-prefix=BF16
// BF16: row_ln_bf16: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t row_ln_f16 0.0009765625 | FileCheck %s --check-prefix=F16
// F16: row_ln_f16: eval ok, unfused ok, fused-vs-unfused ok
// RUN: %S/Inputs/fused_parity.sh %mw_bin %S/Inputs/fused-kernels.mlir %t.unfused.mlir %t mm_bf16 0.0078125 | FileCheck %s --check-prefix=MM-BF16
// MM-BF16: mm_bf16: eval ok, unfused ok, fused-vs-unfused ok
// ... and the fused bf16 kernel does round differently from mw-eval:
// RUN: not python3 %S/Inputs/compare_safetensors.py %t.row_ln_bf16.eval %t.row_ln_bf16.fused.out | FileCheck %s --check-prefix=BF16-BITS
// BF16-BITS: compared 2 tensors, 2 mismatches
//
// With OpenBLAS the matmul kernels agree within the matmul tolerance
// (docs/runtime.md).
// RUN: mw-run %t.mm_gelu.fused.mwplan --inputs %t.mm_gelu.in --save-outputs %t.mm_gelu.blas > /dev/null
// RUN: python3 %S/Inputs/compare_safetensors.py %t.mm_gelu.eval %t.mm_gelu.blas --rtol 1e-5 | FileCheck %s --check-prefix=BLAS
// BLAS: compared 2 tensors, 0 mismatches
//
// The plan holds one kernel per fused kernel, with its program:
// RUN: mw-translate --mw-plan-json --mw-plan-function=row_ln %t.fused.planned.mlir | FileCheck %s --check-prefix=PLAN
// PLAN-COUNT-2: "op": "mw.neg"
// PLAN:         "op": "mw.fusion"
// PLAN:         "program": {
// PLAN-NEXT:      "version": 1,
// PLAN-NEXT:      "instructions": [
// PLAN-NEXT:        {"op":"mw.add","operands":["in0","in1"],"results":[{"dtype":"f32","shape":[2,3,8]}]},
// PLAN-NEXT:        {"op":"mw.add","operands":["%0#0","in2"],"results":[{"dtype":"f32","shape":[2,3,8]}]},
// PLAN-NEXT:        {"op":"mw.layer_norm","operands":["%1#0","in3","in4"],"results":[{"dtype":"f32","shape":[2,3,8]},{"dtype":"f32","shape":[2,3]},{"dtype":"f32","shape":[2,3]}],"attrs":[{"name":"epsilon","kind":"float","value":{{.*}}}]}
// PLAN-NEXT:      ],
// PLAN-NEXT:      "yields": [
// PLAN-NEXT:        "%1#0",
// PLAN-NEXT:        "%2#0",
// PLAN-NEXT:        "%2#1",
// PLAN-NEXT:        "%2#2"
// PLAN-NOT:     "op": 
