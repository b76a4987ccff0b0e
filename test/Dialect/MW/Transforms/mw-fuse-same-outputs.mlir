// --mw-fuse computes the same outputs as the program it groups, bit for bit:
// a fusion's body runs the same ops in the same order (mw-eval evaluates it
// op by op), and so does the fused mw.kernel that --mw-bufferize makes of it
// and the planned step. Training steps and forwards of the four model
// families, unfused attention too: gpt2-tiny (f32, AdamW), llama-tiny (f32
// and bf16, grad-accum 2), bert-tiny (f32; fp16 with dynamic loss scaling)
// and mlp-tiny (SGD, Nesterov). Inputs are saved from the unfused program
// and fed to each later form.

// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.gpt.mlir
// RUN: mw-eval %t.gpt.mlir --entry train_step --random-inputs 7 --save-inputs %t.gpt.in --print > %t.gpt.ref
// RUN: mw-opt %t.gpt.mlir --mw-fuse -o %t.gpt.f.mlir
// RUN: mw-eval %t.gpt.f.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.f.mlir --mw-bufferize -o %t.gpt.b.mlir
// RUN: mw-eval %t.gpt.b.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.b.mlir --mw-static-arena --mw-verify-plan -o %t.gpt.p.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.p.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -

// RUN: mw-models gpt --preset gpt2-tiny --train --attention unfused -o %t.gptu.mlir
// RUN: mw-eval %t.gptu.mlir --entry train_step --random-inputs 7 --save-inputs %t.gptu.in --print > %t.gptu.ref
// RUN: mw-opt %t.gptu.mlir --mw-fuse -o %t.gptu.f.mlir
// RUN: mw-eval %t.gptu.f.mlir --entry train_step --inputs %t.gptu.in --print | diff %t.gptu.ref -
// RUN: mw-opt %t.gptu.f.mlir --mw-bufferize -o %t.gptu.b.mlir
// RUN: mw-eval %t.gptu.b.mlir --entry train_step --inputs %t.gptu.in --print | diff %t.gptu.ref -
// RUN: mw-opt %t.gptu.b.mlir --mw-static-arena --mw-verify-plan -o %t.gptu.p.mlir 2>/dev/null
// RUN: mw-eval %t.gptu.p.mlir --entry train_step --inputs %t.gptu.in --print | diff %t.gptu.ref -
// The pipelines' fuse option gives the same program.
// RUN: mw-opt %t.gptu.mlir --mw-bufferize=fuse=true -o %t.gptu.bf.mlir
// RUN: cmp %t.gptu.b.mlir %t.gptu.bf.mlir
// RUN: mw-opt %t.gptu.mlir --mw-train-pipeline=fuse=true -o %t.gptu.tp.mlir
// RUN: mw-eval %t.gptu.tp.mlir --entry train_step --inputs %t.gptu.in --print | diff %t.gptu.ref -
// RUN: mw-eval %t.gptu.mlir --entry forward --random-inputs 7 --save-inputs %t.gptuf.in --print > %t.gptuf.ref
// RUN: mw-eval %t.gptu.f.mlir --entry forward --inputs %t.gptuf.in --print | diff %t.gptuf.ref -
// RUN: mw-eval %t.gptu.b.mlir --entry forward --inputs %t.gptuf.in --print | diff %t.gptuf.ref -

// --mw-sink, which --mw-train-pipeline=fuse=true runs before --mw-fuse,
// only reorders: with a vocabulary of 4000 it moves the lm_head's wte
// gradient toward the sum with the embedding's, and the row kernels then
// write over dying inputs.
// RUN: mw-models gpt --preset gpt2-tiny --train --attention unfused --batch 1 --vocab 4000 -o %t.gptv.mlir
// RUN: mw-eval %t.gptv.mlir --entry train_step --random-inputs 7 --save-inputs %t.gptv.in --print > %t.gptv.ref
// RUN: mw-opt %t.gptv.mlir --mw-sink -o %t.gptv.s.mlir
// RUN: mw-opt %t.gptv.mlir -o %t.gptv.id.mlir
// RUN: not cmp -s %t.gptv.id.mlir %t.gptv.s.mlir
// RUN: mw-eval %t.gptv.s.mlir --entry train_step --inputs %t.gptv.in --print | diff %t.gptv.ref -
// RUN: mw-opt %t.gptv.mlir --mw-train-pipeline=fuse=true -o %t.gptv.tp.mlir
// Deterministic: the same order, kernels and offsets every time.
// RUN: mw-opt %t.gptv.mlir --mw-train-pipeline=fuse=true -o %t.gptv.tp2.mlir
// RUN: cmp %t.gptv.tp.mlir %t.gptv.tp2.mlir
// RUN: mw-eval %t.gptv.tp.mlir --entry train_step --inputs %t.gptv.in --print | diff %t.gptv.ref -

// RUN: mw-models gpt --preset gpt2-tiny -o %t.gptfwd.mlir
// RUN: mw-eval %t.gptfwd.mlir --entry forward --random-inputs 7 --save-inputs %t.gptfwd.in --print > %t.gptfwd.ref
// RUN: mw-opt %t.gptfwd.mlir --mw-fuse -o %t.gptfwd.f.mlir
// RUN: mw-eval %t.gptfwd.f.mlir --entry forward --inputs %t.gptfwd.in --print | diff %t.gptfwd.ref -
// RUN: mw-opt %t.gptfwd.f.mlir --mw-bufferize -o %t.gptfwd.b.mlir
// RUN: mw-eval %t.gptfwd.b.mlir --entry forward --inputs %t.gptfwd.in --print | diff %t.gptfwd.ref -

// RUN: mw-models llama --preset llama-tiny --train --attention unfused -o %t.llama.mlir
// RUN: mw-eval %t.llama.mlir --entry train_step --random-inputs 7 --save-inputs %t.llama.in --print > %t.llama.ref
// RUN: mw-opt %t.llama.mlir --mw-fuse -o %t.llama.f.mlir
// RUN: mw-eval %t.llama.f.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.f.mlir --mw-bufferize -o %t.llama.b.mlir
// RUN: mw-eval %t.llama.b.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-eval %t.llama.mlir --entry forward --random-inputs 7 --save-inputs %t.llamaf.in --print > %t.llamaf.ref
// RUN: mw-eval %t.llama.f.mlir --entry forward --inputs %t.llamaf.in --print | diff %t.llamaf.ref -

// RUN: mw-models llama --preset llama-tiny --train --precision bf16 --grad-accum 2 -o %t.llamabf.mlir
// RUN: mw-eval %t.llamabf.mlir --entry train_step --random-inputs 7 --save-inputs %t.llamabf.in --print > %t.llamabf.ref
// RUN: mw-opt %t.llamabf.mlir --mw-fuse -o %t.llamabf.f.mlir
// RUN: mw-eval %t.llamabf.f.mlir --entry train_step --inputs %t.llamabf.in --print | diff %t.llamabf.ref -
// RUN: mw-opt %t.llamabf.f.mlir --mw-bufferize -o %t.llamabf.b.mlir
// RUN: mw-eval %t.llamabf.b.mlir --entry train_step --inputs %t.llamabf.in --print | diff %t.llamabf.ref -

// RUN: mw-models bert --preset bert-tiny --train --attention unfused -o %t.bert.mlir
// RUN: mw-eval %t.bert.mlir --entry train_step --random-inputs 7 --save-inputs %t.bert.in --print > %t.bert.ref
// RUN: mw-opt %t.bert.mlir --mw-fuse -o %t.bert.f.mlir
// RUN: mw-eval %t.bert.f.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.f.mlir --mw-bufferize -o %t.bert.b.mlir
// RUN: mw-eval %t.bert.b.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-eval %t.bert.mlir --entry forward --random-inputs 7 --save-inputs %t.bertf.in --print > %t.bertf.ref
// RUN: mw-eval %t.bert.f.mlir --entry forward --inputs %t.bertf.in --print | diff %t.bertf.ref -

// RUN: mw-models bert --preset bert-tiny --train --precision fp16 -o %t.bert16.mlir
// RUN: mw-eval %t.bert16.mlir --entry train_step --random-inputs 7 --save-inputs %t.bert16.in --print > %t.bert16.ref
// RUN: mw-opt %t.bert16.mlir --mw-fuse -o %t.bert16.f.mlir
// RUN: mw-eval %t.bert16.f.mlir --entry train_step --inputs %t.bert16.in --print | diff %t.bert16.ref -
// RUN: mw-opt %t.bert16.f.mlir --mw-bufferize -o %t.bert16.b.mlir
// RUN: mw-eval %t.bert16.b.mlir --entry train_step --inputs %t.bert16.in --print | diff %t.bert16.ref -

// RUN: mw-models mlp --preset mlp-tiny --train --optimizer sgd --momentum 0.9 --nesterov -o %t.mlp.mlir
// RUN: mw-eval %t.mlp.mlir --entry train_step --random-inputs 7 --save-inputs %t.mlp.in --print > %t.mlp.ref
// RUN: mw-opt %t.mlp.mlir --mw-fuse -o %t.mlp.f.mlir
// RUN: mw-eval %t.mlp.f.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.f.mlir --mw-bufferize -o %t.mlp.b.mlir
// RUN: mw-eval %t.mlp.b.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.b.mlir --mw-static-arena --mw-verify-plan -o %t.mlp.p.mlir 2>/dev/null
// RUN: mw-eval %t.mlp.p.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-eval %t.mlp.mlir --entry forward --random-inputs 7 --save-inputs %t.mlpf.in --print > %t.mlpf.ref
// RUN: mw-eval %t.mlp.f.mlir --entry forward --inputs %t.mlpf.in --print | diff %t.mlpf.ref -

// After --mw-remat: still the same outputs, and every value the remat step
// keeps for the backward pass is still a result of the forward fusions.
// RUN: mw-opt %t.gptu.mlir --mw-remat="strategy=every-k k=2" -o %t.gptr.mlir
// RUN: mw-opt %t.gptr.mlir --mw-fuse -o %t.gptr.f.mlir
// RUN: mw-eval %t.gptr.f.mlir --entry train_step --inputs %t.gptu.in --print | diff %t.gptu.ref -
// RUN: mw-opt %t.gptr.f.mlir --mw-bufferize -o %t.gptr.b.mlir
// RUN: mw-eval %t.gptr.b.mlir --entry train_step --inputs %t.gptu.in --print | diff %t.gptu.ref -

// A ZeRO stage-3 step with overlapped collectives (two simulated ranks):
// fusions run between the collectives and their waits, same outputs.
// RUN: mw-opt %t.gptu.mlir --mw-zero="stage=3 ranks=2 overlap=on" -o %t.z.mlir
// RUN: mw-eval %t.z.mlir --entry train_step --ranks 2 --random-inputs 3 --print > %t.z.ref
// RUN: mw-opt %t.z.mlir --mw-fuse -o %t.z.f.mlir
// RUN: mw-eval %t.z.f.mlir --entry train_step --ranks 2 --random-inputs 3 --print | diff %t.z.ref -
// RUN: mw-opt %t.z.f.mlir --mw-train-pipeline -o %t.z.p.mlir
// RUN: mw-eval %t.z.p.mlir --entry train_step --ranks 2 --random-inputs 3 --print | diff %t.z.ref -
