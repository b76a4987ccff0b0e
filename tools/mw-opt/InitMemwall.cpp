//===- InitMemwall.cpp - Registration for Memwall's tools -----------------===//
//
// The dialects and passes mw-opt offers, registered one by one.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"

#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Mesh/IR/MeshDialect.h"
#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/Passes.h"

void mlir::mw::registerMemwallDialects(DialectRegistry &registry) {
  registry.insert<mw::MWDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect, memref::MemRefDialect,
                  bufferization::BufferizationDialect, linalg::LinalgDialect,
                  scf::SCFDialect, mesh::MeshDialect>();
}

void mlir::mw::registerMemwallPasses() {
  mw::registerMWPasses();
  // Generic cleanups users compose with ours: canonicalize, cse, ...
  registerTransformsPasses();
}
