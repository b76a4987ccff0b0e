// --mw-remat computes the same outputs as the step it rewrites, bit for bit
// (DESIGN.md decision 6), for every strategy on the four model
// families: gpt2-tiny (fp32, AdamW), llama-tiny (bf16, grad-accum 2),
// bert-tiny (fp16 with dynamic loss scaling) and mlp-tiny (SGD, Nesterov).
// Inputs are saved from the original step and fed to each rewritten one.

// RUN: mw-models gpt --preset gpt2-tiny --train -o %t.gpt.mlir
// RUN: mw-eval %t.gpt.mlir --entry train_step --random-inputs 7 --save-inputs %t.gpt.in --print > %t.gpt.ref
// RUN: mw-opt %t.gpt.mlir --mw-remat=strategy=none -o %t.gpt.none.mlir
// RUN: mw-eval %t.gpt.none.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat=strategy=all -o %t.gpt.all.mlir
// RUN: mw-eval %t.gpt.all.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=every-k k=1" -o %t.gpt.k1.mlir
// RUN: mw-eval %t.gpt.k1.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=every-k k=2" -o %t.gpt.k2.mlir
// RUN: mw-eval %t.gpt.k2.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat=strategy=sqrt -o %t.gpt.sqrt.mlir
// RUN: mw-eval %t.gpt.sqrt.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat=strategy=selective -o %t.gpt.sel.mlir
// RUN: mw-eval %t.gpt.sel.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat="budget=95%" -o %t.gpt.auto.mlir
// RUN: mw-eval %t.gpt.auto.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat="budget=92%" -o %t.gpt.auto92.mlir
// RUN: mw-eval %t.gpt.auto92.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat="saved-budget=30%" -o %t.gpt.saved.mlir
// RUN: mw-eval %t.gpt.saved.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat="saved-budget=0" -o %t.gpt.saved0.mlir
// RUN: mw-eval %t.gpt.saved0.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=optimal budget=92%" -o %t.gpt.opt.mlir
// RUN: mw-eval %t.gpt.opt.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// Unfused attention: selective recomputes the core attention.
// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train -o %t.gptu.mlir
// RUN: mw-eval %t.gptu.mlir --entry train_step --inputs %t.gpt.in --print > %t.gptu.ref
// RUN: mw-opt %t.gptu.mlir --mw-remat=strategy=selective -o %t.gptu.sel.mlir
// RUN: mw-eval %t.gptu.sel.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gptu.ref -
// RUN: mw-opt %t.gptu.mlir --mw-remat="budget=93%" -o %t.gptu.auto.mlir
// RUN: mw-eval %t.gptu.auto.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gptu.ref -
// Rematerializing a rematerialized step (clones count as backward ops).
// RUN: mw-opt %t.gptu.sel.mlir --mw-remat=strategy=sqrt -o %t.gpt.twice.mlir
// RUN: mw-eval %t.gpt.twice.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gptu.ref -
// The rewritten step still bufferizes, plans and verifies, with the same outputs.
// RUN: mw-opt %t.gpt.all.mlir --mw-bufferize --mw-static-arena --mw-verify-plan -o %t.gpt.all.p.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.all.p.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.sqrt.mlir --mw-bufferize --mw-static-arena --mw-verify-plan -o %t.gpt.sqrt.p.mlir 2>/dev/null
// RUN: mw-eval %t.gpt.sqrt.p.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -

// RUN: mw-models llama --preset llama-tiny --train --precision bf16 --grad-accum 2 -o %t.llama.mlir
// RUN: mw-eval %t.llama.mlir --entry train_step --random-inputs 7 --save-inputs %t.llama.in --print > %t.llama.ref
// RUN: mw-opt %t.llama.mlir --mw-remat=strategy=none -o %t.llama.none.mlir
// RUN: mw-eval %t.llama.none.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.mlir --mw-remat=strategy=all -o %t.llama.all.mlir
// RUN: mw-eval %t.llama.all.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.mlir --mw-remat="strategy=every-k k=1" -o %t.llama.k1.mlir
// RUN: mw-eval %t.llama.k1.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.mlir --mw-remat=strategy=sqrt -o %t.llama.sqrt.mlir
// RUN: mw-eval %t.llama.sqrt.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-models llama --preset llama-tiny --train --precision bf16 --grad-accum 2 --attention=unfused -o %t.llamau.mlir
// RUN: mw-eval %t.llamau.mlir --entry train_step --inputs %t.llama.in --print > %t.llamau.ref
// RUN: mw-opt %t.llamau.mlir --mw-remat=strategy=selective -o %t.llama.sel.mlir
// RUN: mw-eval %t.llama.sel.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llamau.ref -
// RUN: mw-opt %t.llama.mlir --mw-remat="budget=100%" -o %t.llama.auto.mlir
// RUN: mw-eval %t.llama.auto.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -
// RUN: mw-opt %t.llama.mlir --mw-remat="strategy=optimal budget=100%" -o %t.llama.opt.mlir
// RUN: mw-eval %t.llama.opt.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -

// RUN: mw-models bert --preset bert-tiny --train --precision fp16 -o %t.bert.mlir
// RUN: mw-eval %t.bert.mlir --entry train_step --random-inputs 7 --save-inputs %t.bert.in --print > %t.bert.ref
// RUN: mw-opt %t.bert.mlir --mw-remat=strategy=none -o %t.bert.none.mlir
// RUN: mw-eval %t.bert.none.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.mlir --mw-remat=strategy=all -o %t.bert.all.mlir
// RUN: mw-eval %t.bert.all.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.mlir --mw-remat="strategy=every-k k=1" -o %t.bert.k1.mlir
// RUN: mw-eval %t.bert.k1.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.mlir --mw-remat=strategy=sqrt -o %t.bert.sqrt.mlir
// RUN: mw-eval %t.bert.sqrt.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-models bert --preset bert-tiny --train --precision fp16 --attention=unfused -o %t.bertu.mlir
// RUN: mw-eval %t.bertu.mlir --entry train_step --inputs %t.bert.in --print > %t.bertu.ref
// RUN: mw-opt %t.bertu.mlir --mw-remat=strategy=selective -o %t.bert.sel.mlir
// RUN: mw-eval %t.bert.sel.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bertu.ref -
// fp16's step peaks at the optimizer (every master gradient is live until
// the overflow check, and each update's select follows it at once), where
// recompute cannot help: auto runs with a saved-bytes budget, optimal at the
// save-all peak.
// RUN: mw-opt %t.bert.mlir --mw-remat="saved-budget=50%" -o %t.bert.auto.mlir
// RUN: mw-eval %t.bert.auto.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -
// RUN: mw-opt %t.bert.mlir --mw-remat="strategy=optimal budget=100%" -o %t.bert.opt.mlir
// RUN: mw-eval %t.bert.opt.mlir --entry train_step --inputs %t.bert.in --print | diff %t.bert.ref -

// RUN: mw-models mlp --preset mlp-tiny --train --optimizer sgd --momentum 0.9 --nesterov -o %t.mlp.mlir
// RUN: mw-eval %t.mlp.mlir --entry train_step --random-inputs 7 --save-inputs %t.mlp.in --print > %t.mlp.ref
// RUN: mw-opt %t.mlp.mlir --mw-remat=strategy=none -o %t.mlp.none.mlir
// RUN: mw-eval %t.mlp.none.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.mlir --mw-remat=strategy=all -o %t.mlp.all.mlir
// RUN: mw-eval %t.mlp.all.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.mlir --mw-remat="strategy=every-k k=2" -o %t.mlp.k2.mlir
// RUN: mw-eval %t.mlp.k2.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.mlir --mw-remat=strategy=sqrt -o %t.mlp.sqrt.mlir
// RUN: mw-eval %t.mlp.sqrt.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.mlir --mw-remat=strategy=selective -o %t.mlp.sel.mlir
// RUN: mw-eval %t.mlp.sel.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.mlir --mw-remat="budget=100%" -o %t.mlp.auto.mlir
// RUN: mw-eval %t.mlp.auto.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
// RUN: mw-opt %t.mlp.mlir --mw-remat="strategy=optimal budget=100%" -o %t.mlp.opt.mlir
// RUN: mw-eval %t.mlp.opt.mlir --entry train_step --inputs %t.mlp.in --print | diff %t.mlp.ref -
