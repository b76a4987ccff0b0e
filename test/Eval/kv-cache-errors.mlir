// Bad run-time input to the paged KV cache ops is one error at the op, never
// an access outside the cache: a slot outside the cache, a context longer
// than its block table, a block table entry outside the cache.
//
// RUN: not mw-eval %s --entry bad_slot 2>&1 | FileCheck %s --check-prefix=SLOT
// RUN: not mw-eval %s --entry long_context 2>&1 | FileCheck %s --check-prefix=LEN
// RUN: not mw-eval %s --entry bad_block 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: not mw-eval %s --entry negative_block 2>&1 | FileCheck %s --check-prefix=NEG

// SLOT: kv-cache-errors.mlir:[[@LINE+5]]:8: error: slot_mapping[1] = 8 is outside the cache's 8 slots (4 blocks of 2; -1 skips a token)
func.func @bad_slot() -> tensor<4x2x1x2xf32> {
  %c = mw.splat 0.0 : tensor<4x2x1x2xf32>
  %v = mw.splat 1.0 : tensor<2x1x2xf32>
  %s = mw.constant dense<[0, 8]> : tensor<2xi32>
  %r = mw.kv_cache_write %c, %v, %s : (tensor<4x2x1x2xf32>, tensor<2x1x2xf32>, tensor<2xi32>) -> tensor<4x2x1x2xf32>
  return %r : tensor<4x2x1x2xf32>
}

// LEN: kv-cache-errors.mlir:[[@LINE+6]]:8: error: context_lens[1] = 5 is outside [0, 4] (2 blocks of 2 per sequence)
func.func @long_context() -> tensor<2x1x1x2xf32> {
  %c = mw.splat 0.0 : tensor<4x2x1x2xf32>
  %q = mw.splat 1.0 : tensor<2x1x1x2xf32>
  %t = mw.constant dense<[[0, 1], [2, 3]]> : tensor<2x2xi32>
  %l = mw.constant dense<[4, 5]> : tensor<2xi32>
  %o = mw.paged_attention %q, %c, %c, %t, %l : (tensor<2x1x1x2xf32>, tensor<4x2x1x2xf32>, tensor<4x2x1x2xf32>, tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x1x1x2xf32>
  return %o : tensor<2x1x1x2xf32>
}

// BLOCK: kv-cache-errors.mlir:[[@LINE+6]]:8: error: block_tables[0, 1] = 4 is outside the cache's 4 blocks (sequence 0 holds 3 tokens)
func.func @bad_block() -> tensor<2x1x1x2xf32> {
  %c = mw.splat 0.0 : tensor<4x2x1x2xf32>
  %q = mw.splat 1.0 : tensor<2x1x1x2xf32>
  %t = mw.constant dense<[[0, 4], [2, 3]]> : tensor<2x2xi32>
  %l = mw.constant dense<[3, 1]> : tensor<2xi32>
  %o = mw.paged_attention %q, %c, %c, %t, %l : (tensor<2x1x1x2xf32>, tensor<4x2x1x2xf32>, tensor<4x2x1x2xf32>, tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x1x1x2xf32>
  return %o : tensor<2x1x1x2xf32>
}

// NEG: kv-cache-errors.mlir:[[@LINE+6]]:8: error: block_tables[1, 0] = -1 is outside the cache's 4 blocks (sequence 1 holds 1 tokens)
func.func @negative_block() -> tensor<2x1x1x2xf32> {
  %c = mw.splat 0.0 : tensor<4x2x1x2xf32>
  %q = mw.splat 1.0 : tensor<2x1x1x2xf32>
  %t = mw.constant dense<[[0, -1], [-1, -1]]> : tensor<2x2xi32>
  %l = mw.constant dense<[2, 1]> : tensor<2xi32>
  %o = mw.paged_attention %q, %c, %c, %t, %l : (tensor<2x1x1x2xf32>, tensor<4x2x1x2xf32>, tensor<4x2x1x2xf32>, tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x1x1x2xf32>
  return %o : tensor<2x1x1x2xf32>
}
