// The checked-in GPT-2 tiny example runs end to end on random inputs: the
// loss is finite and, at initialization (weights ~ normal(0, 0.02)), close
// to ln(256) = 5.545 for a uniform prediction over the 256-token vocabulary.
// Saving and reloading its 50 inputs reproduces the loss bit for bit.
//
// RUN: mw-eval %mw_src/examples/gpt2-tiny.mlir --random-inputs 0 --save-inputs %t.in --print > %t.a
// RUN: FileCheck %s --input-file %t.a
// RUN: mw-eval %mw_src/examples/gpt2-tiny.mlir --inputs %t.in --print | diff %t.a -

// CHECK: loss: f32 [] checksum=0x{{[0-9a-f]+}} sum=5.5{{[0-9]+}}e+00 values=[5.5{{[0-9]*}}]{{$}}
