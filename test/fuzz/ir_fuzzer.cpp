//===- ir_fuzzer.cpp - libFuzzer harness of the MLIR path -----------------===//
//
// The contract on any text (or MLIR bytecode): refused for nesting deeper
// than the parser's recursion survives (mw::checkInputNesting, which
// Memwall's tools call; for bytecode, also cycles, oversized counts and
// what MLIR 19 would build unverified), or
// parsing, verification and --mw-train-pipeline either fail with at least
// one diagnostic, or succeed with a module that
// verifies and prints as text that parses again. Nothing crashes, hangs or
// fails silently. The compiler's libraries are Debian's MLIR and our
// gcc-built libMemwallCompiler.so, not instrumented: the fuzzer mutates the
// committed corpus (small steps from mw-models) blind, and ASan + UBSan
// cover this harness only, so it catches crashes, aborts and silent
// failures, not memory errors inside the libraries. Run by
// test/fuzz/run-fuzzers.sh.
//
//===----------------------------------------------------------------------===//

#include "memwall/InitMemwall.h"

#include "mlir/Bytecode/BytecodeReader.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

static mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    mlir::mw::registerMemwallDialects(registry);
    mlir::mw::registerMemwallPasses();
    auto *c = new mlir::MLIRContext(registry);
    c->disableMultithreading();
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &ctx = context();
  int diagnostics = 0;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++diagnostics;
    return mlir::success();
  });
  auto failedQuietly = [&] {
    if (diagnostics == 0)
      std::abort(); // a failure always says why
    return 0;
  };
  // MLIR's lexer stops at a NUL, as every file buffer has one after its
  // end: give the bytes one.
  const std::string text(reinterpret_cast<const char *>(data), size);
  // What every Memwall tool does before parsing: MLIR's parser recurses
  // once per level of nesting and a few kilobytes of `[[[[` overflow its
  // stack. Refused inputs are fine here (the tools print why).
  if (mlir::failed(mlir::mw::checkInputNesting(
          *llvm::MemoryBuffer::getMemBuffer(text, "input",
                                            /*RequiresNullTerminator=*/false),
          llvm::nulls())))
    return 0;
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, &ctx);
  // MLIR 19's bytecode reader refuses some malformed files without a
  // diagnostic (a FloatAttr whose type is an integer); the tools then say
  // so themselves (mw::reportUnexplainedFailure).
  if (!module && mlir::isBytecode(llvm::MemoryBufferRef(text, "input")))
    return 0;
  if (!module)
    return failedQuietly();
  if (mlir::failed(mlir::verify(*module)))
    return failedQuietly();
  // MW_FUZZ_PIPELINE (for runs by hand) replaces the pipeline, e.g.
  // "mw-train-pipeline{chunk-loss=3 fuse=true}".
  static const std::string pipeline = [] {
    const char *env = std::getenv("MW_FUZZ_PIPELINE");
    return std::string(env && *env ? env : "mw-train-pipeline");
  }();
  mlir::PassManager pm(&ctx);
  if (mlir::failed(mlir::parsePassPipeline(pipeline, pm)))
    std::abort();
  if (mlir::failed(pm.run(*module)))
    return failedQuietly();
  if (mlir::failed(mlir::verify(*module)))
    std::abort(); // the pipeline left invalid IR and said nothing
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  if (!mlir::parseSourceString<mlir::ModuleOp>(os.str(), &ctx))
    std::abort(); // what we print must parse again
  return 0;
}
