// A region of async.execute may run after its op, so a buffer it uses is not
// planned (stock mlir-opt: mw-opt does not register the async dialect).
// RUN: %mlir_opt --load-pass-plugin=%mw_plugin -verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(mw-static-arena{remarks=true},func.func(mw-verify-plan))" %s \
// RUN: | FileCheck %s

// CHECK-LABEL: func.func @async_use(
// CHECK-SAME:      mw.arena_size = 256 : i64
// CHECK:         memref.view %{{.*}}[%{{.*}}][] {mw.buffer = "sync"}
// CHECK:         memref.alloc() {mw.buffer = "async"} : memref<4xf32>
func.func @async_use(%out: memref<4xf32>) {
  %sync = memref.alloc() {mw.buffer = "sync"} : memref<4xf32>
  memref.copy %sync, %out : memref<4xf32> to memref<4xf32>
  // expected-remark@+1 {{buffer used inside 'async.execute' is not planned: 'async'}}
  %async = memref.alloc() {mw.buffer = "async"} : memref<4xf32>
  %token = async.execute {
    memref.copy %async, %out : memref<4xf32> to memref<4xf32>
    async.yield
  }
  async.await %token : !async.token
  return
}
