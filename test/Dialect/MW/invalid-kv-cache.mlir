// Every diagnostic of the paged KV cache ops' verifiers (mw.kv_cache_write,
// mw.paged_attention in MWOps.cpp) and of their ODS element-type constraints:
// one case per split.
// RUN: mw-opt %s -split-input-file -verify-diagnostics

func.func @write_cache_rank(%c: tensor<8x4x32xf32>, %v: tensor<3x2x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op cache must have rank 4 ([NB, BS, H, D]), got 3}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x32xf32>, tensor<3x2x16xf32>, tensor<3xi32>) -> tensor<8x4x32xf32>
  return
}

// -----

func.func @write_values_rank(%c: tensor<8x4x2x16xf32>, %v: tensor<3x32xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op values must have rank 3 ([N, H, D]), got 2}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xf32>, tensor<3x32xf32>, tensor<3xi32>) -> tensor<8x4x2x16xf32>
  return
}

// -----

func.func @write_slots_rank(%c: tensor<8x4x2x16xf32>, %v: tensor<3x2x16xf32>, %s: tensor<3x1xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op slot_mapping must have rank 1 ([N]), got 2}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xf32>, tensor<3x2x16xf32>, tensor<3x1xi32>) -> tensor<8x4x2x16xf32>
  return
}

// -----

func.func @write_heads(%c: tensor<8x4x2x16xf32>, %v: tensor<3x4x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op values shape [3, 4, 16] does not match the cache shape [8, 4, 2, 16] in heads or head dimension}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xf32>, tensor<3x4x16xf32>, tensor<3xi32>) -> tensor<8x4x2x16xf32>
  return
}

// -----

func.func @write_slot_count(%c: tensor<8x4x2x16xf32>, %v: tensor<3x2x16xf32>, %s: tensor<4xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op slot_mapping has 4 entries, expected one per token of values (3)}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xf32>, tensor<3x2x16xf32>, tensor<4xi32>) -> tensor<8x4x2x16xf32>
  return
}

// -----

func.func @write_i64_slots(%c: tensor<8x4x2x16xf32>, %v: tensor<3x2x16xf32>, %s: tensor<3xi64>) {
  // expected-error@+1 {{'mw.kv_cache_write' op operand #2 must be ranked tensor of 32-bit signless integer values, but got 'tensor<3xi64>'}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xf32>, tensor<3x2x16xf32>, tensor<3xi64>) -> tensor<8x4x2x16xf32>
  return
}

// -----

func.func @write_result_type(%c: tensor<8x4x2x16xf32>, %v: tensor<3x2x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op failed to verify that all of {cache, result} have same type}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xf32>, tensor<3x2x16xf32>, tensor<3xi32>) -> tensor<8x4x2x16xbf16>
  return
}

// -----

func.func @write_i8_without_scale(%c: tensor<8x4x2x16xi8>, %v: tensor<3x2x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op a 'i8' cache needs 'scale': one f32 scale per key/value head or one for all}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xi8>, tensor<3x2x16xf32>, tensor<3xi32>) -> tensor<8x4x2x16xi8>
  return
}

// -----

func.func @write_float_with_scale(%c: tensor<8x4x2x16xbf16>, %v: tensor<3x2x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op 'scale' is only for i8 and f8E4M3FN caches, not 'bf16'}}
  %r = mw.kv_cache_write %c, %v, %s {scale = array<f32: 1.0>} : (tensor<8x4x2x16xbf16>, tensor<3x2x16xf32>, tensor<3xi32>) -> tensor<8x4x2x16xbf16>
  return
}

// -----

func.func @write_scale_count(%c: tensor<8x4x2x16xf8E4M3FN>, %v: tensor<3x2x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op 'scale' has 3 values, expected 1 or 2 (one per key/value head)}}
  %r = mw.kv_cache_write %c, %v, %s {scale = array<f32: 1.0, 1.0, 1.0>} : (tensor<8x4x2x16xf8E4M3FN>, tensor<3x2x16xf32>, tensor<3xi32>) -> tensor<8x4x2x16xf8E4M3FN>
  return
}

// -----

func.func @write_scale_positive(%c: tensor<8x4x2x16xi8>, %v: tensor<3x2x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op 'scale' value #1 must be positive and finite, got 0}}
  %r = mw.kv_cache_write %c, %v, %s {scale = array<f32: 1.0, 0.0>} : (tensor<8x4x2x16xi8>, tensor<3x2x16xf32>, tensor<3xi32>) -> tensor<8x4x2x16xi8>
  return
}

// -----

func.func @write_i32_cache(%c: tensor<8x4x2x16xi32>, %v: tensor<3x2x16xf32>, %s: tensor<3xi32>) {
  // expected-error@+1 {{'mw.kv_cache_write' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 8-bit signless integer or f8E4M3FN type values, but got 'tensor<8x4x2x16xi32>'}}
  %r = mw.kv_cache_write %c, %v, %s : (tensor<8x4x2x16xi32>, tensor<3x2x16xf32>, tensor<3xi32>) -> tensor<8x4x2x16xi32>
  return
}

// -----

func.func @i8_elsewhere(%a: tensor<4xi8>) {
  // expected-error@+1 {{'mw.neg' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi8>'}}
  %r = mw.neg %a : tensor<4xi8>
  return
}

// -----

func.func @attn_query_rank(%q: tensor<2x4x16xf32>, %c: tensor<8x4x2x16xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op query must have rank 4 ([B, Hq, T, D]), got 3}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x16xf32>, tensor<8x4x2x16xf32>, tensor<8x4x2x16xf32>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x16xf32>
  return
}

// -----

func.func @attn_cache_rank(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x32xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op key_cache must have rank 4 ([NB, BS, Hkv, D]), got 3}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x32xf32>, tensor<8x4x32xf32>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_tables_rank(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xf32>, %bt: tensor<6xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op block_tables must have rank 2 ([B, MB]), got 1}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf32>, tensor<8x4x2x16xf32>, tensor<6xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_lens_rank(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2x1xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op context_lens must have rank 1 ([B]), got 2}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf32>, tensor<8x4x2x16xf32>, tensor<2x3xi32>, tensor<2x1xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_head_dim(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x8xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op key_cache head dimension 8 differs from the query's 16}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x2x8xf32>, tensor<8x4x2x8xf32>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_gqa(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x3x16xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op query heads (4) must be a multiple of the cache's key/value heads (3)}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x3x16xf32>, tensor<8x4x3x16xf32>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_batch(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xf32>, %bt: tensor<3x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op block_tables [3, 3] and context_lens [2] must have one row per sequence of the query (2)}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf32>, tensor<8x4x2x16xf32>, tensor<3x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_caches_differ(%q: tensor<2x4x1x16xf32>, %k: tensor<8x4x2x16xf32>, %v: tensor<8x4x2x16xbf16>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op failed to verify that all of {key_cache, value_cache} have same type}}
  %o = mw.paged_attention %q, %k, %v, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf32>, tensor<8x4x2x16xbf16>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_result(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op failed to verify that all of {query, result} have same type}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf32>, tensor<8x4x2x16xf32>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x2x16xf32>
  return
}

// -----

func.func @attn_scale(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xf32>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op scale must be finite and positive, got -1}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl {scale = -1.0 : f64} : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf32>, tensor<8x4x2x16xf32>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_k_scale_missing(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xf8E4M3FN>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op a 'f8E4M3FN' cache needs 'k_scale': one f32 scale per key/value head or one for all}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf8E4M3FN>, tensor<8x4x2x16xf8E4M3FN>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_v_scale_count(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xi8>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op 'v_scale' has 4 values, expected 1 or 2 (one per key/value head)}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl {k_scale = array<f32: 1.0>, v_scale = array<f32: 1.0, 1.0, 1.0, 1.0>} : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xi8>, tensor<8x4x2x16xi8>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}

// -----

func.func @attn_float_scale(%q: tensor<2x4x1x16xf32>, %c: tensor<8x4x2x16xf16>, %bt: tensor<2x3xi32>, %cl: tensor<2xi32>) {
  // expected-error@+1 {{'mw.paged_attention' op 'k_scale' is only for i8 and f8E4M3FN caches, not 'f16'}}
  %o = mw.paged_attention %q, %c, %c, %bt, %cl {k_scale = array<f32: 1.0>} : (tensor<2x4x1x16xf32>, tensor<8x4x2x16xf16>, tensor<8x4x2x16xf16>, tensor<2x3xi32>, tensor<2xi32>) -> tensor<2x4x1x16xf32>
  return
}
