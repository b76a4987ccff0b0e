// --mw-memory-report carries what --mw-offload=auto weighed and chose (its
// mw.offload.candidates and mw.offload.choice function attributes): JSON
// `offload_candidates` (each with pinned_layers, prefetch, batch, fits,
// predicted_tokens_per_s) and `offload_choice`; one line in the text.
// test/unit/OffloadAutoTest.cpp checks the attributes chooseOffload writes.
//
// RUN: mw-opt %s --mw-memory-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: mw-opt %s --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=TEXT

// JSON:      "name": "decode"
// JSON:      "offload_candidates": [
// JSON-NEXT:   {
// JSON-NEXT:     "pinned_layers": 0,
// JSON-NEXT:     "prefetch": 1,
// JSON-NEXT:     "batch": 208,
// JSON-NEXT:     "fits": true,
// JSON-NEXT:     "predicted_tokens_per_s": 41.25
// JSON-NEXT:   },
// JSON-NEXT:   {
// JSON-NEXT:     "pinned_layers": 2,
// JSON-NEXT:     "prefetch": 0,
// JSON-NEXT:     "batch": 1,
// JSON-NEXT:     "fits": false,
// JSON-NEXT:     "predicted_tokens_per_s": 14.5
// JSON-NEXT:   }
// JSON-NEXT: ],
// JSON-NEXT: "offload_choice": {
// JSON-NEXT:   "pinned_layers": 0,
// JSON-NEXT:   "prefetch": 1,
// JSON-NEXT:   "batch": 208,
// JSON-NEXT:   "fits": true,
// JSON-NEXT:   "predicted_tokens_per_s": 41.25
// JSON-NEXT: }
// JSON:      "name": "plain"
// JSON-NOT:  offload_

// TEXT: mw-memory-report @decode
// TEXT: offload candidates      2 weighed; chosen pinned-layers=0 prefetch=1 batch=208, 41.25 tokens/s predicted
// TEXT: mw-memory-report @plain
// TEXT-NOT: offload

func.func @decode(%w: tensor<4x4xf32> {mw.name = "h.0.w", mw.role = #mw.role<param>},
                  %x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<2x4xf32> {mw.name = "y", mw.role = #mw.role<output>})
    attributes {mw.offload.candidates = [
                  {pinned_layers = 0 : i64, prefetch = 1 : i64, batch = 208 : i64, fits = true, predicted_tokens_per_s = 41.25 : f64, device_bytes = 100 : i64},
                  {pinned_layers = 2 : i64, prefetch = 0 : i64, batch = 1 : i64, fits = false, predicted_tokens_per_s = 14.5 : f64}],
                mw.offload.choice = {pinned_layers = 0 : i64, prefetch = 1 : i64, batch = 208 : i64, fits = true, predicted_tokens_per_s = 41.25 : f64}} {
  %y = mw.matmul %x, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

func.func @plain(%x: tensor<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>})
    -> (tensor<2x4xf32> {mw.name = "y", mw.role = #mw.role<output>}) {
  return %x : tensor<2x4xf32>
}
