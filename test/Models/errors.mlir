// Invalid command lines fail with one clear message and a non-zero exit, and
// write nothing.
//
// RUN: not mw-models gpt --heads 5 --hidden 64 -o %t.out 2>&1 | FileCheck %s --check-prefix=HEADS
// RUN: not test -e %t.out
// HEADS: mw-models: error: --hidden (64) must be a multiple of --heads (5)
//
// RUN: not mw-models gpt --layers 0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: mw-models: error: --layers must be positive, got 0
// A size that would run for minutes stops at once, naming the limit.
// RUN: not mw-models gpt --layers 100000 -o %t.out 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not test -e %t.out
// HUGE: mw-models: error: --layers 100000 is more than 2048, the most mw-models generates (GPT-3 has 96)
// RUN: not mw-models llama --batch -2 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: mw-models: error: --batch must be positive, got -2
// RUN: not mw-models mlp --classes 0 2>&1 | FileCheck %s --check-prefix=CLASSES
// CLASSES: mw-models: error: --classes must be positive, got 0
//
// RUN: not mw-models transformer 2>&1 | FileCheck %s --check-prefix=FAMILY
// FAMILY: mw-models: error: unknown family 'transformer'; valid families: mlp, gpt, llama, bert, opt
// RUN: not mw-models 2>&1 | FileCheck %s --check-prefix=NOFAMILY
// NOFAMILY: mw-models: error: no family given; usage: mw-models FAMILY [options] (valid families: mlp, gpt, llama, bert, opt; see --help)
//
// RUN: not mw-models gpt --preset gpt4 2>&1 | FileCheck %s --check-prefix=PRESET
// PRESET: mw-models: error: unknown preset 'gpt4'; valid presets: mlp-tiny, gpt2-tiny, gpt2-small, gpt2-medium, gpt2-large, gpt2-xl, gpt3-175b, llama-tiny, llama-tiny-gqa, llama-7b-shaped, bert-tiny, bert-base, bert-large, opt-tiny, opt-30b-shaped
// RUN: not mw-models bert --preset gpt2-small 2>&1 | FileCheck %s --check-prefix=WRONGFAMILY
// WRONGFAMILY: mw-models: error: preset 'gpt2-small' is a gpt model, not bert
//
// Flags a family does not use are errors, not silently ignored.
// RUN: not mw-models mlp --heads 4 2>&1 | FileCheck %s --check-prefix=MLPHEADS
// MLPHEADS: mw-models: error: --heads does not apply to the mlp family
// RUN: not mw-models gpt --in-features 8 2>&1 | FileCheck %s --check-prefix=INFEATURES
// INFEATURES: mw-models: error: --in-features does not apply to the gpt family
// RUN: not mw-models bert --rotary 2>&1 | FileCheck %s --check-prefix=ROTARY
// ROTARY: mw-models: error: --rotary applies only to the llama family, not bert
// RUN: not mw-models llama --hidden 60 --heads 4 --rotary 2>&1 | FileCheck %s --check-prefix=ODDHEAD
// ODDHEAD: mw-models: error: --rotary needs an even head dimension, got 60 / 4 = 15
// RUN: not mw-models gpt --kv-heads 2 2>&1 | FileCheck %s --check-prefix=KVFAMILY
// KVFAMILY: mw-models: error: --kv-heads does not apply to the gpt family
// RUN: not mw-models llama --kv-heads 3 2>&1 | FileCheck %s --check-prefix=KVDIV
// KVDIV: mw-models: error: --kv-heads (3) must divide --heads (4)
// RUN: not mw-models llama --kv-heads 0 2>&1 | FileCheck %s --check-prefix=KVZERO
// KVZERO: mw-models: error: --kv-heads must be positive, got 0
//
// Sizes that do not fit the i32 labels or overflow 64-bit sizes.
// RUN: not mw-models gpt --vocab 3000000000 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: mw-models: error: --vocab (3000000000) does not fit the i32 tokens and labels
// RUN: not mw-models gpt --hidden 4000000000000 --heads 1 --ffn 4000000000000 --layers 2000 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// OVERFLOW: mw-models: error: the model is too large: a tensor size overflows 64-bit integers
//
// RUN: not mw-models gpt --dtype f64 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: Cannot find option named 'f64'
//
// RUN: not mw-models gpt -o %t.missing/dir/out.mlir 2>&1 | FileCheck %s --check-prefix=OUTPUT
// OUTPUT: mw-models: error: cannot write '{{.*}}out.mlir':
