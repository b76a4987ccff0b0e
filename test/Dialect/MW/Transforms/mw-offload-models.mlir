// --mw-offload on the generated models: gpt2-tiny (12 weights a layer) and
// llama-tiny (9) prefill, decode (--inference) and forward (--logits), for
// prefetch 0, 1, 2 and pinned 0, 1. Every layered weight of a streamed layer
// is fetched once and waited for once; embeddings, final norms and the tied
// head stay resident; with prefetch 1 layer 1 is fetched before layer 0's
// first op, after the embedding, and layer 0 at the start of the body.
// RUN: mw-models gpt --preset gpt2-tiny --inference -o %t.gpt.mlir
// RUN: mw-models gpt --preset gpt2-tiny --logits -o %t.gptf.mlir
// RUN: mw-models llama --preset llama-tiny --rotary --inference -o %t.llama.mlir
// RUN: mw-models llama --preset llama-tiny --rotary --logits -o %t.llamaf.mlir

// RUN: mw-opt %t.gpt.mlir --mw-offload="weights=cpu prefetch=1 function=decode" | FileCheck %s --check-prefix=GPT1
// GPT1-LABEL: func.func @prefill(
// GPT1-NOT:   mw.fetch
// GPT1-LABEL: func.func @decode(
// GPT1-SAME:    %arg0: tensor<256x64xf32> {mw.name = "wte", mw.role = #mw.role<param>}
// GPT1-SAME:    {mw.name = "h.0.ln_1.weight", mw.offload = "cpu", mw.role = #mw.role<param>}
// GPT1-SAME:    {mw.name = "ln_f.weight", mw.role = #mw.role<param>}
// GPT1-SAME:  mw.offload = {layers = 2 : i64, pinned_layers = 0 : i64, prefetch = 1 : i64, weights = "cpu"}
// GPT1-COUNT-12: mw.fetch {{%arg[0-9]+}} {layer = 0 : i64}
// GPT1-NOT:   mw.wait
// GPT1:       mw.embedding
// GPT1-NOT:   mw.wait
// GPT1-COUNT-12: mw.fetch {{%arg[0-9]+}} {layer = 1 : i64}
// GPT1-NEXT:  mw.wait
// GPT1-NEXT:  mw.wait
// GPT1-NEXT:  mw.layer_norm
// GPT1-NOT:   mw.fetch
// GPT1:       return

// Per model, step and setting: the number of fetches, and as many waits.
// RUN: mw-opt %t.gpt.mlir --mw-offload="weights=cpu prefetch=0" | FileCheck %s --check-prefix=GPT-ALL
// RUN: mw-opt %t.gpt.mlir --mw-offload="weights=cpu prefetch=2" | FileCheck %s --check-prefix=GPT-ALL
// RUN: mw-opt %t.gpt.mlir --mw-offload="weights=nvme path=/nvme prefetch=1 pinned-layers=1" | FileCheck %s --check-prefix=GPT-PIN
// RUN: mw-opt %t.gptf.mlir --mw-offload="weights=cpu prefetch=2 pinned-layers=1" | FileCheck %s --check-prefix=GPTF-PIN
// RUN: mw-opt %t.llama.mlir --mw-offload="weights=cpu prefetch=1" | FileCheck %s --check-prefix=LLAMA-ALL
// RUN: mw-opt %t.llama.mlir --mw-offload="weights=cpu prefetch=0 pinned-layers=1" | FileCheck %s --check-prefix=LLAMA-PIN
// RUN: mw-opt %t.llamaf.mlir --mw-offload="weights=cpu prefetch=2" | FileCheck %s --check-prefix=LLAMAF-ALL
// GPT-ALL-LABEL:  func.func @prefill(
// GPT-ALL-COUNT-24: mw.fetch
// GPT-ALL-NOT:      mw.fetch
// GPT-ALL-LABEL:  func.func @decode(
// GPT-ALL-COUNT-24: mw.fetch
// GPT-ALL-NOT:      mw.fetch
// GPT-PIN-LABEL:  func.func @prefill(
// GPT-PIN-SAME:     {mw.name = "h.0.ln_1.weight", mw.role = #mw.role<param>}
// GPT-PIN-SAME:     {mw.name = "h.1.ln_1.weight", mw.offload = "nvme", mw.role = #mw.role<param>}
// GPT-PIN-SAME:     mw.offload = {layers = 2 : i64, path = "/nvme", pinned_layers = 1 : i64, prefetch = 1 : i64, weights = "nvme"}
// GPT-PIN-COUNT-12: mw.fetch {{%arg[0-9]+}} {layer = 1 : i64}
// GPT-PIN-NOT:      mw.fetch
// GPT-PIN-LABEL:  func.func @decode(
// GPT-PIN-COUNT-12: mw.fetch {{%arg[0-9]+}} {layer = 1 : i64}
// GPT-PIN-NOT:      mw.fetch
// GPTF-PIN-LABEL: func.func @forward(
// GPTF-PIN-COUNT-12: mw.fetch {{%arg[0-9]+}} {layer = 1 : i64}
// GPTF-PIN-NOT:     mw.fetch
// LLAMA-ALL-LABEL:  func.func @prefill(
// LLAMA-ALL-COUNT-18: mw.fetch
// LLAMA-ALL-NOT:      mw.fetch
// LLAMA-ALL-LABEL:  func.func @decode(
// LLAMA-ALL-COUNT-18: mw.fetch
// LLAMA-ALL-NOT:      mw.fetch
// With prefetch 0 each fetch stands right before its wait.
// LLAMA-PIN-LABEL:  func.func @prefill(
// LLAMA-PIN-NOT:      layer = 0 :
// LLAMA-PIN:          %[[F:.*]] = mw.fetch {{%arg[0-9]+}} {layer = 1 : i64}
// LLAMA-PIN-NEXT:     mw.wait %[[F]]
// LLAMA-PIN:          %[[G:.*]] = mw.fetch {{%arg[0-9]+}} {layer = 1 : i64}
// LLAMA-PIN-NEXT:     mw.wait %[[G]]
// LLAMAF-ALL-LABEL: func.func @forward(
// LLAMAF-ALL-COUNT-18: mw.fetch
// LLAMAF-ALL-NOT:      mw.fetch

// Waits: as many as fetches, 9 a streamed layer in each of the two steps
// (the verifier also holds each fetch's only use to be its wait).
// RUN: mw-opt %t.llama.mlir --mw-offload="weights=cpu prefetch=2 pinned-layers=1" -o %t.l.mlir
// RUN: grep -c "mw.fetch" %t.l.mlir | FileCheck %s --check-prefix=COUNT
// RUN: grep -c "mw.wait" %t.l.mlir | FileCheck %s --check-prefix=COUNT
// COUNT: {{^}}18{{$}}
