// --mw-chunk-loss="defer-weight-grad=true": a tied head's weight gradient
// made where it is added to the embedding's gradient, at the end of the
// backward pass, each chunk's logits and their gradient made again there.
// mw-eval's outputs before and after, as for the early form
// (mw-chunk-loss-models.mlir): every tensor but the loss and the tied
// weight bit for bit; those within 1e-6 of the largest value in f32 with
// SGD, 1e-4 with AdamW, 1e-5 with f16 compute (the embedding's gradient
// seeds the f32 sum).
//
// RUN: mw-models gpt --preset gpt2-tiny --train --optimizer sgd -o %t.gpt.mlir
// RUN: mw-opt %t.gpt.mlir --mw-chunk-loss="chunks=3 defer-weight-grad=true report=true" -o %t.gpt.d.mlir | FileCheck %s --check-prefix=GPT
// The forward's loss has no gradient: nothing to defer, and nothing said.
// GPT-NOT: @forward: weight gradient not deferred
// GPT: mw-chunk-loss @forward: [64, 256] logits in 3 chunks of 22 rows, live tensor peak
// GPT: mw-chunk-loss @train_step: [64, 256] logits in 3 chunks of 22 rows, with their gradient, the weight's gradient deferred to its sum with 'embeddings' (logits made twice), live tensor peak [[BEFORE:[0-9]+]] -> [[AFTER:[0-9]+]] bytes
// RUN: FileCheck %s --check-prefix=IR --input-file %t.gpt.d.mlir
// The early chunks make the loss, the logits' gradient and the hidden
// states' gradient; the weight's gradient waits for the embedding's.
// IR-LABEL: func.func @train_step
// IR: mw.cross_entropy_grad {{.*}}label_offset = 0
// IR-NOT: transpose_lhs
// IR: mw.cross_entropy_grad {{.*}}label_offset = 22
// IR-NOT: transpose_lhs
// IR: mw.cross_entropy_grad {{.*}}label_offset = 43
// IR-NOT: transpose_lhs
// IR: mw.concat
// IR: %[[E:.*]] = mw.embedding_grad
// IR: %[[H0:.*]] = mw.slice %[[H:[0-9]+]] offsets = [0, 0] sizes = [22, 64] {mw.layer = "lm_head", mw.recompute}
// IR: %[[L0:.*]] = mw.matmul %[[H0]], %arg0 {mw.layer = "lm_head", mw.recompute, transpose_rhs}
// IR: %[[G0:.*]] = mw.cross_entropy_grad %[[L0]], %{{.*}}, %{{.*}} {label_offset = 0 : i64, mw.layer = "loss", mw.recompute}
// IR: %[[P0:.*]] = mw.matmul %[[G0]], %[[H0]] {mw.layer = "lm_head", transpose_lhs}
// IR: %[[S0:.*]] = mw.add %[[E]], %[[P0]]
// IR: mw.slice %[[H]] offsets = [22, 0] sizes = [21, 64] {mw.layer = "lm_head", mw.recompute}
// IR: %[[S1:.*]] = mw.add %[[S0]], %{{.*}}
// IR: mw.slice %[[H]] offsets = [43, 0] sizes = [21, 64] {mw.layer = "lm_head", mw.recompute}
// IR: %[[S2:.*]] = mw.add %[[S1]], %{{.*}}
// IR: mw.sgd %arg0, %[[S2]]
//
// Without defer-weight-grad the same head is chunked early, with a higher
// peak.
// RUN: mw-opt %t.gpt.mlir --mw-chunk-loss="chunks=3 report=true" -o %t.gpt.c.mlir | FileCheck %s --check-prefix=EARLY
// EARLY: mw-chunk-loss @train_step: [64, 256] logits in 3 chunks of 22 rows, with their gradient, live tensor peak {{[0-9]+}} -> {{[0-9]+}} bytes
// RUN: mw-eval %t.gpt.mlir --entry train_step --random-inputs 3 --save-inputs %t.gpt.in --outputs %t.gpt.ref > /dev/null
// RUN: mw-eval %t.gpt.d.mlir --entry train_step --inputs %t.gpt.in --outputs %t.gpt.d > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.gpt.ref %t.gpt.d --rtol 1e-6 | FileCheck %s --check-prefix=GPTSUM
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.gpt.ref %t.gpt.d --ignore loss,wte | FileCheck %s --check-prefix=GPTBITS
// GPTSUM: compared 29 tensors, 0 mismatches
// GPTBITS: compared 27 tensors, 0 mismatches
//
// An untied head (llama-tiny's [D, V] lm_head) has no later sum: chunked
// early or left whole, as without the option (its forward is chunked, its
// step left whole), byte for byte.
// RUN: mw-models llama --preset llama-tiny --train --optimizer sgd -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-chunk-loss="defer-weight-grad=true report=true" -o %t.llama.d.mlir | FileCheck %s --check-prefix=UNTIED
// UNTIED: mw-chunk-loss @train_step: weight gradient not deferred: the weight's gradient is not added to a value made after the chunks
// UNTIED: mw-chunk-loss @train_step: left whole:
// RUN: mw-opt %t.llama.mlir --mw-chunk-loss -o %t.llama.c.mlir
// RUN: cmp %t.llama.c.mlir %t.llama.d.mlir
//
// BERT's biased tied MLM head: the bias is added again to each chunk's
// recomputed logits.
// RUN: mw-models bert --preset bert-tiny --train --optimizer sgd -o %t.bert.mlir
// RUN: mw-opt %t.bert.mlir --mw-chunk-loss="chunks=5 force=true defer-weight-grad=true report=true" -o %t.bert.d.mlir | FileCheck %s --check-prefix=BERT
// BERT: @train_step: {{.*}}deferred to its sum with
// RUN: mw-eval %t.bert.mlir --entry train_step --random-inputs 5 --save-inputs %t.bert.in --outputs %t.bert.ref > /dev/null
// RUN: mw-eval %t.bert.d.mlir --entry train_step --inputs %t.bert.in --outputs %t.bert.d > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.bert.ref %t.bert.d --rtol 1e-6 | FileCheck %s --check-prefix=BERTSUM
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.bert.ref %t.bert.d --ignore loss,bert.embeddings.word_embeddings.weight,cls.predictions.bias | FileCheck %s --check-prefix=BERTBITS
// BERTSUM: compared 43 tensors, 0 mismatches
// BERTBITS: compared 40 tensors, 0 mismatches
//
// AdamW, and fp16 compute with SGD (the f16 embedding gradient is cast to
// f32 to seed the sum, which is cast back once).
// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.adam.mlir
// RUN: mw-opt %t.adam.mlir --mw-chunk-loss="force=true defer-weight-grad=true" -o %t.adam.d.mlir
// RUN: mw-eval %t.adam.mlir --entry train_step --random-inputs 3 --save-inputs %t.adam.in --outputs %t.adam.ref > /dev/null
// RUN: mw-eval %t.adam.d.mlir --entry train_step --inputs %t.adam.in --outputs %t.adam.d > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.adam.ref %t.adam.d --rtol 1e-4 | FileCheck %s --check-prefix=OK
// OK: 0 mismatches
// RUN: mw-models gpt --preset gpt2-tiny --train --precision fp16 --optimizer sgd -o %t.fp16.mlir
// RUN: mw-opt %t.fp16.mlir --mw-chunk-loss="force=true defer-weight-grad=true report=true" -o %t.fp16.d.mlir | FileCheck %s --check-prefix=FP16
// FP16: @train_step: {{.*}}deferred to its sum with
// RUN: FileCheck %s --check-prefix=FP16IR --input-file %t.fp16.d.mlir
// FP16IR: %[[E16:.*]] = mw.embedding_grad {{.*}} -> tensor<256x64xf16>
// FP16IR-NEXT: mw.cast %[[E16]] {{.*}} to tensor<256x64xf32>
// RUN: mw-eval %t.fp16.mlir --entry train_step --random-inputs 3 --save-inputs %t.fp16.in --outputs %t.fp16.ref > /dev/null
// RUN: mw-eval %t.fp16.d.mlir --entry train_step --inputs %t.fp16.in --outputs %t.fp16.d > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.fp16.ref %t.fp16.d --rtol 1e-5 | FileCheck %s --check-prefix=OK
//
// ZeRO-3 on two ranks: each rank's own rows, deferred to its embedding's
// gradient before the reduce-scatter.
// RUN: mw-opt %t.adam.mlir --mw-zero="stage=3 ranks=2 reduce-bucket=20000" -o %t.z.mlir
// RUN: mw-opt %t.z.mlir --mw-chunk-loss="chunks=4 force=true defer-weight-grad=true report=true" -o %t.z.d.mlir | FileCheck %s --check-prefix=ZERO
// ZERO: mw-chunk-loss @train_step: [32, 256] logits in 4 chunks of 8 rows, with their gradient, the weight's gradient deferred
// RUN: mw-eval %t.z.mlir --entry train_step --ranks 2 --random-inputs 3 --outputs %t.z.ref.st > /dev/null
// RUN: mw-eval %t.z.d.mlir --entry train_step --ranks 2 --random-inputs 3 --outputs %t.z.d.st > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z.ref.rank0.st %t.z.d.rank0.st --rtol 1e-4 | FileCheck %s --check-prefix=OK
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.z.ref.rank1.st %t.z.d.rank1.st --rtol 1e-4 | FileCheck %s --check-prefix=OK
//
// mw-run on the CPU: the deferred step planned with and without --mw-fuse
// trains to the same weights bit for bit (each chunk's product is added
// into the embedding gradient's own buffer), and to the unchunked step's
// within 1e-5 after 3 SGD steps.
// RUN: mw-opt %t.gpt.mlir --mw-train-pipeline -o %t.p0.mlir
// RUN: mw-translate --mw-to-plan %t.p0.mlir -o %t.p0.mwplan
// RUN: mw-opt %t.gpt.d.mlir --mw-train-pipeline -o %t.p1.mlir
// RUN: mw-translate --mw-to-plan %t.p1.mlir -o %t.p1.mwplan
// RUN: mw-opt %t.gpt.mlir --mw-train-pipeline="fuse=true chunk-loss=3 defer-weight-grad=true" -o %t.p2.mlir
// RUN: FileCheck %s --check-prefix=ACC --input-file %t.p2.mlir
// ACC: mw.embedding_grad
// ACC: mw.kernel ins(%{{.*}}, %{{.*}}, %[[A:[a-z_0-9]*]] : memref<22x256xf32>, {{.*}}, memref<256x64xf32>) outs(%[[A]] : memref<256x64xf32>) attributes {mw.layer = "lm_head"}
// RUN: mw-translate --mw-to-plan %t.p2.mlir -o %t.p2.mwplan
// RUN: mw-run %t.p0.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w0 > /dev/null
// RUN: mw-run %t.p1.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w1 > /dev/null
// RUN: mw-run %t.p2.mwplan --steps 3 --seed 4 --reference-matmul --save-weights %t.w2 > /dev/null
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w1 %t.w2 | FileCheck %s --check-prefix=SGD
// RUN: python3 %S/../../../Runtime/Inputs/compare_safetensors.py %t.w0 %t.w1 --rtol 1e-5 | FileCheck %s --check-prefix=SGD
// SGD: compared 28 tensors, 0 mismatches
//
// The option in --help, and a value that is not a boolean.
// RUN: mw-opt --help | FileCheck %s --check-prefix=HELP
// HELP: --mw-chunk-loss
// HELP-NEXT: --chunks=<long>
// HELP-NEXT: --defer-weight-grad {{ *}}- Where the head's weight gradient is added to a contribution made later
// LLVM's option parser says why; MLIR 19's empty error after it is not
// printed.
// RUN: not mw-opt %t.gpt.mlir --mw-chunk-loss="defer-weight-grad=maybe" -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD --implicit-check-not=error
// BAD: mw-opt: for the --defer-weight-grad option: 'maybe' is invalid value for boolean argument! Try 0 or 1
