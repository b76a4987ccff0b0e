//===- InitMemwall.cpp - Registration for Memwall's tools -----------------===//
//
// The dialects and passes mw-opt offers, registered one by one, and the
// command-line defaults of Memwall's tools.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"
#include "memwall/Support/BytecodeNesting.h"
#include "memwall/Support/Nesting.h"

#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "memwall/Dialect/MW/Transforms/BufferizableOpInterfaceImpl.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Dialect/MW/Transforms/Pipelines.h"
#include "memwall/Transforms/Passes.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/ControlFlow/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/Mesh/IR/MeshDialect.h"
#include "mlir/Dialect/Mesh/IR/MeshOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/CommandLine.h"

void mlir::mw::registerMemwallDialects(DialectRegistry &registry) {
  registry.insert<mw::MWDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect, memref::MemRefDialect,
                  bufferization::BufferizationDialect, linalg::LinalgDialect,
                  scf::SCFDialect, mesh::MeshDialect, cf::ControlFlowDialect>();
  // What One-Shot Bufferize and the deallocation passes need to bufferize a
  // linalg program on tensors before --mw-static-arena.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  cf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  mw::registerBufferizableOpInterfaceExternalModels(registry);
}

void mlir::mw::registerMemwallPasses() {
  mw::registerMWPasses();
  mw::registerMWPipelines();
  mw::registerMemwallTransformsPasses();
  // One-shot-bufferize, buffer-deallocation-pipeline and the other
  // bufferization passes, to bufferize a program in mw-opt.
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  // Generic cleanups users compose with ours: canonicalize, cse, ...
  registerTransformsPasses();
}

/// MLIRContext's `--mlir-print-op-on-diagnostic`, registered.
static llvm::cl::opt<bool> &getPrintOpOnDiagnosticOption() {
  mlir::registerMLIRContextCLOptions();
  // MLIRContext declares it as a cl::opt<bool>; it is reachable only by name.
  llvm::cl::Option *option =
      llvm::cl::getRegisteredOptions().lookup("mlir-print-op-on-diagnostic");
  assert(option && "MLIRContext no longer registers the option");
  return *static_cast<llvm::cl::opt<bool> *>(option);
}

void mlir::mw::registerMemwallContextCLOptions() {
  getPrintOpOnDiagnosticOption().setInitialValue(false);
}

mlir::mw::LongLineDiagnosticHandler::LongLineDiagnosticHandler(
    MLIRContext *ctx, unsigned maxColumns)
    : SourceMgrDiagnosticHandler(ownMgr, ctx, llvm::errs()),
      maxColumns(maxColumns) {
  setHandler([this](Diagnostic &diag) -> LogicalResult {
    // A pass option that does not parse (`--mw-fuse="report=maybe"`): LLVM's
    // option parser has printed why, and MLIR 19 then reports an empty error
    // at an unknown location, which says nothing; the run still fails.
    if (diag.getSeverity() == DiagnosticSeverity::Error &&
        isa<UnknownLoc>(diag.getLocation()) && diag.str().empty() &&
        diag.getNotes().empty())
      return success();
    if (!onLongLine(diag.getLocation()))
      return failure();
    emitDiagnostic(diag.getLocation(), diag.str(), diag.getSeverity(),
                   /*displaySourceLine=*/false);
    for (Diagnostic &note : diag.getNotes())
      emitDiagnostic(note.getLocation(), note.str(), note.getSeverity(),
                     /*displaySourceLine=*/!onLongLine(note.getLocation()));
    return success();
  });
}

bool mlir::mw::LongLineDiagnosticHandler::onLongLine(Location loc) {
  auto fileLoc = loc->findInstanceOf<FileLineColLoc>();
  if (!fileLoc || fileLoc.getLine() == 0)
    return false;
  const llvm::MemoryBuffer *buffer =
      getBufferForFile(fileLoc.getFilename().getValue());
  if (!buffer)
    return false;
  unsigned id = 0;
  for (unsigned i = 1, e = ownMgr.getNumBuffers(); i <= e && !id; ++i)
    if (ownMgr.getMemoryBuffer(i) == buffer)
      id = i;
  if (!id)
    return false;
  llvm::SMLoc start = ownMgr.FindLocForLineAndColumn(id, fileLoc.getLine(), 1);
  if (!start.isValid())
    return false;
  StringRef rest(start.getPointer(),
                 buffer->getBufferEnd() - start.getPointer());
  return rest.substr(0, rest.find_first_of("\r\n")).size() > maxColumns;
}

void mlir::mw::registerLongLineDiagnostics(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    // Never destroyed: erasing the handler needs the context, which the
    // driver destroys without telling its dialects' extensions.
    (void)new LongLineDiagnosticHandler(context);
  });
}

bool mlir::mw::shouldPrintOpOnDiagnostic() {
  return getPrintOpOnDiagnosticOption();
}

void mlir::mw::hideUnrelatedToolOptions(
    ArrayRef<const llvm::cl::OptionCategory *> categories) {
  // MLIR's general options that both drivers register (again: registration
  // is idempotent). The ones a driver adds later stay in --help.
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerDefaultTimingManagerCLOptions();
  llvm::cl::Option *printOp = &getPrintOpOnDiagnosticOption();
  for (auto &entry : llvm::cl::getRegisteredOptions()) {
    llvm::cl::Option *option = entry.second;
    bool kept =
        option == printOp ||
        llvm::any_of(option->Categories, [&](llvm::cl::OptionCategory *c) {
          // "Generic Options": --help, --version and the like.
          return llvm::is_contained(categories, c) ||
                 c->getName() == "Generic Options";
        });
    if (kept)
      continue;
    // Everything else registered by now is MLIR's general options (all named
    // mlir-*) or LLVM's, from its static initializers.
    option->setHiddenFlag(entry.first().starts_with("mlir-")
                              ? llvm::cl::Hidden
                              : llvm::cl::ReallyHidden);
  }
}

mlir::LogicalResult
mlir::mw::checkInputNesting(const llvm::MemoryBuffer &buffer,
                            llvm::raw_ostream &os) {
  // MLIR bytecode has no brackets, but its reader recurses through the
  // attributes and types it refers to, and the verifier and the printer
  // through nested regions (memwall/Support/BytecodeNesting.h).
  if (isBytecode(buffer.getMemBufferRef())) {
    llvm::StringRef bytes = buffer.getBuffer();
    std::optional<memwall::BytecodeProblem> problem =
        memwall::findBytecodeProblem(llvm::ArrayRef<uint8_t>(
            reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
    if (!problem)
      return success();
    os << buffer.getBufferIdentifier() << ": error: MLIR bytecode, byte "
       << problem->offset << ": " << problem->message << "\n";
    return failure();
  }
  std::optional<memwall::NestingExcess> deep = memwall::findExcessNesting(
      buffer.getBuffer(), memwall::NestingSyntax::Mlir);
  if (!deep)
    return success();
  os << buffer.getBufferIdentifier() << ":" << deep->line << ":"
     << deep->column << ": error: " << memwall::describeExcessNesting()
     << "\n";
  return failure();
}

int mlir::mw::writeOutputOnSuccess(
    StringRef tool, StringRef outputFilename,
    function_ref<LogicalResult(raw_ostream &)> produce) {
  // A failed `produce` has printed its diagnostics: the error only
  // discards the temporary file.
  uint64_t errsBefore = llvm::errs().tell();
  bool produceFailed = false;
  llvm::Error written = llvm::writeToOutput(
      outputFilename, [&](raw_ostream &os) -> llvm::Error {
        if (succeeded(produce(os)))
          return llvm::Error::success();
        produceFailed = true;
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the run failed");
      });
  if (!written)
    return 0;
  std::string message = llvm::toString(std::move(written));
  if (!produceFailed)
    llvm::errs() << tool << ": cannot write '" << outputFilename
                 << "': " << message << "\n";
  else
    reportUnexplainedFailure(tool, errsBefore);
  return 1;
}

void mlir::mw::reportUnexplainedFailure(StringRef tool, uint64_t errsBefore) {
  if (llvm::errs().tell() != errsBefore)
    return;
  llvm::errs() << tool
               << ": error: the run failed without a diagnostic (MLIR 19's "
                  "bytecode reader fails silently on some malformed files: "
                  "an attribute whose type does not fit it)\n";
}
