//===- mw-tblgen.cpp - TableGen backends of Memwall -----------------------===//
//
// mlir-tblgen with one more backend, -gen-mwrt-op-table, which writes the
// runtime's per-op facts from the mw dialect's ODS: the OpKind enum, one row
// per op (name, operand and result counts, how its results may alias its
// operands, its attribute names, the runtime kernel that runs it) and, for
// elementwise ops, their formula parameters and the dispatch to the formulas
// of mwrt/formulas.h. It reads RuntimeOps.td, which includes MWOps.td and
// upstream's MeshOps.td: after the mw ops come the mesh collectives that a
// ZeRO step runs (--mw-zero), their facts read from their ODS records the
// same way. The output is checked into runtime/ (the runtime builds
// without MLIR, so it cannot run this tool) with a "do not edit" banner; a
// test regenerates it and fails when the checked-in copy is stale. IREE's VM
// op table is built the same way from its compiler's op definitions.
//
//===----------------------------------------------------------------------===//

#include "mlir/TableGen/Attribute.h"
#include "mlir/TableGen/GenInfo.h"
#include "mlir/TableGen/Operator.h"
#include "mlir/TableGen/Trait.h"
#include "mlir/Tools/mlir-tblgen/MlirTblgenMain.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/TableGen/Error.h"
#include "llvm/TableGen/Record.h"

#include <string>
#include <vector>

using namespace llvm;
using namespace mlir::tblgen;

namespace {

/// How a formula parameter reaches the formula (formulas.h's conventions).
enum class ParamKind { Float, Int, Bool, Enum };

struct Param {
  std::string name;
  ParamKind kind;
  std::string byDefault; ///< a C++ double literal
  std::string cases;     ///< enums: case names in value order, space-separated
  bool required = false; ///< no default: the op must carry it
};

/// Everything the table says about one op.
struct OpRow {
  std::string kind; ///< OpKind enumerator: the C++ class name less "Op"
  std::string name; ///< "mw.add"
  int minIns = 0, maxIns = 0, minOuts = 0, maxOuts = 0; ///< max -1: variadic
  std::string alias;                                    ///< None, InPlace, View
  std::string attrNames;
  std::string kernel;  ///< runtime kernel family (run<kernel> in src/cpu)
  std::string formula; ///< elementwise: function of mwrt/formulas.h
  int arity = 0;       ///< elementwise: number of tensor operands
  bool acceptsIntegers = false;
  bool sameShape = false; ///< operands and result of one type (no broadcast)
  std::vector<std::string> operandNames;
  std::vector<Param> params;
};

constexpr int kMaxParams = 4;

/// Counts operands or results: fixed ones, optional ones, variadic ones.
void countValues(int n, function_ref<const NamedTypeConstraint &(int)> get,
                 int &min, int &max) {
  min = max = 0;
  for (int i = 0; i < n; ++i) {
    const NamedTypeConstraint &v = get(i);
    if (v.isVariadic()) {
      // The verifiers of mw's ops that take only a variadic group (concat,
      // found_inf) require at least one value; a group after fixed operands
      // (mw.wait's `reading`) may be empty.
      if (i == 0)
        ++min;
      max = -1;
    } else if (v.isOptional()) {
      if (max >= 0)
        ++max;
    } else {
      ++min;
      if (max >= 0)
        ++max;
    }
  }
}

bool hasNativeTrait(const Operator &op, StringRef name) {
  for (const Trait &trait : op.getTraits())
    if (const auto *native = dyn_cast<NativeTrait>(&trait))
      if (StringRef(native->getFullyQualifiedTraitName()).contains(name))
        return true;
  return false;
}

/// A parameter for attribute `attr` of elementwise op `op`.
Param paramOf(const Operator &op, const NamedAttribute &named) {
  Param p;
  p.name = named.name.str();
  Attribute attr = named.attr;
  const Record &base = attr.getBaseAttr().getDef();
  if (base.isSubClassOf("EnumAttr")) {
    EnumAttr info(base.getValueAsDef("enum"));
    p.kind = ParamKind::Enum;
    std::vector<EnumAttrCase> cases = info.getAllCases();
    SmallVector<std::string> names;
    for (auto [i, c] : enumerate(cases)) {
      if (c.getValue() != static_cast<int64_t>(i))
        PrintFatalError(op.getLoc(), "enum '" + info.getEnumClassName() +
                                         "' must number its cases 0, 1, ...");
      names.push_back(c.getStr().str());
    }
    p.cases = join(names, " ");
    p.byDefault = "0";
    p.required = !attr.hasDefaultValue() && !attr.isOptional();
    if (attr.hasDefaultValue()) {
      StringRef symbol = attr.getDefaultValue().rsplit("::").second;
      auto it = find_if(cases, [&](const EnumAttrCase &c) {
        return c.getSymbol() == symbol;
      });
      if (it == cases.end())
        PrintFatalError(op.getLoc(), "default of '" + p.name +
                                         "' is not a case of its enum");
      p.byDefault = std::to_string(it->getValue());
    }
    return p;
  }
  StringRef def = base.getName();
  if (def == "F64Attr" || def == "F32Attr") {
    p.kind = ParamKind::Float;
  } else if (def == "I64Attr" || def == "I32Attr" || def == "SI64Attr") {
    p.kind = ParamKind::Int;
  } else if (def == "BoolAttr" || def == "UnitAttr") {
    p.kind = ParamKind::Bool;
  } else {
    PrintFatalError(op.getLoc(), "attribute '" + p.name + "' of kind '" + def +
                                     "' cannot be a formula parameter");
  }
  p.byDefault = "0";
  p.required = !attr.hasDefaultValue() && !attr.isOptional() && def != "UnitAttr";
  if (attr.hasDefaultValue()) {
    StringRef v = attr.getDefaultValue().trim();
    p.byDefault = v == "true" ? "1" : v == "false" ? "0" : v.str();
  }
  return p;
}

/// The row of op `def`. `kernel` names its runtime kernel for ops whose ODS
/// has no `runtimeKernel` field (upstream's); mw ops take theirs.
OpRow rowOf(const Record *def, StringRef kernel = "",
            StringRef kindPrefix = "") {
  Operator op(def);
  OpRow row;
  StringRef cls = op.getCppClassName();
  row.kind = kindPrefix.str() +
             (cls.ends_with("Op") ? cls.drop_back(2).str() : cls.str());
  row.name = op.getOperationName();
  countValues(
      op.getNumOperands(),
      [&](int i) -> const NamedTypeConstraint & { return op.getOperand(i); },
      row.minIns, row.maxIns);
  countValues(
      op.getNumResults(),
      [&](int i) -> const NamedTypeConstraint & { return op.getResult(i); },
      row.minOuts, row.maxOuts);
  if (hasNativeTrait(op, "ElementwiseInPlace") ||
      hasNativeTrait(op, "TiedResults") ||
      hasNativeTrait(op, "MayComputeInPlace"))
    row.alias = "InPlace";
  else if (hasNativeTrait(op, "ViewOfOperand"))
    row.alias = "View";
  else
    row.alias = "None";
  SmallVector<std::string> attrs;
  for (int i = 0, e = op.getNumNativeAttributes(); i < e; ++i)
    attrs.push_back(op.getAttribute(i).name.str());
  row.attrNames = join(attrs, " ");
  if (!kernel.empty()) {
    row.kernel = kernel.str();
    return row;
  }
  row.kernel = def->getValueAsString("runtimeKernel").str();
  if (row.kernel.empty())
    PrintFatalError(def->getLoc(),
                    "'" + row.name +
                        "' names no runtime kernel: set `runtimeKernel`");
  row.formula = def->getValueAsString("formula").str();
  if (row.formula.empty())
    return row;
  row.arity = op.getNumOperands();
  if (row.arity < 1 || row.arity > 2 || op.getNumVariableLengthOperands() ||
      op.getNumResults() != 1)
    PrintFatalError(def->getLoc(), "'" + row.name +
                                       "' has a formula, so it must take one "
                                       "or two tensors and return one");
  row.acceptsIntegers = true;
  for (int i = 0; i < op.getNumOperands(); ++i)
    row.acceptsIntegers &=
        StringRef(op.getOperand(i).constraint.getSummary()).contains("integer");
  row.sameShape = op.getTrait("::mlir::OpTrait::SameOperandsAndResultType");
  for (int i = 0; i < op.getNumOperands(); ++i)
    row.operandNames.push_back(op.getOperand(i).name.str());
  for (int i = 0, e = op.getNumNativeAttributes(); i < e; ++i)
    row.params.push_back(paramOf(op, op.getAttribute(i)));
  if (row.params.size() > kMaxParams)
    PrintFatalError(def->getLoc(), "'" + row.name + "' has more than " +
                                       std::to_string(kMaxParams) +
                                       " formula parameters");
  return row;
}

const char *paramKindName(ParamKind k) {
  switch (k) {
  case ParamKind::Float:
    return "Float";
  case ParamKind::Int:
    return "Int";
  case ParamKind::Bool:
    return "Bool";
  case ParamKind::Enum:
    return "Enum";
  }
  return "Float";
}

/// The formula's trailing arguments: p[i] converted to the parameter's type.
std::string paramArgs(const OpRow &row) {
  std::string s;
  for (auto [i, p] : enumerate(row.params)) {
    switch (p.kind) {
    case ParamKind::Float:
      s += formatv(", p[{0}]", i).str();
      break;
    case ParamKind::Int:
    case ParamKind::Enum:
      s += formatv(", static_cast<int64_t>(p[{0}])", i).str();
      break;
    case ParamKind::Bool:
      s += formatv(", p[{0}] != 0", i).str();
      break;
    }
  }
  return s;
}

void emitDispatch(raw_ostream &os, ArrayRef<OpRow> rows, int arity,
                  bool integers) {
  StringRef fn = arity == 1 ? "applyUnaryFormula" : "applyBinaryFormula";
  StringRef args = arity == 1 ? "x" : "x, y";
  if (integers)
    os << "MWRT_HD int64_t " << fn << "(OpKind kind, "
       << (arity == 1 ? "int64_t x" : "int64_t x, int64_t y")
       << ", const double *p) {\n";
  else
    os << "template <typename T>\nMWRT_HD T " << fn << "(OpKind kind, "
       << (arity == 1 ? "T x" : "T x, T y") << ", const double *p) {\n";
  os << "  (void)p;\n  switch (kind) {\n";
  for (const OpRow &row : rows) {
    if (row.arity != arity || (integers && !row.acceptsIntegers))
      continue;
    os << "  case OpKind::" << row.kind << ":\n    return formulas::"
       << row.formula << "(" << args << paramArgs(row) << ");\n";
  }
  os << "  default:\n    return " << (integers ? "0" : "T(0)") << ";\n  }\n}\n\n";
}

/// The upstream mesh collectives the runtime runs, by ODS record, with the
/// runtime kernel of each (run<Kernel> in src/cpu). This is the one place
/// their kernel names are written: upstream ODS has no `runtimeKernel` field
/// to carry them, and everything else in their rows comes from their records.
/// Their kinds are prefixed "Mesh" (OpKind::MeshAllReduce) so they read as
/// the mesh dialect's beside the mw ops.
constexpr std::pair<const char *, const char *> kMeshCollectives[] = {
    {"Mesh_AllReduceOp", "AllReduce"},
    {"Mesh_ReduceScatterOp", "ReduceScatter"},
    {"Mesh_AllGatherOp", "AllGather"},
    {"Mesh_AllSliceOp", "AllSlice"},
};

bool emitOpTable(const RecordKeeper &records, raw_ostream &os) {
  std::vector<Record *> defs = records.getAllDerivedDefinitions("MW_Op");
  // Definition order, which is the order of MWOps.td.
  llvm::sort(defs, [](const Record *a, const Record *b) {
    return a->getID() < b->getID();
  });
  std::vector<OpRow> rows;
  for (const Record *def : defs)
    if (!def->isAnonymous())
      rows.push_back(rowOf(def));
  // The collectives, when the input includes MeshOps.td (RuntimeOps.td does).
  if (records.getDef("Mesh_Dialect")) {
    for (auto [record, kernel] : kMeshCollectives) {
      const Record *def = records.getDef(record);
      if (!def)
        PrintFatalError("MeshOps.td has no '" + Twine(record) +
                        "': update kMeshCollectives in mw-tblgen.cpp");
      rows.push_back(rowOf(def, kernel, "Mesh"));
    }
  }

  os << R"(//===- op_table.h - The mw ops as the runtime sees them --------*- C++ -*-===//
//
// GENERATED by mw-tblgen -gen-mwrt-op-table from tools/mw-tblgen/RuntimeOps.td
// (include/memwall/Dialect/MW/IR/MWOps.td and upstream's MeshOps.td). DO NOT
// EDIT: change the ODS and run `ninja mw-op-table` (the op-table-current test
// fails while this is stale).
//
// One row per op of the mw dialect, in ODS order, then one per mesh
// collective a ZeRO step runs, and for elementwise ops the formula
// parameters and the dispatch to mwrt/formulas.h that the evaluator, the CPU
// backend and the CUDA backend share.
//
//===---------------------------------------------------------------------===//

#ifndef MWRT_OP_TABLE_H
#define MWRT_OP_TABLE_H

#include "mwrt/formulas.h"

#include <cstdint>
#include <string_view>

namespace mwrt {

/// The ops the runtime runs: the mw dialect's, then the mesh collectives.
enum class OpKind {
)";
  for (const OpRow &row : rows)
    os << "  " << row.kind << ",\n";
  os << "};\ninline constexpr int kNumOpKinds = " << rows.size() << ";\n\n";

  os << R"(/// X(Kind, "mw.name", minOperands, maxOperands, minResults, maxResults, Alias,
///   "attribute names", Kernel): max -1 means variadic; Alias says whether a
/// result may be exactly an operand (InPlace), the operand's own contiguous
/// buffer (View), or share no memory with it (None); Kernel names the
/// runtime's kernel (run<Kernel> in src/cpu).
#define MWRT_FOR_EACH_OP(X) \
)";
  for (const OpRow &row : rows)
    os << formatv("  X({0}, \"{1}\", {2}, {3}, {4}, {5}, {6}, \"{7}\", {8}) \\\n",
                  row.kind, row.name, row.minIns, row.maxIns, row.minOuts,
                  row.maxOuts, row.alias, row.attrNames, row.kernel);
  os << R"(

/// The op's full name, "mw.add".
inline const char *opKindName(OpKind kind) {
  static constexpr const char *names[] = {
#define MWRT_OP_NAME(kind, name, ...) name,
      MWRT_FOR_EACH_OP(MWRT_OP_NAME)
#undef MWRT_OP_NAME
  };
  int i = static_cast<int>(kind);
  return i >= 0 && i < kNumOpKinds ? names[i] : "mw.<unknown>";
}

/// Sets `kind` from a full op name ("mw.add"); false (and `kind` unchanged)
/// for any other string.
inline bool parseOpKind(std::string_view name, OpKind &kind) {
  for (int i = 0; i < kNumOpKinds; ++i) {
    if (name == opKindName(static_cast<OpKind>(i))) {
      kind = static_cast<OpKind>(i);
      return true;
    }
  }
  return false;
}

/// How an attribute of an elementwise op reaches its formula.
enum class ParamKind { Float, Int, Bool, Enum };

/// One formula parameter: the attribute's name, kind, default (as a double:
/// an enum's case number, a bool's 0 or 1), for enums the case names in value
/// order, space-separated, and whether the op must carry it (no default).
struct ParamSpec {
  const char *name;
  ParamKind kind;
  double byDefault;
  const char *cases;
  bool required;
};

inline constexpr int kMaxFormulaParams = )"
     << kMaxParams << R"(;

/// An elementwise op: how many tensors its formula takes, whether it takes
/// integers (computed in int64, wrapped to the type), whether its operands and
/// result have one type (else they broadcast), its operands' names (for
/// messages) and its parameters.
struct ElementwiseSpec {
  int arity;
  bool acceptsIntegers;
  bool sameShape;
  const char *operandNames[2];
  int numParams;
  ParamSpec params[kMaxFormulaParams];
};

/// The elementwise facts of `kind`, or null when it has no formula.
inline const ElementwiseSpec *elementwiseSpec(OpKind kind) {
  switch (kind) {
)";
  for (const OpRow &row : rows) {
    if (row.formula.empty())
      continue;
    os << "  case OpKind::" << row.kind << ": {\n"
       << "    static constexpr ElementwiseSpec spec{" << row.arity << ", "
       << (row.acceptsIntegers ? "true" : "false") << ", "
       << (row.sameShape ? "true" : "false") << ", {\"" << row.operandNames[0]
       << "\", " << (row.arity > 1 ? "\"" + row.operandNames[1] + "\"" : "nullptr")
       << "}, " << row.params.size() << ", {";
    for (auto [i, p] : enumerate(row.params))
      os << (i ? ", " : "") << "{\"" << p.name << "\", ParamKind::"
         << paramKindName(p.kind) << ", " << p.byDefault << ", \"" << p.cases
         << "\", " << (p.required ? "true" : "false") << "}";
    os << "}};\n    return &spec;\n  }\n";
  }
  os << "  default:\n    return nullptr;\n  }\n}\n\n";

  os << "/// One element of an elementwise op, `p` its parameters in ODS "
        "order.\n";
  emitDispatch(os, rows, 1, false);
  emitDispatch(os, rows, 1, true);
  emitDispatch(os, rows, 2, false);
  emitDispatch(os, rows, 2, true);
  os << "} // namespace mwrt\n\n#endif // MWRT_OP_TABLE_H\n";
  return false;
}

mlir::GenRegistration
    genOpTable("gen-mwrt-op-table",
               "Generate the runtime's op table from the mw dialect's ODS",
               emitOpTable);

} // namespace

int main(int argc, char **argv) { return mlir::MlirTblgenMain(argc, argv); }
