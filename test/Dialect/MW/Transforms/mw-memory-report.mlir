// RUN: mw-opt %s -split-input-file --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: mw-opt %s -split-input-file --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=TEXT
// The pass leaves the IR unchanged.
// RUN: mw-opt %s > %t.before.mlir
// RUN: mw-opt %s --mw-memory-report=output=%t.txt > %t.after.mlir
// RUN: diff %t.before.mlir %t.after.mlir
// RUN: FileCheck %s --check-prefix=TEXT < %t.txt

// Figures worked by hand:
//   matmul 4x8 * 8x16: 2*4*16*8 = 1024 FLOPs, reads (32+128)*4 = 640 B, writes 256 B
//   add 4x16 + 16:     64 FLOPs, reads 256+64 = 320 B, writes 256 B
//   relu 4x16:         64 FLOPs, reads 256 B, writes 256 B
//   cross_entropy:     5*64 = 320 FLOPs, reads 256+16 = 272 B, writes 4 B

// JSON:      "name": "mlp",
// JSON-NEXT: "param_count": 144,
// JSON-NEXT: "param_bytes": 576,
// JSON-NEXT: "argument_bytes": {
// JSON-NEXT:   "param": 576,
// JSON-NEXT:   "input": 128,
// JSON-NEXT:   "label": 16,
// JSON-NEXT:   "optimizer_state": 0,
// JSON-NEXT:   "grad": 0,
// JSON-NEXT:   "none": 0
// JSON-NEXT: },
// JSON-NEXT: "result_bytes": {
// JSON-NEXT:   "output": 4,
// JSON-NEXT:   "grad": 0,
// JSON-NEXT:   "param": 0,
// JSON-NEXT:   "optimizer_state": 0,
// JSON-NEXT:   "none": 0
// JSON-NEXT: },
// JSON-NEXT: "op_count": 4,
// JSON-NEXT: "flops": 1472,
// JSON-NEXT: "bytes_read": 1488,
// JSON-NEXT: "bytes_written": 772,
// JSON-NEXT: "naive_activation_bytes": 772

// TEXT-LABEL: mw-memory-report @mlp
// TEXT-NEXT:    parameters              144 (144)
// TEXT-NEXT:    parameter bytes         576 (576 B)
// TEXT-NEXT:    arguments by role
// TEXT-NEXT:      param                 576 (576 B)
// TEXT-NEXT:      input                 128 (128 B)
// TEXT-NEXT:      label                 16 (16 B)
// TEXT-NEXT:    results by role
// TEXT-NEXT:      output                4 (4 B)
// TEXT-NEXT:    ops                     4
// TEXT-NEXT:    flops                   1472 (1.47KFLOP)
// TEXT-NEXT:    bytes read              1488 (1.49 KB = 1.45 KiB)
// TEXT-NEXT:    bytes written           772 (772 B)
// TEXT-NEXT:    naive activations       772 (772 B)
func.func @mlp(%w1: tensor<8x16xf32> {mw.role = #mw.role<param>, mw.name = "fc.weight"},
               %b1: tensor<16xf32> {mw.role = #mw.role<param>, mw.name = "fc.bias"},
               %x: tensor<4x8xf32> {mw.role = #mw.role<input>, mw.name = "x"},
               %y: tensor<4xi32> {mw.role = #mw.role<label>, mw.name = "y"})
    -> (tensor<f32> {mw.role = #mw.role<output>, mw.name = "loss"}) {
  %h = mw.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %hb = mw.add %h, %b1 : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %r = mw.relu %hb : tensor<4x16xf32>
  %loss = mw.cross_entropy %r, %y : (tensor<4x16xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Functions without roles count as "none"; declarations are skipped; bf16 is
// 2 bytes; a reshape is a view (no bytes moved) but its result still counts
// as a naively kept activation.

// JSON:          "name": "plain",
// JSON-NEXT:     "param_count": 0,
// JSON:          "argument_bytes": {
// JSON:            "none": 12
// JSON:          "result_bytes": {
// JSON:            "none": 12
// JSON:          "op_count": 2,
// JSON-NEXT:     "flops": 0,
// JSON-NEXT:     "bytes_read": 12,
// JSON-NEXT:     "bytes_written": 12,
// JSON-NEXT:     "naive_activation_bytes": 24
// JSON-NOT:      "name": "external"

// TEXT-LABEL: mw-memory-report @plain
// TEXT-NOT:   mw-memory-report @external
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @plain(%a: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %r = mw.reshape %a : tensor<2x3xbf16> -> tensor<3x2xbf16>
  %t = mw.transpose %r permutation = [1, 0] : tensor<3x2xbf16> -> tensor<2x3xbf16>
  return %t : tensor<2x3xbf16>
}
