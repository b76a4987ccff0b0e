// gpt2-tiny with its layers offloaded (--mw-offload weights=cpu and nvme,
// prefetch 0, 1, 2, pinned-layers 0, 1): forward, decode and mw-run
// --generate are bit-identical to the resident steps on the CPU, from host
// memory, from the default weights file and from --weights
// (test/Runtime/offload/Inputs/offload_parity.sh).
//
// RUN: %S/Inputs/offload_parity.sh %mw_bin %t gpt --preset gpt2-tiny | FileCheck %s
// CHECK-NOT: DIFFERENT
// CHECK: offload gpt: 54 runs, 0 differ from the resident step
