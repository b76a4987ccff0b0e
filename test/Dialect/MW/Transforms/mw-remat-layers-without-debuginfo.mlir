// The layer structure survives printing without debug info: mw-models writes
// `mw.layer` on every op, --mw-autodiff gives backward ops the layer of the
// op they differentiate, and --mw-remat's every-k, its per-layer map and its
// block-activation figures read the attribute. The same step with debug
// info gives the same result.

// RUN: mw-models gpt --preset gpt2-tiny -o %t.forward.mlir
// RUN: mw-opt %t.forward.mlir -o %t.nodebug.mlir
// RUN: not grep -q "loc(" %t.nodebug.mlir
// RUN: mw-opt %t.nodebug.mlir --mw-autodiff -o %t.step.mlir
// RUN: FileCheck %s --check-prefix=STEP --input-file %t.step.mlir
// RUN: mw-opt %t.step.mlir --mw-remat="strategy=every-k k=1 verbose=true" -o %t.remat.mlir 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=REMAT --input-file %t.remat.mlir
// RUN: mw-opt %t.forward.mlir --mw-autodiff | mw-opt --mw-remat="strategy=every-k k=1" | diff %t.remat.mlir -

// Backward ops carry their forward op's layer.
// STEP-LABEL: func.func @train_step
// STEP: mw.cross_entropy_grad {{.*}}{mw.layer = "loss"}
// STEP: mw.gelu_grad {{.*}}mw.layer = "h.1.mlp"
// STEP: mw.attention_grad {{.*}}mw.layer = "h.1.attn"
// STEP: mw.attention_grad {{.*}}mw.layer = "h.0.attn"
// STEP: mw.embedding_grad {{.*}}mw.layer = "embeddings"

// REMARK: remark: mw-remat: strategy=every-k {{.*}} block_activation_bytes={{[1-9][0-9]*}}

// REMAT: mw.remat.kept_bytes_by_layer = {{\[}}["embeddings", {{[0-9]+}}], ["h.0", {{[1-9][0-9]*}}], ["h.1", {{[1-9][0-9]*}}], ["lm_head", {{[0-9]+}}], ["loss", {{[0-9]+}}]]
// REMAT: mw.recompute
