// llama-tiny (rotary) with its layers offloaded, as offload-gpt2.mlir: every
// prefetch depth and pinned-layer count, host memory and file, forward,
// decode and --generate bit-identical to the resident steps on the CPU.
//
// RUN: %S/Inputs/offload_parity.sh %mw_bin %t llama --preset llama-tiny --rotary | FileCheck %s
// CHECK-NOT: DIFFERENT
// CHECK: offload llama: 54 runs, 0 differ from the resident step
