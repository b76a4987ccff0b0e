// An imported model goes through Memwall's passes as a generated one does:
// the training step of a transformers GPT-2 under --mw-remat (blocks found
// from the imported layer paths, transformer.h.N) computes the same bits,
// and --mw-zero shards it.
// REQUIRES: importer
// RUN: %mw_import --hf gpt2 --train --seq 16 -o %t.mlir --weights %t.w.safetensors --save-inputs %t.in.safetensors
// RUN: mw-opt %t.mlir --mw-autodiff="optimizer=sgd lr=0.1" -o %t.step.mlir
// RUN: mw-opt %t.step.mlir --mw-remat="strategy=every-k k=1 verbose=true" -o %t.remat.mlir 2>&1 | FileCheck %s --check-prefix=REMAT
// RUN: mw-eval %t.step.mlir --entry train_step --inputs %t.w.safetensors --inputs %t.in.safetensors --print > %t.before
// RUN: mw-eval %t.remat.mlir --entry train_step --inputs %t.w.safetensors --inputs %t.in.safetensors --print > %t.after
// RUN: diff %t.before %t.after
// RUN: mw-opt %t.remat.mlir --mw-train-pipeline -o /dev/null
// RUN: mw-opt %t.step.mlir --mw-zero="stage=2 ranks=2" --mw-memory-report -o /dev/null | FileCheck %s --check-prefix=ZERO
// --mw-chunk-loss finds the imported head (the tied transformer.wte, the
// loss of the shifted labels) and defers its weight gradient to the
// embedding's, with mw-eval's outputs within the pass's tolerance.
// RUN: mw-opt %t.step.mlir --mw-chunk-loss="chunks=4 defer-weight-grad=true force=true report=true" -o %t.chunked.mlir | FileCheck %s --check-prefix=CHUNK
// RUN: mw-eval %t.step.mlir --entry train_step --inputs %t.w.safetensors --inputs %t.in.safetensors --outputs %t.before.st > /dev/null
// RUN: mw-eval %t.chunked.mlir --entry train_step --inputs %t.w.safetensors --inputs %t.in.safetensors --outputs %t.chunked.st > /dev/null
// RUN: python3 %S/../Runtime/Inputs/compare_safetensors.py %t.before.st %t.chunked.st --rtol 1e-6 | FileCheck %s --check-prefix=SAME

// REMAT: remark: mw-remat: strategy=every-k
// REMAT-SAME: chosen="every-k"
// CHUNK: mw-chunk-loss @train_step: {{.*}} in 4 chunks {{.*}}, with their gradient, the weight's gradient deferred to its sum with 'transformer.wte' (logits made twice)
// SAME: 0 mismatches
// ZERO: mw-memory-report @train_step
// ZERO: per rank: ZeRO stage 2 (attribute), 2 ranks
