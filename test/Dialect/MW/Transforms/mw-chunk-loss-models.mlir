// --mw-chunk-loss on the models' training steps: mw-eval's outputs before
// and after. Every row's values are the unchunked ops', so every tensor but
// the loss and the head's weight (and bias) is bit for bit the same; those
// are sums over rows in another order: within 1e-6 of the largest value in
// f32 with SGD (the gradient itself), 1e-4 with AdamW (which divides by the
// gradient's own size); with bf16 and f16 compute, each chunk's
// weight-gradient product is rounded to the format before the f32 sum: the
// f32 master weights after an SGD step within 1e-5.
//
// RUN: mw-models gpt --preset gpt2-tiny --train --optimizer sgd -o %t.gpt.mlir
// RUN: mw-opt %t.gpt.mlir --mw-chunk-loss="chunks=3 force=true report=true" -o %t.gpt.c.mlir | FileCheck %s --check-prefix=GPT
// GPT: mw-chunk-loss @forward: [64, 256] logits in 3 chunks of 22 rows, live tensor peak
// GPT: mw-chunk-loss @train_step: [64, 256] logits in 3 chunks of 22 rows, with their gradient, live tensor peak
// Without force=true, the pass chunks where that does not raise the peak
// of live tensor bytes: gpt2-tiny's step (tied: the embedding's gradient is
// live anyway), not llama-tiny's (an untied [64, 256] weight, as large as
// the [64, 256] logits).
// RUN: mw-opt %t.gpt.mlir --mw-chunk-loss=report=true -o /dev/null | FileCheck %s --check-prefix=KEEP
// KEEP: mw-chunk-loss @train_step: [64, 256] logits in 8 chunks of 8 rows, with their gradient, live tensor peak {{[0-9]+}} -> {{[0-9]+}} bytes
// RUN: mw-eval %t.gpt.mlir --entry train_step --random-inputs 3 --save-inputs %t.gpt.in --outputs %t.gpt.ref > /dev/null
// RUN: mw-eval %t.gpt.c.mlir --entry train_step --inputs %t.gpt.in --outputs %t.gpt.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.gpt.ref %t.gpt.c --rtol 1e-6 | FileCheck %s --check-prefix=GPTSUM
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.gpt.ref %t.gpt.c --ignore loss,wte | FileCheck %s --check-prefix=GPTBITS
// GPTSUM: compared 29 tensors, 0 mismatches
// GPTBITS: compared 27 tensors, 0 mismatches
// The forward alone (evaluation).
// RUN: mw-eval %t.gpt.mlir --entry forward --inputs %t.gpt.in --outputs %t.gpt.fref > /dev/null
// RUN: mw-eval %t.gpt.c.mlir --entry forward --inputs %t.gpt.in --outputs %t.gpt.fc > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.gpt.fref %t.gpt.fc --rtol 1e-6 | FileCheck %s --check-prefix=ONE
// ONE: compared 1 tensors, 0 mismatches
//
// Llama's untied [D, V] lm_head, BERT's biased MLM head, OPT's and the MLP
// classifier's (a batch of 4 rows in 4 chunks), with SGD.
// RUN: mw-models llama --preset llama-tiny --train --optimizer sgd -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-chunk-loss=report=true -o /dev/null | FileCheck %s --check-prefix=WHOLE
// WHOLE: mw-chunk-loss @train_step: left whole: [64, 256] logits in 8 chunks of 8 rows, with their gradient would raise the live tensor peak from {{[0-9]+}} to {{[0-9]+}} bytes
// Judged as --mw-fuse's kernels hold the bytes (fused=true, what
// --mw-train-pipeline gives the pass with fuse=true), each chunk's product
// is added into the running sum in place, and the head is chunked: the
// fused plan's arena falls from 822528 to 791808 B.
// RUN: mw-opt %t.llama.mlir --mw-chunk-loss="report=true fused=true" -o /dev/null | FileCheck %s --check-prefix=FUSED
// FUSED: mw-chunk-loss @train_step: [64, 256] logits in 8 chunks of 8 rows, with their gradient, live tensor peak 838916 -> 781832 bytes
// RUN: mw-opt %t.llama.mlir --mw-train-pipeline="fuse=true" -o %t.llama.p0.mlir
// RUN: mw-opt %t.llama.mlir --mw-train-pipeline="fuse=true chunk-loss=8" -o %t.llama.p8.mlir
// RUN: FileCheck %s --check-prefix=FUSED0 --input-file %t.llama.p0.mlir
// RUN: FileCheck %s --check-prefix=FUSED8 --input-file %t.llama.p8.mlir
// FUSED0: func.func @train_step{{.*}}mw.arena_size = 822528 : i64
// FUSED8: func.func @train_step{{.*}}mw.arena_size = 791808 : i64
// RUN: mw-opt %t.llama.mlir --mw-chunk-loss=force=true -o %t.llama.c.mlir
// RUN: mw-eval %t.llama.mlir --entry train_step --random-inputs 4 --save-inputs %t.llama.in --outputs %t.llama.ref > /dev/null
// RUN: mw-eval %t.llama.c.mlir --entry train_step --inputs %t.llama.in --outputs %t.llama.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.llama.ref %t.llama.c --rtol 1e-6 | FileCheck %s --check-prefix=LLAMA
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.llama.ref %t.llama.c --ignore loss,lm_head.weight | FileCheck %s --check-prefix=LLAMABITS
// LLAMA: compared 22 tensors, 0 mismatches
// LLAMABITS: compared 20 tensors, 0 mismatches
// RUN: mw-models bert --preset bert-tiny --train --optimizer sgd -o %t.bert.mlir
// RUN: mw-opt %t.bert.mlir --mw-chunk-loss="chunks=5 force=true" -o %t.bert.c.mlir
// RUN: mw-eval %t.bert.mlir --entry train_step --random-inputs 5 --save-inputs %t.bert.in --outputs %t.bert.ref > /dev/null
// RUN: mw-eval %t.bert.c.mlir --entry train_step --inputs %t.bert.in --outputs %t.bert.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.bert.ref %t.bert.c --rtol 1e-6 | FileCheck %s --check-prefix=BERT
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.bert.ref %t.bert.c --ignore loss,bert.embeddings.word_embeddings.weight,cls.predictions.bias | FileCheck %s --check-prefix=BERTBITS
// BERT: compared 43 tensors, 0 mismatches
// BERTBITS: compared 40 tensors, 0 mismatches
// RUN: mw-models opt --preset opt-tiny --train --optimizer sgd -o %t.opt.mlir
// RUN: mw-opt %t.opt.mlir --mw-chunk-loss=force=true -o %t.opt.c.mlir
// RUN: mw-eval %t.opt.mlir --entry train_step --random-inputs 6 --save-inputs %t.opt.in --outputs %t.opt.ref > /dev/null
// RUN: mw-eval %t.opt.c.mlir --entry train_step --inputs %t.opt.in --outputs %t.opt.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.opt.ref %t.opt.c --rtol 1e-6 | FileCheck %s --check-prefix=OPT
// OPT: 0 mismatches
// RUN: mw-models mlp --preset mlp-tiny --train --optimizer sgd -o %t.mlp.mlir
// RUN: mw-opt %t.mlp.mlir --mw-chunk-loss="chunks=4 force=true report=true" -o %t.mlp.c.mlir | FileCheck %s --check-prefix=MLP
// MLP: mw-chunk-loss @train_step: [4, 10] logits in 4 chunks of 1 rows, with their gradient, live tensor peak
// RUN: mw-eval %t.mlp.mlir --entry train_step --random-inputs 7 --save-inputs %t.mlp.in --outputs %t.mlp.ref > /dev/null
// RUN: mw-eval %t.mlp.c.mlir --entry train_step --inputs %t.mlp.in --outputs %t.mlp.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.mlp.ref %t.mlp.c --rtol 1e-6 | FileCheck %s --check-prefix=OPT
//
// AdamW (the default).
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.adam.mlir
// RUN: mw-opt %t.adam.mlir --mw-chunk-loss=force=true -o %t.adam.c.mlir
// RUN: mw-eval %t.adam.mlir --entry train_step --random-inputs 3 --save-inputs %t.adam.in --outputs %t.adam.ref > /dev/null
// RUN: mw-eval %t.adam.c.mlir --entry train_step --inputs %t.adam.in --outputs %t.adam.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.adam.ref %t.adam.c --rtol 1e-4 | FileCheck %s --check-prefix=OPT
//
// bf16 and fp16 with SGD (f32 master weights; the fp16 step's loss
// scaling seeds the gradient with the scale, an argument).
// RUN: mw-models llama --preset llama-tiny --train --precision bf16 --optimizer sgd -o %t.bf16.mlir
// RUN: mw-opt %t.bf16.mlir --mw-chunk-loss=force=true -o %t.bf16.c.mlir
// RUN: mw-eval %t.bf16.mlir --entry train_step --random-inputs 3 --save-inputs %t.bf16.in --outputs %t.bf16.ref > /dev/null
// RUN: mw-eval %t.bf16.c.mlir --entry train_step --inputs %t.bf16.in --outputs %t.bf16.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.bf16.ref %t.bf16.c --rtol 1e-5 | FileCheck %s --check-prefix=OPT
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.bf16.ref %t.bf16.c --ignore loss,lm_head.weight | FileCheck %s --check-prefix=OPT
// RUN: mw-models gpt --preset gpt2-tiny --train --precision fp16 --optimizer sgd -o %t.fp16.mlir
// RUN: mw-opt %t.fp16.mlir --mw-chunk-loss=force=true -o %t.fp16.c.mlir
// RUN: mw-eval %t.fp16.mlir --entry train_step --random-inputs 3 --save-inputs %t.fp16.in --outputs %t.fp16.ref > /dev/null
// RUN: mw-eval %t.fp16.c.mlir --entry train_step --inputs %t.fp16.in --outputs %t.fp16.c > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.fp16.ref %t.fp16.c --rtol 1e-5 | FileCheck %s --check-prefix=OPT
//
// After --mw-zero (stages 1-3, two ranks): each rank's chunks of its own
// rows, the labels' count per rank (the local mean, as before).
// RUN: mw-opt %t.adam.mlir --mw-zero="stage=3 ranks=2 reduce-bucket=20000" -o %t.z.mlir
// RUN: mw-opt %t.z.mlir --mw-chunk-loss="chunks=4 force=true report=true" -o %t.z.c.mlir | FileCheck %s --check-prefix=ZERO
// ZERO: mw-chunk-loss @train_step: [32, 256] logits in 4 chunks of 8 rows, with their gradient, live tensor peak
// RUN: mw-eval %t.z.mlir --entry train_step --ranks 2 --random-inputs 3 --outputs %t.z.ref.st > /dev/null
// RUN: mw-eval %t.z.c.mlir --entry train_step --ranks 2 --random-inputs 3 --outputs %t.z.c.st > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z.ref.rank0.st %t.z.c.rank0.st --rtol 1e-4 | FileCheck %s --check-prefix=OPT
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z.ref.rank1.st %t.z.c.rank1.st --rtol 1e-4 | FileCheck %s --check-prefix=OPT
//
// mw-run on the CPU (the evaluator's matmul loops): the chunked step
// planned with and without --mw-fuse trains to the same weights, bit for
// bit (the fused weight-gradient kernels add each chunk's product into the
// accumulator's own buffer), and to the unchunked step's within 1e-5 after
// 3 SGD steps.
// RUN: mw-opt %t.gpt.mlir --mw-train-pipeline -o %t.p0.mlir
// RUN: mw-translate --mw-to-plan %t.p0.mlir -o %t.p0.mwplan
// RUN: mw-opt %t.gpt.c.mlir --mw-train-pipeline -o %t.p1.mlir
// RUN: mw-translate --mw-to-plan %t.p1.mlir -o %t.p1.mwplan
// RUN: mw-opt %t.gpt.c.mlir --mw-train-pipeline=fuse=true -o %t.p2.mlir
// RUN: FileCheck %s --check-prefix=ACC --input-file %t.p2.mlir
// ACC: mw.kernel ins(%{{.*}}, %{{.*}}, %[[A:[a-z_0-9]*]] : memref<21x256xf32>, {{.*}}, memref<256x64xf32>) outs(%[[A]] : memref<256x64xf32>) attributes {mw.layer = "lm_head"}
// RUN: mw-translate --mw-to-plan %t.p2.mlir -o %t.p2.mwplan
// On a planned step (the ops inside kernels) the pass changes nothing.
// RUN: mw-opt %t.p0.mlir --mw-chunk-loss=force=true -o %t.p0.again.mlir
// RUN: mw-opt %t.p0.mlir -o %t.p0.same.mlir
// RUN: cmp %t.p0.again.mlir %t.p0.same.mlir
// RUN: mw-run %t.p0.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w0 > /dev/null
// RUN: mw-run %t.p1.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w1 > /dev/null
// RUN: mw-run %t.p2.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w2 > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w1 %t.w2 | FileCheck %s --check-prefix=SGD
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w0 %t.w1 --rtol 1e-5 | FileCheck %s --check-prefix=SGD
// SGD: compared 28 tensors, 0 mismatches
