//===- RuntimeOps.td - The ops the runtime runs -----------*- tablegen -*-===//
//
// The input of mw-tblgen -gen-mwrt-op-table: the mw dialect's ops and the
// upstream mesh collectives that --mw-zero emits, so that the runtime's op
// table takes the facts of both from their ODS records (docs/architecture.md,
// "One fact, one place").
//
//===----------------------------------------------------------------------===//

include "memwall/Dialect/MW/IR/MWOps.td"
include "mlir/Dialect/Mesh/IR/MeshOps.td"
