// The tiny models' training steps fused by --mw-fuse, planned, translated
// and run by mw-run on the CPU for two steps, against mw-eval on the
// unfused IR chained for two steps: every weight and optimizer-state tensor
// is bit-identical with the evaluator's matmul loops (docs/fusion.md,
// "Numerics").
//
// RUN: %S/Inputs/fused_models.sh %mw_bin %t gpt --preset gpt2-tiny | FileCheck %s --check-prefix=GPT
// GPT: fused kernels: {{[1-9][0-9]*}}
// GPT: compared 85 tensors, 0 mismatches
// A batch of 1 with unfused attention (GPT-2 small's bench shape): operands
// of the iteration's shape with a size-1 dimension read at the identity.
// RUN: %S/Inputs/fused_models.sh %mw_bin %t.batch1 gpt --preset gpt2-tiny --batch 1 --attention=unfused | FileCheck %s --check-prefix=GPT1
// GPT1: fused kernels: {{[1-9][0-9]*}}
// GPT1: compared 85 tensors, 0 mismatches
// --mw-train-pipeline=fuse=true, which runs --mw-sink before --mw-fuse: with
// a vocabulary of 4000 the sink moves the lm_head's wte gradient (and a few
// bias gradients) toward their first readers and the row kernels' results
// go over dying inputs; still bit-identical, planned peak equal to measured.
// RUN: mw-models gpt --preset gpt2-tiny --batch 1 --attention=unfused --vocab 4000 --train -o %t.sink.mlir
// RUN: mw-opt %t.sink.mlir --mw-sink=report -o /dev/null | FileCheck %s --check-prefix=SINK-MOVED
// SINK-MOVED: mw-sink @train_step: {{[1-9][0-9]*}} ops moved
// RUN: env FUSED_PIPELINE=--mw-train-pipeline=fuse=true %S/Inputs/fused_models.sh %mw_bin %t.sink gpt --preset gpt2-tiny --batch 1 --attention=unfused --vocab 4000 | FileCheck %s --check-prefix=SINK
// SINK: fused kernels: {{[1-9][0-9]*}}
// SINK: memory: planned peak [[P:[0-9]+]] B {{.*}}, measured peak [[P]] B (equal)
// SINK: compared 85 tensors, 0 mismatches
// RUN: %S/Inputs/fused_models.sh %mw_bin %t llama --preset llama-tiny | FileCheck %s --check-prefix=LLAMA
// LLAMA: fused kernels: {{[1-9][0-9]*}}
// LLAMA: compared 64 tensors, 0 mismatches
// Gradient accumulation (f32: bit for bit) and fp16 through the whole fused pipeline
// (--mw-sink first): the plan has no copies (a weight-gradient matmul that
// --mw-sink moves past the residual add reusing its input's buffer used to
// need four, which mw-translate refuses), and fp16's updates, which go
// through keep-on-overflow selects, are not side by side in one kernel
// (their transients would all be live at once): the fused arena is no
// larger than the unfused one.
// RUN: env FUSED_PIPELINE=--mw-train-pipeline=fuse=true %S/Inputs/fused_models.sh %mw_bin %t.accum llama --preset llama-tiny --grad-accum 2 | FileCheck %s --check-prefix=ACCUM
// ACCUM: memory: planned peak [[P:[0-9]+]] B {{.*}}, measured peak [[P]] B (equal)
// ACCUM: compared 64 tensors, 0 mismatches
// RUN: mw-models bert --preset bert-tiny --train --precision fp16 -o %t.fp16.mlir
// RUN: mw-opt %t.fp16.mlir --mw-train-pipeline --mw-memory-report=format=json -o /dev/null > %t.fp16.unfused.json
// RUN: mw-opt %t.fp16.mlir --mw-train-pipeline=fuse=true --mw-memory-report=format=json -o /dev/null > %t.fp16.fused.json
// RUN: python3 -c "import json,sys; a,b=[max(f['arena_bytes'] for f in json.load(open(p))['functions']) for p in sys.argv[1:]]; print('fused arena', 'within' if b <= a else 'above', 'unfused')" %t.fp16.unfused.json %t.fp16.fused.json | FileCheck %s --check-prefix=FP16
// FP16: fused arena within unfused
// RUN: %S/Inputs/fused_models.sh %mw_bin %t bert --preset bert-tiny | FileCheck %s --check-prefix=BERT
// BERT: fused kernels: {{[1-9][0-9]*}}
// BERT: compared 127 tensors, 0 mismatches
// RUN: %S/Inputs/fused_models.sh %mw_bin %t mlp | FileCheck %s --check-prefix=MLP
// MLP: fused kernels: {{[1-9][0-9]*}}
// MLP: compared 19 tensors, 0 mismatches
