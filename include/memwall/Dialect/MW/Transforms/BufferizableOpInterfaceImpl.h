//===- BufferizableOpInterfaceImpl.h - Bufferizing mw ops -------*- C++ -*-===//
//
// External models of BufferizableOpInterface for the mw dialect, so that
// upstream One-Shot Bufferize turns mw programs on tensors into mw.kernel ops
// on memrefs (DESIGN.md decision 4).
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define MEMWALL_DIALECT_MW_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

// buildBufferizePipeline moved to Pipelines.h; included for the passes that
// run it and include only this header.
#include "memwall/Dialect/MW/Transforms/Pipelines.h"

namespace mlir {
class DialectRegistry;

namespace mw {
/// Attaches the models when the mw dialect loads:
/// - mw.kernel: destination-passing style; result `i` is tied to `outs`
///   operand `i`, which is written and never read, so a destination the
///   analysis puts out of place becomes a fresh buffer, never a copy; a
///   destination may share an input's buffer when the body is elementwise;
/// - mw.reshape: a view (memref.collapse_shape / expand_shape) of its input;
/// - every other mw op bufferizes inside its kernel; outside one, it is an
///   error that says to form kernels first (--mw-form-kernels). Kernel bodies
///   stay on tensors: One-Shot Bufferize must skip them (an op filter, which
///   --mw-bufferize sets).
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);
} // namespace mw
} // namespace mlir

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
