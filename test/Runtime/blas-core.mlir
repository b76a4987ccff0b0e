// OpenBLAS picks its kernels when it loads, from OPENBLAS_CORETYPE or the
// CPU model. Where it does not recognize the CPU and falls back to pre-AVX
// kernels (Debian's 0.3.21 runs Prescott's SSE3 kernels on a virtual
// AVX-512 Xeon, a quarter of the AVX-512 kernels' speed), mw-run starts
// again with the kernels the CPU supports (runtime/tools/mw-run.cpp,
// chooseBlasKernels; docs/runtime-kernels.md, "Which OpenBLAS kernels").
// The report names the kernels in use and, where mw-run chose them,
// OpenBLAS's own pick.
// REQUIRES: openblas, x86_64
//
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.mlir
// RUN: mw-opt %t.mlir --mw-train-pipeline 2>/dev/null | mw-translate --mw-to-plan -o %t.mwplan
//
// OPENBLAS_CORETYPE, when set, stands, even naming pre-AVX kernels:
// RUN: env OPENBLAS_CORETYPE=Prescott mw-run %t.mwplan --steps 1 --report json | FileCheck %s --check-prefix=KEEP
// KEEP: "matmul": "openblas",
// KEEP-NEXT: "blas_core": "Prescott",
// KEEP-NOT: blas_core_detected
// RUN: env OPENBLAS_CORETYPE=Prescott mw-run %t.mwplan --steps 1 | FileCheck %s --check-prefix=KEEP-TEXT
// KEEP-TEXT: matmul openblas Prescott{{$}}
// KEEP-TEXT: step 1 loss
//
// Unset, the kernels use AVX wherever the CPU has AVX2 and FMA, and a
// choice mw-run made is the one the CPU's features call for:
// RUN: env -u OPENBLAS_CORETYPE -u MWRT_BLAS_DETECTED_CORE mw-run %t.mwplan --steps 1 --report json > %t.json
// RUN: python3 %S/Inputs/check_blas_core.py %t.json /proc/cpuinfo | FileCheck %s --check-prefix=AUTO
// AUTO: blas core {{[A-Za-z0-9_]+}}
//
// --reference-matmul does not use OpenBLAS: the report says so.
// RUN: mw-run %t.mwplan --steps 1 --reference-matmul | FileCheck %s --check-prefix=REF
// REF: matmul reference{{$}}
