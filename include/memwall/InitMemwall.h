//===- InitMemwall.h - Registration for Memwall's tools ---------*- C++ -*-===//
//
// What mw-opt registers: the mw dialect, the upstream dialects the pipeline
// uses, Memwall's passes and the upstream passes it composes with. Listed
// explicitly instead of through mlir/InitAll*.h, which costs about a minute
// of compile time per including file. Also the command-line defaults Memwall's
// tools share: short diagnostics and a --help of the tool's own options.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_INITMEMWALL_H
#define MEMWALL_INITMEMWALL_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"

namespace llvm::cl {
class OptionCategory;
} // namespace llvm::cl

namespace mlir::mw {
/// Adds mw and the upstream dialects Memwall's pipeline uses to `registry`.
void registerMemwallDialects(DialectRegistry &registry);
/// Registers Memwall's passes and the upstream passes its pipelines use.
void registerMemwallPasses();

/// Registers MLIRContext's command-line options with Memwall's default of
/// `--mlir-print-op-on-diagnostic=false`: a diagnostic shows its location and
/// message, not the op it is attached to (a whole module, for an error at the
/// module). `--mlir-print-op-on-diagnostic=true` still attaches the op. Call
/// before the driver parses the command line.
void registerMemwallContextCLOptions();

/// The value of `--mlir-print-op-on-diagnostic` (registered by
/// registerMemwallContextCLOptions), for drivers whose context ignores it.
bool shouldPrintOpOnDiagnostic();

/// Makes a tool's --help list its own options (those of `categories`) and
/// the options its driver registers afterwards (MlirOptMain's,
/// mlirTranslateMain's): LLVM's options (code generation flags of every
/// target, from libLLVM's static initializers) leave --help and
/// --help-hidden, MLIR's general options (`--mlir-print-*`, `--mlir-timing`,
/// ...) move to --help-hidden, except `--mlir-print-op-on-diagnostic`, which
/// stays in --help. Every option still parses. Call after registering the
/// tool's options and before the driver.
void hideUnrelatedToolOptions(
    ArrayRef<const llvm::cl::OptionCategory *> categories);
} // namespace mlir::mw

#endif // MEMWALL_INITMEMWALL_H
