// Every preset's tiny configuration runs end to end in the evaluator with a
// finite loss near ln(classes) at initialization, in every dtype, forward and
// training step.
// RUN: mw-models gpt --preset gpt2-tiny | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models llama --preset llama-tiny | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models llama --preset llama-tiny --rotary | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models llama --preset llama-tiny-gqa --rotary | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models llama --preset llama-tiny-gqa --dtype bf16 --train --precision bf16 | mw-eval - --entry train_step --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models bert --preset bert-tiny | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models opt --preset opt-tiny | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models opt --preset opt-tiny --dtype bf16 | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models opt --preset opt-tiny --train | mw-eval - --entry train_step --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models mlp --preset mlp-tiny | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=MLP
// RUN: mw-models gpt --preset gpt2-tiny --dtype bf16 | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models llama --preset llama-tiny --dtype f16 | mw-eval - --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models gpt --preset gpt2-tiny --train | mw-eval - --entry train_step --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models bert --preset bert-tiny --train --precision bf16 | mw-eval - --entry train_step --random-inputs 0 --print | FileCheck %s --check-prefix=SEQ
// RUN: mw-models mlp --preset mlp-tiny --train --optimizer sgd | mw-eval - --entry train_step --random-inputs 0 --print | FileCheck %s --check-prefix=MLP

// ln(256) = 5.545; ln(10) = 2.303.
// SEQ: loss: f32 [] checksum=0x{{[0-9a-f]+}} sum=5.{{[45][0-9]+}}e+00
// MLP: loss: f32 [] checksum=0x{{[0-9a-f]+}} sum=2.{{[0-9]+}}e+00
