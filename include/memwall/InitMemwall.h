//===- InitMemwall.h - Registration for Memwall's tools ---------*- C++ -*-===//
//
// What mw-opt registers: the mw dialect, the upstream dialects the pipeline
// uses, Memwall's passes and the upstream passes it composes with. Listed
// explicitly instead of through mlir/InitAll*.h, which costs about a minute
// of compile time per including file.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_INITMEMWALL_H
#define MEMWALL_INITMEMWALL_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::mw {
/// Adds mw and the upstream dialects Memwall's pipeline uses to `registry`.
void registerMemwallDialects(DialectRegistry &registry);
/// Registers Memwall's passes and the upstream passes its pipelines use.
void registerMemwallPasses();
} // namespace mlir::mw

#endif // MEMWALL_INITMEMWALL_H
