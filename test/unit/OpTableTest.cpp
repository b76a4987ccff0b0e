//===- OpTableTest.cpp - The runtime's op table agrees with the ODS --------===//
//
// runtime/include/mwrt/op_table.h is generated from MWOps.td and checked in
// (the op-table-current test catches a stale copy); these tests check its
// meaning against the dialects as registered: every mw op but the structural
// mw.kernel, mw.fusion (which --mw-form-kernels turns into an mw.kernel) and
// mw.yield, and every mesh collective the compiler runs as a
// kernel (mw::isRuntimeCollective), has exactly one row; in-place rules agree
// with InPlaceOpInterface; a row's attribute names are its op's; and every op
// with a formula is one the evaluator and the CPU backend dispatch
// generically.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "mwrt/op_table.h"

#include "mlir/Dialect/Mesh/IR/MeshDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// The ops the runtime executes: the mw dialect's and the mesh collectives.
llvm::SmallVector<RegisteredOperationName> runtimeOps(MLIRContext &ctx) {
  llvm::SmallVector<RegisteredOperationName> ops;
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (mw::isRuntimeCollective(name)) {
      ops.push_back(name);
      continue;
    }
    if (name.getDialectNamespace() != "mw")
      continue;
    if (name.hasTrait<OpTrait::IsTerminator>() ||
        name.getStringRef() == "mw.kernel" ||
        name.getStringRef() == "mw.fusion")
      continue; // structure, not computation
    ops.push_back(name);
  }
  return ops;
}

TEST(OpTable, OneRowPerOdsOp) {
  MLIRContext ctx;
  ctx.loadDialect<mw::MWDialect, mesh::MeshDialect>();
  auto ops = runtimeOps(ctx);
  EXPECT_EQ(static_cast<int>(ops.size()), mwrt::kNumOpKinds);
  for (RegisteredOperationName name : ops) {
    mwrt::OpKind kind = mwrt::OpKind::Constant;
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
  ctx.loadDialect<mw::MWDialect, mesh::MeshDialect>();
  const char *alias[] = {
#define MWRT_OP_ALIAS(kind, name, minIns, maxIns, minOuts, maxOuts, alias,     \
                      attrs, kernel)                                           \
  #alias,
      MWRT_FOR_EACH_OP(MWRT_OP_ALIAS)
#undef MWRT_OP_ALIAS
  };
  for (RegisteredOperationName name : runtimeOps(ctx)) {
    mwrt::OpKind kind = mwrt::OpKind::Constant;
    ASSERT_TRUE(mwrt::parseOpKind(name.getStringRef().str(), kind));
    // Whatever the compiler writes in place, the runtime must accept.
    if (name.hasInterface<mw::InPlaceOpInterface>()) {
      EXPECT_STREQ(alias[static_cast<int>(kind)], "InPlace")
          << name.getStringRef().str();
    }
  }
}

TEST(OpTable, AttributeNamesAreTheOps) {
  MLIRContext ctx;
  ctx.loadDialect<mw::MWDialect, mesh::MeshDialect>();
  const char *attrs[] = {
#define MWRT_OP_ATTRS(kind, name, minIns, maxIns, minOuts, maxOuts, alias,     \
                      attrs, kernel)                                           \
  attrs,
      MWRT_FOR_EACH_OP(MWRT_OP_ATTRS)
#undef MWRT_OP_ATTRS
  };
  for (RegisteredOperationName name : runtimeOps(ctx)) {
    mwrt::OpKind kind = mwrt::OpKind::Constant;
    ASSERT_TRUE(mwrt::parseOpKind(name.getStringRef().str(), kind));
    // The table keeps ODS order; the registry sorts by name.
    llvm::SmallVector<StringRef> row, registered;
    StringRef(attrs[static_cast<int>(kind)])
        .split(row, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    for (StringAttr attr : name.getAttributeNames())
      registered.push_back(attr.getValue());
    llvm::sort(row);
    llvm::sort(registered);
    EXPECT_EQ(row, registered) << name.getStringRef().str();
  }
}

TEST(OpTable, CollectivesHaveRowsOfTheirOwn) {
  // mw-translate names a collective by its MLIR name; the runtime runs it
  // out of place with one operand and one result.
  for (const char *name : {"mesh.all_reduce", "mesh.reduce_scatter",
                           "mesh.all_gather", "mesh.all_slice"}) {
    mwrt::OpKind kind = mwrt::OpKind::Constant;
    ASSERT_TRUE(mwrt::parseOpKind(name, kind)) << name;
    EXPECT_FALSE(mwrt::elementwiseSpec(kind)) << name;
  }
  mwrt::OpKind kind;
  ASSERT_TRUE(mwrt::parseOpKind("mesh.all_gather", kind));
  EXPECT_EQ(kind, mwrt::OpKind::MeshAllGather);
}

TEST(OpTable, FormulaOpsAreElementwise) {
  MLIRContext ctx;
  ctx.loadDialect<mw::MWDialect, mesh::MeshDialect>();
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
