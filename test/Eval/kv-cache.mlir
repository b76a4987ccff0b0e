// mw.kv_cache_write and mw.paged_attention against hand-computed values.
// Two sequences in a cache of 4 blocks of 2 slots, one key/value head shared
// by two query heads (grouped-query), blocks not in order: sequence 0 holds
// tokens 0-2 in blocks [3, 1] (slots 6, 7, 2), sequence 1 token 0 in block 0
// (slot 0; its second table entry, -1, is never read); a fifth token is
// padding (slot -1). Keys are [0, 0] except token 2 of sequence 0, [100, 0],
// so with scale 1 a query [1, 0] puts all its weight (up to e^-100) on the
// key it may see with the largest score and a query [-1, 0] splits it evenly
// between the others: every output is exact.
//
// RUN: mw-eval %s --entry decode --print | FileCheck %s --check-prefix=DECODE
// RUN: mw-eval %s --entry prefill --print | FileCheck %s --check-prefix=PREFILL
// The quantized caches are arguments with role kv_cache, which
// --random-inputs makes zero (an empty cache).
// RUN: mw-eval %s --entry decode_i8 --random-inputs 7 --print | FileCheck %s --check-prefix=I8
// RUN: mw-eval %s --entry decode_f8 --random-inputs 7 --print | FileCheck %s --check-prefix=F8

// Sequence 0, head 0 sees [100, 0] at position 2: v = [5, 6]; head 1 the two
// zero keys: (v0 + v1) / 2 = [2, 3]. Sequence 1 has one token: [7, 8].
// DECODE: out: f32 [2, 2, 1, 2] checksum={{.*}} values=[5, 6, 2, 3, 7, 8, ...]{{$}}
// Slot 0 (block 0) holds sequence 1's value, slot 2 (block 1) token 2's;
// slots 1 and 3 are never written.
// DECODE: v_cache: f32 [4, 2, 1, 2] checksum={{.*}} values=[7, 8, 0, 0, 5, 6, ...]{{$}}

// T = 2, causal: sequence 0's query 0 is position 1 (sees tokens 0-1:
// [2, 3] for both heads), query 1 position 2; sequence 1's query 0 is
// position -1 (padding: zeros), query 1 position 0.
// PREFILL: out: f32 [2, 1, 2, 2] checksum={{.*}} values=[2, 3, 5, 6, 0, 0, ...]{{$}}
// PREFILL: tail: f32 [2] checksum={{.*}} values=[7, 8]{{$}}

// int8 with one scale 0.5: codes 2x the values (100 / 0.5 clamps to 127,
// still far above 0), dequantized back exactly.
// I8: out: f32 [2, 2, 1, 2] checksum={{.*}} values=[5, 6, 2, 3, 7, 8, ...]{{$}}
// I8: v_cache: i8 [4, 2, 1, 2] checksum={{.*}} values=[14, 16, 0, 0, 10, 12, ...]{{$}}
// I8: k_cache: i8 [4, 2, 1, 2] checksum={{.*}} values=[0, 0, 0, 0, 127, 0, ...]{{$}}

// f8E4M3FN with scale 1: 1..8 are exact, 100 is the tie between 96 and 104
// and rounds to even (96).
// F8: out: f32 [2, 2, 1, 2] checksum={{.*}} values=[5, 6, 2, 3, 7, 8, ...]{{$}}
// F8: k_cache: f8E4M3FN [4, 2, 1, 2] checksum={{.*}} values=[0, 0, 0, 0, 96, 0, ...]{{$}}

func.func @decode() -> (tensor<2x2x1x2xf32> {mw.name = "out"},
                        tensor<4x2x1x2xf32> {mw.name = "v_cache"}) {
  %kc0 = mw.splat 0.0 : tensor<4x2x1x2xf32>
  %k = mw.constant dense<[[[0.0, 0.0]], [[0.0, 0.0]], [[100.0, 0.0]], [[0.0, 0.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %v = mw.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]], [[7.0, 8.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %slots = mw.constant dense<[6, 7, 2, 0, -1]> : tensor<5xi32>
  %kc = mw.kv_cache_write %kc0, %k, %slots : (tensor<4x2x1x2xf32>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xf32>
  %vc = mw.kv_cache_write %kc0, %v, %slots : (tensor<4x2x1x2xf32>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xf32>
  %q = mw.constant dense<[[[[1.0, 0.0]], [[-1.0, 0.0]]], [[[1.0, 0.0]], [[5.0, 5.0]]]]> : tensor<2x2x1x2xf32>
  %tables = mw.constant dense<[[3, 1], [0, -1]]> : tensor<2x2xi32>
  %lens = mw.constant dense<[3, 1]> : tensor<2xi32>
  %o = mw.paged_attention %q, %kc, %vc, %tables, %lens {scale = 1.0 : f64}
      : (tensor<2x2x1x2xf32>, tensor<4x2x1x2xf32>, tensor<4x2x1x2xf32>, tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2x1x2xf32>
  return %o, %vc : tensor<2x2x1x2xf32>, tensor<4x2x1x2xf32>
}

func.func @prefill() -> (tensor<2x1x2x2xf32> {mw.name = "out"},
                         tensor<2xf32> {mw.name = "tail"}) {
  %kc0 = mw.splat 0.0 : tensor<4x2x1x2xf32>
  %k = mw.constant dense<[[[0.0, 0.0]], [[0.0, 0.0]], [[100.0, 0.0]], [[0.0, 0.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %v = mw.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]], [[7.0, 8.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %slots = mw.constant dense<[6, 7, 2, 0, -1]> : tensor<5xi32>
  %kc = mw.kv_cache_write %kc0, %k, %slots : (tensor<4x2x1x2xf32>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xf32>
  %vc = mw.kv_cache_write %kc0, %v, %slots : (tensor<4x2x1x2xf32>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xf32>
  %q = mw.constant dense<[[[[1.0, 0.0], [1.0, 0.0]]], [[[1.0, 0.0], [1.0, 0.0]]]]> : tensor<2x1x2x2xf32>
  %tables = mw.constant dense<[[3, 1], [0, -1]]> : tensor<2x2xi32>
  %lens = mw.constant dense<[3, 1]> : tensor<2xi32>
  %o = mw.paged_attention %q, %kc, %vc, %tables, %lens {scale = 1.0 : f64}
      : (tensor<2x1x2x2xf32>, tensor<4x2x1x2xf32>, tensor<4x2x1x2xf32>, tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x1x2x2xf32>
  %tail = mw.slice %o offsets = [1, 0, 1, 0] sizes = [1, 1, 1, 2] : tensor<2x1x2x2xf32> -> tensor<1x1x1x2xf32>
  %t = mw.reshape %tail : tensor<1x1x1x2xf32> -> tensor<2xf32>
  return %o, %t : tensor<2x1x2x2xf32>, tensor<2xf32>
}

func.func @decode_i8(%kc0: tensor<4x2x1x2xi8> {mw.role = #mw.role<kv_cache>, mw.name = "cache"}) -> (tensor<2x2x1x2xf32> {mw.name = "out"},
                           tensor<4x2x1x2xi8> {mw.name = "v_cache"},
                           tensor<4x2x1x2xi8> {mw.name = "k_cache"}) {
  %k = mw.constant dense<[[[0.0, 0.0]], [[0.0, 0.0]], [[100.0, 0.0]], [[0.0, 0.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %v = mw.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]], [[7.0, 8.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %slots = mw.constant dense<[6, 7, 2, 0, -1]> : tensor<5xi32>
  %kc = mw.kv_cache_write %kc0, %k, %slots {scale = array<f32: 0.5>} : (tensor<4x2x1x2xi8>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xi8>
  %vc = mw.kv_cache_write %kc0, %v, %slots {scale = array<f32: 0.5>} : (tensor<4x2x1x2xi8>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xi8>
  %q = mw.constant dense<[[[[1.0, 0.0]], [[-1.0, 0.0]]], [[[1.0, 0.0]], [[5.0, 5.0]]]]> : tensor<2x2x1x2xf32>
  %tables = mw.constant dense<[[3, 1], [0, -1]]> : tensor<2x2xi32>
  %lens = mw.constant dense<[3, 1]> : tensor<2xi32>
  %o = mw.paged_attention %q, %kc, %vc, %tables, %lens {scale = 1.0 : f64, k_scale = array<f32: 0.5>, v_scale = array<f32: 0.5>}
      : (tensor<2x2x1x2xf32>, tensor<4x2x1x2xi8>, tensor<4x2x1x2xi8>, tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2x1x2xf32>
  return %o, %vc, %kc : tensor<2x2x1x2xf32>, tensor<4x2x1x2xi8>, tensor<4x2x1x2xi8>
}

func.func @decode_f8(%kc0: tensor<4x2x1x2xf8E4M3FN> {mw.role = #mw.role<kv_cache>, mw.name = "cache"}) -> (tensor<2x2x1x2xf32> {mw.name = "out"},
                           tensor<4x2x1x2xf8E4M3FN> {mw.name = "k_cache"}) {
  %k = mw.constant dense<[[[0.0, 0.0]], [[0.0, 0.0]], [[100.0, 0.0]], [[0.0, 0.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %v = mw.constant dense<[[[1.0, 2.0]], [[3.0, 4.0]], [[5.0, 6.0]], [[7.0, 8.0]], [[9.0, 9.0]]]> : tensor<5x1x2xf32>
  %slots = mw.constant dense<[6, 7, 2, 0, -1]> : tensor<5xi32>
  %kc = mw.kv_cache_write %kc0, %k, %slots {scale = array<f32: 1.0>} : (tensor<4x2x1x2xf8E4M3FN>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xf8E4M3FN>
  %vc = mw.kv_cache_write %kc0, %v, %slots {scale = array<f32: 1.0>} : (tensor<4x2x1x2xf8E4M3FN>, tensor<5x1x2xf32>, tensor<5xi32>) -> tensor<4x2x1x2xf8E4M3FN>
  %q = mw.constant dense<[[[[1.0, 0.0]], [[-1.0, 0.0]]], [[[1.0, 0.0]], [[5.0, 5.0]]]]> : tensor<2x2x1x2xf32>
  %tables = mw.constant dense<[[3, 1], [0, -1]]> : tensor<2x2xi32>
  %lens = mw.constant dense<[3, 1]> : tensor<2xi32>
  %o = mw.paged_attention %q, %kc, %vc, %tables, %lens {scale = 1.0 : f64, k_scale = array<f32: 1.0>, v_scale = array<f32: 1.0>}
      : (tensor<2x2x1x2xf32>, tensor<4x2x1x2xf8E4M3FN>, tensor<4x2x1x2xf8E4M3FN>, tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2x1x2xf32>
  return %o, %kc : tensor<2x2x1x2xf32>, tensor<4x2x1x2xf8E4M3FN>
}
