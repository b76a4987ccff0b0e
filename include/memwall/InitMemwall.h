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

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/LLVM.h"

#include "llvm/Support/SourceMgr.h"

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

namespace detail {
/// Owns the source manager LongLineDiagnosticHandler's base reads:
/// constructed before it.
struct OwnSourceMgr {
  llvm::SourceMgr ownMgr;
};
} // namespace detail

/// A diagnostic handler for Memwall's tools: a diagnostic (or note) whose
/// location points into a source line longer than `maxColumns` is printed
/// with its file, line and column but without that line, which for a large
/// model's function signature is megabytes; every other diagnostic goes on
/// to the handlers registered before it (the source manager's, or the
/// verifier's with --verify-diagnostics). Register it after them: handlers
/// run newest first. It loads the files the locations name into its own
/// source manager, as the upstream handler does for files it was not given.
/// An empty error at an unknown location, which MLIR 19 adds after LLVM's
/// option parser has printed why a pass option is invalid, is dropped.
class LongLineDiagnosticHandler : private detail::OwnSourceMgr,
                                  public SourceMgrDiagnosticHandler {
public:
  LongLineDiagnosticHandler(MLIRContext *context, unsigned maxColumns = 400);

private:
  /// Whether `loc` names a line of a readable file longer than maxColumns.
  bool onLongLine(Location loc);
  unsigned maxColumns;
};

/// Installs a LongLineDiagnosticHandler in every context that loads the
/// func dialect from `registry` (for MlirOptMain, whose context and source
/// manager's handler are its own: the func dialect loads while it parses,
/// after that handler). The handler lives as long as the process.
void registerLongLineDiagnostics(DialectRegistry &registry);

/// Refuses MLIR text nested deeper than MLIR's recursive parser survives
/// (memwall/Support/Nesting.h): prints `FILE:LINE:COL: error: ...` for the
/// bracket that goes too deep to `os` and fails. MLIR bytecode is walked
/// instead (memwall/Support/BytecodeNesting.h) and refused with
/// `FILE: error: MLIR bytecode, byte N: ...` where MLIR 19's reader, the
/// verifier or the printer would crash or accept it unverified. Every
/// Memwall tool, and test/fuzz/ir_fuzzer, calls it on its input before
/// parsing; a stock mlir-opt-19 loading the plugin does not, and crashes on
/// such input (an upstream limit).
LogicalResult checkInputNesting(const llvm::MemoryBuffer &buffer,
                                llvm::raw_ostream &os);

/// Runs `produce` on a temporary file beside `outputFilename` and renames it
/// over `outputFilename` when `produce` succeeds (`-` is stdout, /dev/null
/// discards), so a failed run leaves an existing file as it was; upstream's
/// drivers truncate the output when they start and delete it on failure.
/// Returns the tool's exit status: 0, or 1 after a failed `produce` (which
/// has reported why) or a write error (reported here, after `tool`).
int writeOutputOnSuccess(StringRef tool, StringRef outputFilename,
                         function_ref<LogicalResult(raw_ostream &)> produce);

/// After a failed run: where nothing reached llvm::errs() since
/// `errsBefore` (its tell() before the run), says on one line that the run
/// failed without a diagnostic, as MLIR 19's bytecode reader does on some
/// malformed files (a FloatAttr whose type is not a float), so that no
/// tool fails silently. writeOutputOnSuccess calls it.
void reportUnexplainedFailure(StringRef tool, uint64_t errsBefore);

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
