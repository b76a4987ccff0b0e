// Recompute chains read the step's constants instead of cloning them: with
// unfused attention every recomputed block's masked add reads the one [S, S]
// causal mask of the step, and llama's rotary cos/sin tables stay one pair;
// the outputs stay bit-identical to the original step's, before and after
// planning. (Before, each recomputed block cloned the mask: gpt2-small
// --attention=unfused with strategy=all went from a 17 MB step to 126 MB.)

// RUN: mw-models gpt --preset gpt2-tiny --attention=unfused --train -o %t.gpt.mlir
// RUN: mw-opt %t.gpt.mlir --mw-remat=strategy=all -o %t.gpt.all.mlir
// RUN: FileCheck %s --check-prefix=ALL < %t.gpt.all.mlir
// One mask in @forward, one in @train_step, as before --mw-remat.
// RUN: grep -c "= mw.constant" %t.gpt.mlir | FileCheck %s --check-prefix=TWO
// RUN: grep -c "= mw.constant" %t.gpt.all.mlir | FileCheck %s --check-prefix=TWO
// RUN: mw-opt %t.gpt.mlir --mw-remat="strategy=every-k k=1" -o %t.gpt.k1.mlir
// RUN: grep -c "= mw.constant" %t.gpt.k1.mlir | FileCheck %s --check-prefix=TWO
// RUN: mw-eval %t.gpt.mlir --entry train_step --random-inputs 11 --save-inputs %t.gpt.in --print > %t.gpt.ref
// RUN: mw-eval %t.gpt.all.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-eval %t.gpt.k1.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -
// RUN: mw-opt %t.gpt.all.mlir --mw-train-pipeline -o %t.gpt.all.p.mlir
// RUN: mw-eval %t.gpt.all.p.mlir --entry train_step --inputs %t.gpt.in --print | diff %t.gpt.ref -

// RUN: mw-models llama --preset llama-tiny --rotary --train -o %t.llama.mlir
// RUN: mw-opt %t.llama.mlir --mw-remat=strategy=all -o %t.llama.all.mlir
// RUN: grep -c "= mw.constant" %t.llama.mlir | FileCheck %s --check-prefix=FOUR
// RUN: grep -c "= mw.constant" %t.llama.all.mlir | FileCheck %s --check-prefix=FOUR
// RUN: mw-eval %t.llama.mlir --entry train_step --random-inputs 11 --save-inputs %t.llama.in --print > %t.llama.ref
// RUN: mw-eval %t.llama.all.mlir --entry train_step --inputs %t.llama.in --print | diff %t.llama.ref -

// ALL-LABEL: func.func @train_step
// ALL:       %[[MASK:.*]] = mw.constant {mw.layer = "h.0.attn"}
// ALL-NOT:   mw.constant
// ALL-DAG:   mw.add %{{.*}}, %[[MASK]] {mw.layer = "h.0.attn", mw.recompute}
// ALL-DAG:   mw.add %{{.*}}, %[[MASK]] {mw.layer = "h.1.attn", mw.recompute}
// ALL-NOT:   mw.constant
// ALL:       return

// TWO: {{^}}2{{$}}
// FOUR: {{^}}4{{$}}
