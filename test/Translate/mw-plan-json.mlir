// --mw-plan-json prints the plan --mw-to-plan writes, read back from the
// binary: arena offsets, persistent bindings, attributes of each kind, views
// that reshape an arena buffer and an argument.
// RUN: mw-translate %s -split-input-file --mw-plan-json | FileCheck %s

// Arena (1024 B, alignment 256):  h 2x8xf32 at +0;  c 2x1xf32 at +256;
// g 2x8xf32 at +512;  s f32 at +768;  p 2x2x2xf32 at +256 (reuse c).

// CHECK:      "version": 3,
// CHECK-NEXT: "function": "step",
// CHECK-NEXT: "arena_size": 1024,
// CHECK-NEXT: "arena_alignment": 256,
// CHECK-NEXT: "lower_bound": 768,
// CHECK-NEXT: "persistents": [
// CHECK-NEXT:   {"name":"w","dtype":"f32","shape":[8,4],"role":"param","argument":0},
// CHECK-NEXT:   {"name":"x","dtype":"f32","shape":[2,4],"role":"input","argument":1},
// CHECK-NEXT:   {"name":"arg2","dtype":"i32","shape":[8],"role":"label","argument":2},
// CHECK-NEXT:   {"name":"loss","dtype":"f32","shape":[],"role":"output","argument":-1}
// CHECK-NEXT: {{^ *}}],{{$}}
// CHECK-NEXT: "kernels": [

// CHECK:      "op": "mw.matmul",
// CHECK-NEXT: "loc": "h.0.mlp",
// CHECK-NEXT: "attrs": [
// CHECK-NEXT:   {"name":"transpose_rhs","kind":"bool","value":true}
// CHECK-NEXT: {{^ *}}],{{$}}
// CHECK-NEXT: "ins": [
// CHECK-NEXT:   {"space":"persistent","persistent":1,"name":"x","offset":0,"dtype":"f32","shape":[2,4],"strides":[4,1]},
// CHECK-NEXT:   {"space":"persistent","persistent":0,"name":"w","offset":0,"dtype":"f32","shape":[8,4],"strides":[4,1]}
// CHECK-NEXT: {{^ *}}],{{$}}
// CHECK-NEXT: "outs": [
// CHECK-NEXT:   {"space":"arena","arena_offset":0,"offset":0,"dtype":"f32","shape":[2,8],"strides":[8,1]}
// CHECK-NEXT: {{^ *}}]{{$}}

// A dense constant is its raw little-endian elements: 1.0, -2.0.
// CHECK:      "op": "mw.constant",
// CHECK:        {"name":"value","kind":"string","bytes":"0000803f000000c0"}
// CHECK:        {"space":"arena","arena_offset":256,"offset":0,"dtype":"f32","shape":[2,1],"strides":[1,1]}

// CHECK:      "op": "mw.add",
// CHECK-NEXT: "loc": "{{.+}}:{{[0-9]+}}:{{[0-9]+}}",
// CHECK-NEXT: "attrs": [],

// The enum is its keyword; the op writes its input in place.
// CHECK:      "op": "mw.gelu",
// CHECK:        {"name":"approximate","kind":"string","value":"tanh"}
// CHECK:      "ins": [
// CHECK-NEXT:   {"space":"arena","arena_offset":512,
// CHECK:      "outs": [
// CHECK-NEXT:   {"space":"arena","arena_offset":512,

// A splat's float; a rank-0 operand has no shape or strides.
// CHECK:      "op": "mw.splat",
// CHECK:        {"name":"value","kind":"float","value":0.5}
// CHECK:        {"space":"arena","arena_offset":768,"offset":0,"dtype":"f32","shape":[],"strides":[]}
// CHECK:      "op": "mw.mul",

// A collapsed view of arena buffer g, an integer list.
// CHECK:      "op": "mw.reduce_sum",
// CHECK:        {"name":"axes","kind":"ints","value":[0]}
// CHECK:      "ins": [
// CHECK-NEXT:   {"space":"arena","arena_offset":512,"offset":0,"dtype":"f32","shape":[16],"strides":[1]}
// CHECK:      "outs": [
// CHECK-NEXT:   {"space":"persistent","persistent":3,"name":"loss","offset":0,"dtype":"f32","shape":[],"strides":[]}

// An expanded view of argument x, an integer.
// CHECK:      "op": "mw.softmax",
// CHECK:        {"name":"axis","kind":"int","value":2}
// CHECK:      "ins": [
// CHECK-NEXT:   {"space":"persistent","persistent":1,"name":"x","offset":0,"dtype":"f32","shape":[2,2,2],"strides":[4,2,1]}
// CHECK:      "outs": [
// CHECK-NEXT:   {"space":"arena","arena_offset":256,"offset":0,"dtype":"f32","shape":[2,2,2],"strides":[4,2,1]}

// A strided view: the second column of w.
// CHECK:      "op": "mw.neg",
// CHECK:      "ins": [
// CHECK-NEXT:   {"space":"persistent","persistent":0,"name":"w","offset":1,"dtype":"f32","shape":[8],"strides":[4]}

// The returned argument is its persistent buffer; an unnamed result is
// resultN.
// CHECK:      "results": [
// CHECK-NEXT:   {"name":"loss","role":"output","value":{"space":"persistent","persistent":3,"name":"loss","offset":0,"dtype":"f32","shape":[],"strides":[]}},
// CHECK-NEXT:   {"name":"result1","role":"param","value":{"space":"persistent","persistent":0,"name":"w","offset":0,"dtype":"f32","shape":[8,4],"strides":[4,1]}}
// CHECK-NEXT: {{^ *}}],{{$}}
// The arena's buffers, one per memref.view of the arena, by index: the
// runtime checks that no two live at once share a byte.
// CHECK-NEXT: "arena_buffers": [
// CHECK-NEXT:   {"offset":{{[0-9]+}},"size":{{[0-9]+}}}

func.func @step(%w: memref<8x4xf32> {mw.name = "w", mw.role = #mw.role<param>},
                %x: memref<2x4xf32> {mw.name = "x", mw.role = #mw.role<input>},
                %t: memref<8xi32> {mw.role = #mw.role<label>})
    -> (memref<f32> {mw.name = "loss", mw.role = #mw.role<output>},
        memref<8x4xf32> {mw.role = #mw.role<param>})
    attributes {mw.arena_size = 1024 : i64, mw.arena_alignment = 256 : i64,
                mw.lower_bound = 768 : i64} {
  %arena = memref.alloc() {alignment = 256 : i64, mw.arena} : memref<1024xi8>
  %c0 = arith.constant 0 : index
  %c256 = arith.constant 256 : index
  %c512 = arith.constant 512 : index
  %c768 = arith.constant 768 : index
  %h = memref.view %arena[%c0][] : memref<1024xi8> to memref<2x8xf32>
  mw.kernel ins(%x, %w : memref<2x4xf32>, memref<8x4xf32>) outs(%h : memref<2x8xf32>) {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<8x4xf32>):
    %0 = mw.matmul %a, %b {transpose_rhs} : (tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
    mw.yield %0 : tensor<2x8xf32>
  } loc("h.0.mlp")
  %c = memref.view %arena[%c256][] : memref<1024xi8> to memref<2x1xf32>
  mw.kernel outs(%c : memref<2x1xf32>) {
    %0 = mw.constant dense<[[1.0], [-2.0]]> : tensor<2x1xf32>
    mw.yield %0 : tensor<2x1xf32>
  }
  %g = memref.view %arena[%c512][] : memref<1024xi8> to memref<2x8xf32>
  mw.kernel ins(%h, %c : memref<2x8xf32>, memref<2x1xf32>) outs(%g : memref<2x8xf32>) {
  ^bb0(%a: tensor<2x8xf32>, %b: tensor<2x1xf32>):
    %0 = mw.add %a, %b : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
    mw.yield %0 : tensor<2x8xf32>
  }
  mw.kernel ins(%g : memref<2x8xf32>) outs(%g : memref<2x8xf32>) {
  ^bb0(%a: tensor<2x8xf32>):
    %0 = mw.gelu %a {approximate = #mw.gelu_approximation<tanh>} : tensor<2x8xf32>
    mw.yield %0 : tensor<2x8xf32>
  }
  %s = memref.view %arena[%c768][] : memref<1024xi8> to memref<f32>
  mw.kernel outs(%s : memref<f32>) {
    %0 = mw.splat 0.5 : tensor<f32>
    mw.yield %0 : tensor<f32>
  }
  mw.kernel ins(%g, %s : memref<2x8xf32>, memref<f32>) outs(%g : memref<2x8xf32>) {
  ^bb0(%a: tensor<2x8xf32>, %b: tensor<f32>):
    %0 = mw.mul %a, %b : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
    mw.yield %0 : tensor<2x8xf32>
  }
  %flat = memref.collapse_shape %g [[0, 1]] : memref<2x8xf32> into memref<16xf32>
  %loss = memref.alloc() {alignment = 64 : i64} : memref<f32>
  mw.kernel ins(%flat : memref<16xf32>) outs(%loss : memref<f32>) {
  ^bb0(%a: tensor<16xf32>):
    %0 = mw.reduce_sum %a axes = [0] : tensor<16xf32> -> tensor<f32>
    mw.yield %0 : tensor<f32>
  }
  %x3 = memref.expand_shape %x [[0], [1, 2]] output_shape [2, 2, 2] : memref<2x4xf32> into memref<2x2x2xf32>
  %p = memref.view %arena[%c256][] : memref<1024xi8> to memref<2x2x2xf32>
  mw.kernel ins(%x3 : memref<2x2x2xf32>) outs(%p : memref<2x2x2xf32>) {
  ^bb0(%a: tensor<2x2x2xf32>):
    %0 = mw.softmax %a axis = 2 : tensor<2x2x2xf32>
    mw.yield %0 : tensor<2x2x2xf32>
  }
  %col = memref.subview %w[0, 1] [8, 1] [1, 1] : memref<8x4xf32> to memref<8xf32, strided<[4], offset: 1>>
  %n = memref.view %arena[%c0][] : memref<1024xi8> to memref<8xf32>
  mw.kernel ins(%col : memref<8xf32, strided<[4], offset: 1>>) outs(%n : memref<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %0 = mw.neg %a : tensor<8xf32>
    mw.yield %0 : tensor<8xf32>
  }
  memref.dealloc %arena : memref<1024xi8>
  return %loss, %w : memref<f32>, memref<8x4xf32>
}

// -----

// Constants of each element size are their raw little-endian elements:
// bf16 1.5 and -0.25 (0x3fc0, 0xbe80); a splat i64 -7 (one element, which
// the runtime broadcasts); f32 1.0 and -2.0 from a dense_resource blob (after
// the blob's 4-byte alignment header).

// CHECK:      "function": "constants",
// CHECK:        {"name":"value","kind":"string","bytes":"c03f80be"}
// CHECK:        {"space":"arena","arena_offset":0,"offset":0,"dtype":"bf16","shape":[2],"strides":[1]}
// CHECK:        {"name":"value","kind":"string","bytes":"f9ffffffffffffff"}
// CHECK:        {"space":"arena","arena_offset":64,"offset":0,"dtype":"i64","shape":[3],"strides":[1]}
// CHECK:        {"name":"value","kind":"string","bytes":"0000803f000000c0"}
// CHECK:        {"space":"arena","arena_offset":128,"offset":0,"dtype":"f32","shape":[2],"strides":[1]}

func.func @constants() attributes {mw.arena_size = 256 : i64,
    mw.arena_alignment = 64 : i64, mw.lower_bound = 192 : i64} {
  %arena = memref.alloc() {alignment = 64 : i64, mw.arena} : memref<256xi8>
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %b = memref.view %arena[%c0][] : memref<256xi8> to memref<2xbf16>
  mw.kernel outs(%b : memref<2xbf16>) {
    %0 = mw.constant dense<[1.5, -0.25]> : tensor<2xbf16>
    mw.yield %0 : tensor<2xbf16>
  }
  %i = memref.view %arena[%c64][] : memref<256xi8> to memref<3xi64>
  mw.kernel outs(%i : memref<3xi64>) {
    %0 = mw.constant dense<-7> : tensor<3xi64>
    mw.yield %0 : tensor<3xi64>
  }
  %r = memref.view %arena[%c128][] : memref<256xi8> to memref<2xf32>
  mw.kernel outs(%r : memref<2xf32>) {
    %0 = mw.constant dense_resource<blob> : tensor<2xf32>
    mw.yield %0 : tensor<2xf32>
  }
  memref.dealloc %arena : memref<256xi8>
  return
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F000000C0"
    }
  }
#-}
