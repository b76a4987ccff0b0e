// The checked-in GPT-2 example parses, verifies and reports the expected
// figures; and it is in sync with its generator, mw-models (regenerate with
// `mw-models gpt --preset gpt2-tiny -o examples/gpt2-tiny.mlir`).
//
// RUN: mw-models gpt --preset gpt2-tiny | diff - %mw_src/examples/gpt2-tiny.mlir
// RUN: mw-opt %mw_src/examples/gpt2-tiny.mlir --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: mw-opt %mw_src/examples/gpt2-tiny.mlir --mw-memory-report=format=text -o /dev/null | FileCheck %s --check-prefix=TEXT

// V*D + S*D + L*(12*D*D + 13*D) + 2*D = 16384 + 2048 + 2*49984 + 128 = 118528.
// Ops: embedding and position add (2), 25 per block (50), ln_f, logits
// matmul, two reshapes and cross_entropy (5).

// JSON:      "name": "forward"
// JSON-NEXT: "param_count": 118528
// JSON-NEXT: "param_bytes": 474112
// JSON:      "op_count": 57

// TEXT:      mw-memory-report @forward
// TEXT-NEXT:   parameters 118528 (118.53K)
// TEXT-NEXT:   parameter bytes 474112 (474.11 KB = 463.00 KiB)
// TEXT:        ops 57
