// The plugin loads into stock mlir-opt-19: the mw dialect parses and
// verifies, and Memwall's passes run in a pipeline.
// RUN: %mlir_opt --load-dialect-plugin=%mw_plugin %s | FileCheck %s --check-prefix=IR
// RUN: %mlir_opt --load-dialect-plugin=%mw_plugin --load-pass-plugin=%mw_plugin \
// RUN:   --pass-pipeline="builtin.module(mw-memory-report{format=json},canonicalize)" %s -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=REPORT
// RUN: %mlir_opt --load-pass-plugin=%mw_plugin --help | FileCheck %s --check-prefix=HELP
// RUN: not %mlir_opt --load-dialect-plugin=%mw_plugin %S/Inputs/invalid.mlir 2>&1 | FileCheck %s --check-prefix=INVALID
// The bufferization models come with the dialect, the pipeline with the passes.
// RUN: %mlir_opt --load-dialect-plugin=%mw_plugin --load-pass-plugin=%mw_plugin \
// RUN:   --pass-pipeline="builtin.module(mw-bufferize,mw-static-arena,func.func(mw-verify-plan))" %s \
// RUN:   2>/dev/null | FileCheck %s --check-prefix=BUF
// The verdict plans copies of the module with nested pipelines
// (--mw-train-pipeline, --mw-remat, --mw-zero); they run in stock mlir-opt.
// RUN: mw-models gpt --preset gpt2-tiny --batch 4 --train -o %t.tiny.mlir
// RUN: %mlir_opt --load-dialect-plugin=%mw_plugin --load-pass-plugin=%mw_plugin \
// RUN:   --pass-pipeline="builtin.module(mw-memory-report{device-memory=36.4MB ranks=2})" %t.tiny.mlir -o /dev/null \
// RUN:   | FileCheck %s --check-prefix=VERDICT
// VERDICT: verdict                 does not fit: short by 129.18 KB = 126.15 KiB
// VERDICT: remat      --mw-remat="budget=2712KB"
// VERDICT-NEXT: fits: 36.40 MB = 34.71 MiB (measured)
// VERDICT: zero       --mw-zero="stage=3 ranks=2"
// VERDICT-NEXT: fits: 35.99 MB = 34.32 MiB (measured)

// IR-LABEL: func.func @f
// IR:       mw.matmul %{{.*}}, %{{.*}} {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
// REPORT:   "name": "f",
// REPORT:   "param_count": 128,
// REPORT:   "flops": 1024,
// HELP:     --mw-form-kernels
// HELP:     --mw-memory-report
// HELP:     Pass Pipelines:
// HELP:     --mw-bufferize
// BUF-LABEL: func.func @f
// BUF:       %[[Y:.*]] = memref.alloc() {{.*}} : memref<4x16xf32>
// BUF:       mw.kernel ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<16x8xf32>) outs(%[[Y]] : memref<4x16xf32>)
// BUF:       return %[[Y]]
// INVALID:  invalid.mlir:3:8: error: 'mw.matmul' op contracting dimensions differ: 8 vs 16
func.func @f(%x: tensor<4x8xf32> {mw.role = #mw.role<input>},
             %w: tensor<16x8xf32> {mw.role = #mw.role<param>}) -> tensor<4x16xf32> {
  %y = mw.matmul %x, %w {transpose_rhs} : (tensor<4x8xf32>, tensor<16x8xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}
