//===- BytecodeNestingTest.cpp - MLIR bytecode measured before its reader -===//
//
// memwall/Support/BytecodeNesting.h on what MLIR 19's own writer produces:
// a planned training step (properties, dense attributes, fused kernels'
// regions) passes in every bytecode version, and the same step with
// regions, attributes or types nested one level too deep after it is
// refused (so the walk has read the whole step correctly to get there). And
// the premise of the scan: no dialect of Memwall's tools but builtin has a
// custom bytecode encoding.
//
//===----------------------------------------------------------------------===//

#include "memwall/Support/BytecodeNesting.h"
#include "memwall/InitMemwall.h"
#include "memwall/Models/Models.h"

#include "mlir/Bytecode/BytecodeImplementation.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;

namespace {

constexpr unsigned kOver = memwall::kMaxNesting + 1;

class BytecodeNesting : public ::testing::Test {
protected:
  void SetUp() override {
    DialectRegistry registry;
    mw::registerMemwallDialects(registry);
    mw::registerMemwallPasses();
    context = std::make_unique<MLIRContext>(registry);
    context->disableMultithreading();
    context->loadAllAvailableDialects();
  }

  /// gpt2-tiny's training step (--mw-autodiff) through
  /// --mw-train-pipeline=fuse=true.
  OwningOpRef<ModuleOp> plannedStep() {
    std::optional<mw::models::ModelConfig> config =
        mw::models::lookupPreset("gpt2-tiny");
    EXPECT_TRUE(config.has_value());
    FailureOr<OwningOpRef<ModuleOp>> module =
        mw::models::buildModel(*context, *config);
    EXPECT_TRUE(succeeded(module));
    PassManager pm(context.get());
    EXPECT_TRUE(succeeded(
        parsePassPipeline("mw-autodiff,mw-train-pipeline{fuse=true}", pm)));
    EXPECT_TRUE(succeeded(pm.run(**module)));
    return std::move(*module);
  }

  static std::string bytecode(ModuleOp module, int64_t version = 6) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    BytecodeWriterConfig config("BytecodeNestingTest");
    config.setDesiredBytecodeVersion(version);
    EXPECT_TRUE(succeeded(writeBytecodeToFile(module, os, config)));
    return bytes;
  }

  static std::optional<memwall::BytecodeProblem>
  problem(const std::string &bytes) {
    return memwall::findBytecodeProblem(llvm::ArrayRef<uint8_t>(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()));
  }

  std::unique_ptr<MLIRContext> context;
};

TEST_F(BytecodeNesting, OnlyBuiltinHasACustomEncoding) {
  for (Dialect *dialect : context->getLoadedDialects())
    EXPECT_EQ(isa<BytecodeDialectInterface>(dialect),
              dialect->getNamespace() == "builtin")
        << dialect->getNamespace().str();
}

TEST_F(BytecodeNesting, APlannedStepPassesInEveryVersion) {
  OwningOpRef<ModuleOp> step = plannedStep();
  for (int64_t version = 0; version <= 6; ++version) {
    std::optional<memwall::BytecodeProblem> found =
        problem(bytecode(*step, version));
    EXPECT_FALSE(found) << "version " << version << ": " << found->message;
  }
}

TEST_F(BytecodeNesting, RegionsOneLevelTooDeepAfterTheStep) {
  OwningOpRef<ModuleOp> step = plannedStep();
  OpBuilder builder(context.get());
  builder.setInsertionPointToEnd(step->getBody());
  // The step's module and kMaxNesting - 1 modules in one another in it: at
  // the limit, as 256 nested `module {` of text are.
  for (unsigned level = 1; level < memwall::kMaxNesting; ++level) {
    auto inner = builder.create<ModuleOp>(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(inner.getBody());
  }
  for (int64_t version : {0, 6}) {
    std::optional<memwall::BytecodeProblem> found =
        problem(bytecode(*step, version));
    EXPECT_FALSE(found) << found->message;
  }
  builder.create<ModuleOp>(builder.getUnknownLoc());
  for (int64_t version : {0, 2, 6}) {
    std::optional<memwall::BytecodeProblem> found =
        problem(bytecode(*step, version));
    ASSERT_TRUE(found) << "version " << version;
    EXPECT_NE(found->message.find("'builtin.module' nests regions more "
                                  "than 256 levels deep"),
              std::string::npos)
        << found->message;
  }
}

TEST_F(BytecodeNesting, AttributesAndTypesOneLevelTooDeep) {
  OwningOpRef<ModuleOp> step = plannedStep();
  Builder builder(context.get());
  // 256 arrays in the module's attribute dictionary: 257 levels, as in
  // `module attributes {test.nested = [[...]]}`.
  Attribute nested = builder.getArrayAttr({});
  for (unsigned level = 1; level < memwall::kMaxNesting; ++level)
    nested = builder.getArrayAttr({nested});
  (*step)->setAttr("test.nested", nested);
  std::optional<memwall::BytecodeProblem> found = problem(bytecode(*step));
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("nests more than 256 attributes and types "
                                "deep"),
            std::string::npos)
      << found->message;
  // One level less passes.
  (*step)->setAttr("test.nested", llvm::cast<ArrayAttr>(nested)[0]);
  EXPECT_FALSE(problem(bytecode(*step)));

  Type tuple = builder.getTupleType({});
  for (unsigned level = 1; level < kOver; ++level)
    tuple = builder.getTupleType({tuple});
  OpBuilder ops(context.get());
  ops.setInsertionPointToEnd(step->getBody());
  auto func = ops.create<func::FuncOp>(ops.getUnknownLoc(), "tuples",
                                       ops.getFunctionType({tuple}, {}));
  func.setPrivate();
  // Named from where the chain starts: the function type's TypeAttr.
  found = problem(bytecode(*step));
  ASSERT_TRUE(found);
  EXPECT_NE(found->message.find("nests more than 256 attributes and types "
                                "deep"),
            std::string::npos)
      << found->message;
}

TEST_F(BytecodeNesting, DataOfEveryWidthPasses) {
  // Packed booleans, splats, complex numbers, half floats, index, vectors,
  // arrays of each width and strings, and values wider than 64 bits: the
  // sizes the check compares.
  context->allowUnregisteredDialects();
  const char *text = R"mlir(
    module attributes {
      t.bits = dense<[true, false, true]> : tensor<3xi1>,
      t.bit = dense<true> : tensor<9xi1>,
      t.splat = dense<1.5> : tensor<4x4xf16>,
      t.bf = dense<[1.0, 2.0]> : tensor<2xbf16>,
      t.complex = dense<[(1.0, 2.0), (3.0, 4.0)]> : tensor<2xcomplex<f32>>,
      t.index = dense<[1, 2]> : tensor<2xindex>,
      t.vector = dense<[1, 2, 3]> : vector<3xi64>,
      t.odd = dense<[1, 2, 3]> : tensor<3xi7>,
      t.empty = dense<> : tensor<0xf32>,
      t.bools = array<i1: true, false, true>,
      t.bytes = array<i8: 1, 2>,
      t.ints = array<i32: 1, 2, 3>,
      t.doubles = array<f64: 1.0>,
      t.strings = dense<["a", "bc"]> : tensor<2x!t.string>,
      t.wide = 123456789012345678901234567890 : i128,
      t.x87 = 1.5 : f80,
      t.quad = -2.5 : f128,
      t.narrow = 7 : i5
    } {
      // Shaped and complex types of every element kind their verifiers
      // accept, dynamic and scalable sizes included.
      func.func private @types(tensor<?x2xf32>, memref<2xmemref<4xf32>>,
          memref<?xvector<4xf32>>, tensor<2xcomplex<f64>>,
          vector<[4]x2xf32>, tensor<*xf32>, memref<*xi8>, tensor<2x!t.x>,
          tensor<4xf8E5M2>, complex<i32>, i16777215, tensor<0xindex>,
          tensor<2xvector<3xi1>>, memref<f32>,
          memref<4x4xf32, affine_map<(d0, d1)[s0] -> (d0 * s0 + d1)>>,
          memref<2x3xf32, strided<[3, 1], offset: ?>>)
    }
  )mlir";
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, context.get());
  ASSERT_TRUE(module);
  for (int64_t version = 0; version <= 6; ++version) {
    std::optional<memwall::BytecodeProblem> found =
        problem(bytecode(*module, version));
    EXPECT_FALSE(found) << "version " << version << ": " << found->message;
  }
}

} // namespace
