//===- OpTableTest.cpp - The runtime's op table agrees with the ODS --------===//
//
// runtime/include/mwrt/op_table.h is generated from MWOps.td and checked in
// (the op-table-current test catches a stale copy); these tests check its
// meaning against the dialect as registered: every mw op but the structural
// mw.kernel and mw.yield has exactly one row, in-place rules agree with
// InPlaceOpInterface, and every op with a formula is one the evaluator and
// the CPU backend dispatch generically.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "mwrt/op_table.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// The ops of the mw dialect the runtime executes.
llvm::SmallVector<RegisteredOperationName> runtimeOps(MLIRContext &ctx) {
  llvm::SmallVector<RegisteredOperationName> ops;
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "mw")
      continue;
    if (name.hasTrait<OpTrait::IsTerminator>() ||
        name.getStringRef() == "mw.kernel")
      continue; // structure, not computation
    ops.push_back(name);
  }
  return ops;
}

TEST(OpTable, OneRowPerOdsOp) {
  MLIRContext ctx;
  ctx.loadDialect<mw::MWDialect>();
  auto ops = runtimeOps(ctx);
  EXPECT_EQ(static_cast<int>(ops.size()), mwrt::kNumOpKinds);
  for (RegisteredOperationName name : ops) {
    mwrt::OpKind kind;
    EXPECT_TRUE(mwrt::parseOpKind(name.getStringRef().str(), kind))
        << name.getStringRef().str() << " has no row in mwrt/op_table.h";
  }
  llvm::StringSet<> seen;
  for (int i = 0; i < mwrt::kNumOpKinds; ++i) {
    const char *n = mwrt::opKindName(static_cast<mwrt::OpKind>(i));
    EXPECT_TRUE(seen.insert(n).second) << n << " has two rows";
    EXPECT_TRUE(RegisteredOperationName::lookup(n, &ctx).has_value())
        << n << " is in the op table but not in the dialect";
  }
}

TEST(OpTable, AliasingAgreesWithTheInPlaceTraits) {
  MLIRContext ctx;
  ctx.loadDialect<mw::MWDialect>();
  const char *alias[] = {
#define MWRT_OP_ALIAS(kind, name, minIns, maxIns, minOuts, maxOuts, alias,     \
                      attrs, kernel)                                           \
  #alias,
      MWRT_FOR_EACH_OP(MWRT_OP_ALIAS)
#undef MWRT_OP_ALIAS
  };
  for (RegisteredOperationName name : runtimeOps(ctx)) {
    mwrt::OpKind kind;
    ASSERT_TRUE(mwrt::parseOpKind(name.getStringRef().str(), kind));
    // Whatever the compiler writes in place, the runtime must accept.
    if (name.hasInterface<mw::InPlaceOpInterface>()) {
      EXPECT_STREQ(alias[static_cast<int>(kind)], "InPlace")
          << name.getStringRef().str();
    }
  }
}

TEST(OpTable, FormulaOpsAreElementwise) {
  MLIRContext ctx;
  ctx.loadDialect<mw::MWDialect>();
  for (int i = 0; i < mwrt::kNumOpKinds; ++i) {
    auto kind = static_cast<mwrt::OpKind>(i);
    const mwrt::ElementwiseSpec *spec = mwrt::elementwiseSpec(kind);
    if (!spec)
      continue;
    auto name = RegisteredOperationName::lookup(mwrt::opKindName(kind), &ctx);
    ASSERT_TRUE(name.has_value());
    // The compiler may write its result over its first operand.
    EXPECT_TRUE(name->hasInterface<mw::InPlaceOpInterface>())
        << mwrt::opKindName(kind);
    EXPECT_GE(spec->arity, 1);
    EXPECT_LE(spec->arity, 2);
  }
}

} // namespace
