// The output is the same byte for byte on every run, and -o writes exactly
// what stdout gets.
//
// RUN: mw-models gpt --preset gpt2-tiny > %t1
// RUN: mw-models gpt --preset gpt2-tiny > %t2
// RUN: diff %t1 %t2
// RUN: mw-models gpt --preset gpt2-tiny -o %t3
// RUN: diff %t1 %t3
//
// RUN: mw-models llama --preset llama-tiny --rotary --dtype bf16 > %t4
// RUN: mw-models llama --preset llama-tiny --rotary --dtype bf16 > %t5
// RUN: diff %t4 %t5
//
// RUN: mw-models bert --preset bert-tiny > %t6
// RUN: mw-models bert --preset bert-tiny > %t7
// RUN: diff %t6 %t7
//
// RUN: mw-models mlp --preset mlp-tiny > %t8
// RUN: mw-models mlp --preset mlp-tiny > %t9
// RUN: diff %t8 %t9
//
// The flags the header prints regenerate the same module.
// RUN: mw-models gpt --preset gpt2-tiny --layers 3 --dtype f16 > %t10
// RUN: FileCheck %s --input-file %t10
// CHECK: //   mw-models gpt --layers 3 --hidden 64 --heads 4 --ffn 256 --seq 32 --batch 2 --vocab 256 --dtype f16
// CHECK: // gpt: layers=3 hidden=64
// RUN: mw-models gpt --layers 3 --hidden 64 --heads 4 --ffn 256 --seq 32 --batch 2 --vocab 256 --dtype f16 > %t11
// RUN: diff %t10 %t11
