//===- fusion.cpp - Checking and analysing fused kernels' programs --------===//
//
// The loader's second look at a fused kernel (DESIGN.md decision 16: the
// plan is checked twice, here independently of mw-translate): every operand
// reference must name a kernel input or a result of an earlier instruction,
// every op must be one a fused kernel may hold, with the arity, dtypes and
// shapes its op requires, and the program must be one of the four kinds of
// docs/fusion.md. The analysis then composes index maps from each yielded
// value back to the kernel inputs (broadcasts, transposes, slices and
// reshapes become affine accesses; see fusion.h) and sizes the CPU
// backend's scratch.
//
//===----------------------------------------------------------------------===//

#include "fusion.h"
#include "executor.h"
#include "status.h"
#include "cpu/support.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <sstream>

using namespace mwrt;
using namespace mwrt::detail;

const char *mwrt::fusionKindName(FusionKind kind) {
  switch (kind) {
  case FusionKind::Loop:
    return "loop";
  case FusionKind::Row:
    return "row";
  case FusionKind::Matmul:
    return "matmul";
  case FusionKind::Horizontal:
    return "horizontal";
  }
  return "unknown";
}

namespace {

using Shape = std::vector<int64_t>;

/// Elements per tile the CPU backend aims for: the tile arrays of a
/// program stay in the L2 cache.
constexpr int64_t kTileElements = 2048;
/// Rows of a matmul kernel's tile, at least: each tile is one sgemm of
/// that many rows, which packs the whole of op(B) again. With OpenBLAS's
/// AVX-512 kernels on gpt2-small's [1024, 768] x [768, 3072] product (one
/// thread) 32-row calls ran at 80 GFLOP/s, 128-row ones at 127 and one call
/// at 155; the gpt2-small training step took 7.41 s with 32 and 6.69 s
/// with 128 (2 threads), for 12.6 MB of tile arrays instead of 3.1 MB
/// (256 rows: 6.57 s for 25.2 MB). docs/fusion.md.
constexpr int64_t kMatmulTileRows = 128;

using cpu::broadcastShapes;
using cpu::isFloat;
using cpu::shapeString;
std::string shapeText(const Shape &shape) { return shapeString(shape); }
int64_t numElements(const Shape &s) { return cpu::product(s); }
Shape rowMajor(const Shape &shape) { return cpu::rowMajorStrides(shape); }

/// The op's arity from the generated op table.
struct Arity {
  int minIns, maxIns, minOuts, maxOuts;
};
Arity arityOf(OpKind kind) {
  static constexpr Arity table[] = {
#define MWRT_FUSION_ARITY(kind, name, minIns, maxIns, minOuts, maxOuts, ...)   \
  {minIns, maxIns, minOuts, maxOuts},
      MWRT_FOR_EACH_OP(MWRT_FUSION_ARITY)
#undef MWRT_FUSION_ARITY
  };
  return table[static_cast<int>(kind)];
}

bool isRowOp(OpKind k) {
  switch (k) {
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::SoftmaxGrad:
  case OpKind::LogSoftmaxGrad:
  case OpKind::LayerNorm:
  case OpKind::RmsNorm:
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMean:
    return true;
  default:
    return false;
  }
}

bool isShapeOp(OpKind k) {
  return k == OpKind::Reshape || k == OpKind::Transpose ||
         k == OpKind::BroadcastTo || k == OpKind::Slice;
}

bool isPointwise(OpKind k) {
  return elementwiseSpec(k) || k == OpKind::Cast || k == OpKind::Select ||
         k == OpKind::Splat || k == OpKind::Constant || isShapeOp(k);
}

/// The value a term takes at `i` of dimension size `n`: its largest + 1.
int64_t termRange(const IndexTerm &t, int64_t n) {
  int64_t r = (n + t.div - 1) / t.div;
  return t.mod ? std::min(r, t.mod) : r;
}

/// Sorts and merges the terms of `e`, dropping zeros.
void normalize(IndexExpr &e) {
  std::sort(e.terms.begin(), e.terms.end(), [](const IndexTerm &a,
                                               const IndexTerm &b) {
    return std::tie(a.dim, a.div, a.mod) < std::tie(b.dim, b.div, b.mod);
  });
  std::vector<IndexTerm> merged;
  for (const IndexTerm &t : e.terms) {
    if (!merged.empty() && merged.back().dim == t.dim &&
        merged.back().div == t.div && merged.back().mod == t.mod)
      merged.back().coef += t.coef;
    else
      merged.push_back(t);
  }
  e.terms.clear();
  for (const IndexTerm &t : merged)
    if (t.coef != 0)
      e.terms.push_back(t);
}

/// `a += scale * b`.
void addScaled(IndexExpr &a, const IndexExpr &b, int64_t scale) {
  a.offset += scale * b.offset;
  for (IndexTerm t : b.terms) {
    t.coef *= scale;
    a.terms.push_back(t);
  }
  normalize(a);
}

/// A map from the iteration index (rank R) to a value's index (rank V): one
/// index expression per value dimension.
struct IndexMap {
  std::vector<IndexExpr> rows;
  size_t rank() const { return rows.size(); }
  std::string key() const {
    std::ostringstream os;
    for (const IndexExpr &e : rows) {
      os << e.offset << ':';
      for (const IndexTerm &t : e.terms)
        os << t.dim << '/' << t.div << '%' << t.mod << '*' << t.coef << ',';
      os << ';';
    }
    return os.str();
  }
  bool operator==(const IndexMap &o) const { return key() == o.key(); }
};

IndexMap zeroMap(size_t v) {
  IndexMap m;
  m.rows.assign(v, IndexExpr());
  return m;
}

/// Value dimension e reads iteration dimension d.
IndexExpr dimExpr(size_t d) { return {0, {IndexTerm{d, 1, 0, 1}}}; }

/// The iteration index itself (V = R).
IndexMap identityMap(size_t r) {
  IndexMap m = zeroMap(r);
  for (size_t d = 0; d < r; ++d)
    m.rows[d] = dimExpr(d);
  return m;
}

/// A row value's index: the iteration index without its last dimension
/// (`keep1`: with a trailing 0 for a size-1 last dimension).
IndexMap rowMap(size_t r, bool keep1) {
  IndexMap m = zeroMap(keep1 ? r : r - 1);
  for (size_t d = 0; d + 1 < r; ++d)
    m.rows[d] = dimExpr(d);
  return m;
}

/// Validates and analyses one program.
class Analyzer {
public:
  Analyzer(FusedProgramDesc &p, const std::vector<OperandDesc> &ins,
           const std::vector<OperandDesc> &outs, std::string &error)
      : p(p), ins(ins), outs(outs), error(error) {}

  bool run();

private:
  template <typename... Parts> bool fail(const Parts &...parts) {
    std::ostringstream os;
    (os << ... << parts);
    error = os.str();
    return false;
  }
  std::string where(size_t i) const {
    const FusedInstructionDesc &in = p.instructions[i];
    return "instruction " + std::to_string(i) + " ('" + opKindName(in.kind) +
           "'" + (in.loc.empty() ? "" : " at " + in.loc) + "): ";
  }
  const Shape &shapeOf(const FusedValueRef &v) const {
    return v.instruction < 0 ? ins[v.index].shape
                             : p.instructions[v.instruction].shapes[v.index];
  }
  DType dtypeOf(const FusedValueRef &v) const {
    return v.instruction < 0 ? ins[v.index].dtype
                             : p.instructions[v.instruction].dtypes[v.index];
  }
  bool getInt(const FusedInstructionDesc &in, const char *name, int64_t &v,
              bool required, int64_t byDefault = 0);
  bool getFloat(const FusedInstructionDesc &in, const char *name, double &v,
                double byDefault);
  bool getInts(const FusedInstructionDesc &in, const char *name, Shape &v,
               bool required);
  bool getBool(const FusedInstructionDesc &in, const char *name, bool &v);
  bool checkRefs();
  bool checkInstruction(size_t i);
  bool deriveKind();
  bool analyzeHorizontal();
  bool analyzeTiled();
  /// The (node, result) that computes value `v` at map `m` of the
  /// iteration index; -1 after an error.
  std::pair<int, int> valueAt(const FusedValueRef &v, const IndexMap &m);
  int addNode(FusionNode node);
  Access accessOf(const Shape &strides, const IndexMap &m) const;
  bool composeReshape(const Shape &in, const Shape &out, const IndexMap &m,
                      IndexMap &result);

  FusedProgramDesc &p;
  const std::vector<OperandDesc> &ins, &outs;
  std::string &error;
  FusionAnalysis a;
  size_t rank = 0; ///< of the iteration space
  std::map<std::string, int> nodeByKey;
  /// Instructions whose results are read by another instruction.
  std::vector<bool> used;
};

bool Analyzer::getInt(const FusedInstructionDesc &in, const char *name,
                      int64_t &v, bool required, int64_t byDefault) {
  const AttrValue *a = in.attrs.find(name);
  if (!a) {
    v = byDefault;
    return !required || fail("missing attribute '", name, "'");
  }
  if (const auto *i = std::get_if<int64_t>(a)) {
    v = *i;
    return true;
  }
  return fail("attribute '", name, "' is not an integer");
}

bool Analyzer::getFloat(const FusedInstructionDesc &in, const char *name,
                        double &v, double byDefault) {
  const AttrValue *a = in.attrs.find(name);
  v = byDefault;
  if (!a)
    return true;
  if (const auto *f = std::get_if<double>(a))
    return v = *f, true;
  if (const auto *i = std::get_if<int64_t>(a))
    return v = static_cast<double>(*i), true;
  return fail("attribute '", name, "' is not a number");
}

bool Analyzer::getInts(const FusedInstructionDesc &in, const char *name,
                       Shape &v, bool required) {
  const AttrValue *a = in.attrs.find(name);
  if (!a)
    return !required || fail("missing attribute '", name, "'");
  if (const auto *l = std::get_if<std::vector<int64_t>>(a))
    return v = *l, true;
  return fail("attribute '", name, "' is not a list of integers");
}

bool Analyzer::getBool(const FusedInstructionDesc &in, const char *name,
                       bool &v) {
  const AttrValue *a = in.attrs.find(name);
  v = false;
  if (!a)
    return true;
  if (const auto *b = std::get_if<bool>(a))
    return v = *b, true;
  return fail("attribute '", name, "' is not a bool");
}

bool Analyzer::checkRefs() {
  used.assign(p.instructions.size(), false);
  auto check = [&](const FusedValueRef &v, size_t before,
                   const std::string &what) {
    if (v.instruction < 0) {
      if (v.instruction != -1 || v.index < 0 ||
          v.index >= static_cast<int>(ins.size()))
        return fail(what, "refers to kernel input ", v.index, " of ",
                    ins.size());
      return true;
    }
    if (static_cast<size_t>(v.instruction) >= before)
      return fail(what, "refers to instruction ", v.instruction,
                  ", which does not come before it");
    const FusedInstructionDesc &def = p.instructions[v.instruction];
    if (v.index < 0 || v.index >= static_cast<int>(def.shapes.size()))
      return fail(what, "refers to result ", v.index, " of instruction ",
                  v.instruction, ", which has ", def.shapes.size());
    return true;
  };
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    const FusedInstructionDesc &in = p.instructions[i];
    if (in.dtypes.size() != in.shapes.size())
      return fail(where(i), "has ", in.dtypes.size(), " result dtypes but ",
                  in.shapes.size(), " result shapes");
    Arity ar = arityOf(in.kind);
    int n = static_cast<int>(in.operands.size());
    int r = static_cast<int>(in.shapes.size());
    if (n < ar.minIns || (ar.maxIns >= 0 && n > ar.maxIns))
      return fail(where(i), "has ", n, " operands");
    if (r < ar.minOuts || (ar.maxOuts >= 0 && r > ar.maxOuts))
      return fail(where(i), "has ", r, " results");
    for (size_t o = 0; o < in.operands.size(); ++o) {
      if (!check(in.operands[o], i,
                 where(i) + "operand #" + std::to_string(o) + " "))
        return false;
      if (in.operands[o].instruction >= 0)
        used[in.operands[o].instruction] = true;
    }
  }
  if (p.instructions.empty())
    return fail("the program has no instructions");
  if (p.yields.size() != outs.size())
    return fail("the program yields ", p.yields.size(),
                " values for a kernel with ", outs.size(), " outputs");
  for (size_t y = 0; y < p.yields.size(); ++y) {
    std::string what = "yield #" + std::to_string(y) + " ";
    if (!check(p.yields[y], p.instructions.size(), what))
      return false;
    if (shapeOf(p.yields[y]) != outs[y].shape ||
        dtypeOf(p.yields[y]) != outs[y].dtype)
      return fail(what, "is ", cpu::typeName(dtypeOf(p.yields[y])), " ",
                  shapeText(shapeOf(p.yields[y])), " but kernel output #", y,
                  " is ", cpu::typeName(outs[y].dtype), " ",
                  shapeText(outs[y].shape));
  }
  return true;
}

bool Analyzer::checkInstruction(size_t i) {
  const FusedInstructionDesc &in = p.instructions[i];
  std::string w = where(i);
  auto failHere = [&](auto... parts) { return fail(w, parts...); };
  OpKind k = in.kind;
  bool optimizer = k == OpKind::AdamW || k == OpKind::Sgd;
  if (!isPointwise(k) && !isRowOp(k) && k != OpKind::Matmul && !optimizer)
    return failHere("this op cannot be part of a fused kernel");
  if (optimizer)
    return true; // checked by its own kernel when it runs
  for (DType t : in.dtypes)
    if (!isFloat(t))
      return failHere("a fused kernel computes float values only, not ",
                      cpu::typeName(t));
  auto opShape = [&](size_t o) -> const Shape & {
    return shapeOf(in.operands[o]);
  };
  for (size_t o = 0; o < in.operands.size(); ++o)
    if (!isFloat(dtypeOf(in.operands[o])))
      return failHere("operand #", o, " is ",
                      cpu::typeName(dtypeOf(in.operands[o])),
                      "; a fused kernel computes float values only");
  const Shape &result = in.shapes[0];
  auto expect = [&](const Shape &want) {
    if (result == want)
      return true;
    return failHere("result shape ", shapeText(result), " should be ",
                    shapeText(want));
  };
  auto sameDtype = [&](size_t o) {
    if (dtypeOf(in.operands[o]) == in.dtypes[0] || k == OpKind::Cast)
      return true;
    return failHere("operand #", o, " is ", cpu::typeName(dtypeOf(in.operands[o])),
                    " but the result is ", cpu::typeName(in.dtypes[0]));
  };
  if (const ElementwiseSpec *spec = elementwiseSpec(k)) {
    for (size_t o = 0; o < in.operands.size(); ++o)
      if (!sameDtype(o))
        return false;
    if (spec->arity == 1 || spec->sameShape) {
      for (size_t o = 0; o < in.operands.size(); ++o)
        if (opShape(o) != result)
          return failHere("operand #", o, " has shape ", shapeText(opShape(o)),
                          ", not the result's ", shapeText(result));
      return true;
    }
    Shape b;
    if (!broadcastShapes(opShape(0), opShape(1), b))
      return failHere("operand shapes ", shapeText(opShape(0)), " and ",
                      shapeText(opShape(1)), " do not broadcast");
    return expect(b);
  }
  switch (k) {
  case OpKind::Cast:
    return expect(opShape(0));
  case OpKind::Select:
    if (!opShape(0).empty())
      return failHere("the condition must be rank 0");
    return sameDtype(1) && sameDtype(2) && expect(opShape(1)) &&
           (opShape(2) == result ||
            failHere("false_value has shape ", shapeText(opShape(2))));
  case OpKind::Splat: {
    double v;
    if (!in.attrs.find("value"))
      return failHere("missing attribute 'value'");
    return getFloat(in, "value", v, 0) || (error = w + error, false);
  }
  case OpKind::Constant: {
    const AttrValue *v = in.attrs.find("value");
    const auto *bytes = v ? std::get_if<std::string>(v) : nullptr;
    size_t size = dtypeSize(in.dtypes[0]);
    size_t n = static_cast<size_t>(numElements(result));
    if (!bytes || (bytes->size() != n * size && bytes->size() != size))
      return failHere("'value' must hold the raw bytes of ", n,
                      " elements (or of one)");
    return true;
  }
  case OpKind::Reshape:
    return sameDtype(0) && (numElements(opShape(0)) == numElements(result) ||
                            failHere("reshape changes the element count"));
  case OpKind::Transpose: {
    Shape perm;
    if (!getInts(in, "permutation", perm, true))
      return fail(w, error);
    const Shape &s = opShape(0);
    std::vector<bool> seen(s.size(), false);
    if (perm.size() != s.size())
      return failHere("permutation has ", perm.size(), " entries");
    Shape want;
    for (int64_t d : perm) {
      if (d < 0 || d >= static_cast<int64_t>(s.size()) || seen[d])
        return failHere("not a permutation");
      seen[d] = true;
      want.push_back(s[d]);
    }
    return sameDtype(0) && expect(want);
  }
  case OpKind::BroadcastTo: {
    const Shape &s = opShape(0);
    Shape b;
    if (s.size() > result.size() || !broadcastShapes(s, result, b) ||
        b != result)
      return failHere(shapeText(s), " does not broadcast to ",
                      shapeText(result));
    return sameDtype(0);
  }
  case OpKind::Slice: {
    const Shape &s = opShape(0);
    Shape offsets, sizes, steps(s.size(), 1);
    if (!getInts(in, "offsets", offsets, true) ||
        !getInts(in, "sizes", sizes, true) ||
        !getInts(in, "strides", steps, false))
      return fail(w, error);
    if (offsets.size() != s.size() || sizes.size() != s.size() ||
        steps.size() != s.size())
      return failHere("offsets, sizes and strides need one entry per "
                      "dimension");
    for (size_t d = 0; d < s.size(); ++d)
      if (offsets[d] < 0 || sizes[d] < 1 || steps[d] < 1 ||
          offsets[d] >= s[d] || (sizes[d] - 1) > (s[d] - 1 - offsets[d]) / steps[d])
        return failHere("slice along dimension ", d, " reads past its size");
    return sameDtype(0) && expect(sizes);
  }
  case OpKind::Matmul: {
    const Shape &l = opShape(0), &r = opShape(1);
    if (l.size() < 2 || r.size() < 2)
      return failHere("operands must have rank >= 2");
    bool ta, tb;
    if (!getBool(in, "transpose_lhs", ta) || !getBool(in, "transpose_rhs", tb))
      return fail(w, error);
    size_t lr = l.size(), rr = r.size();
    int64_t m = ta ? l[lr - 1] : l[lr - 2], kk = ta ? l[lr - 2] : l[lr - 1];
    int64_t k2 = tb ? r[rr - 1] : r[rr - 2], n = tb ? r[rr - 2] : r[rr - 1];
    if (kk != k2)
      return failHere("contracting dimensions differ: ", kk, " vs ", k2);
    Shape batch;
    if (!broadcastShapes(Shape(l.begin(), l.end() - 2),
                         Shape(r.begin(), r.end() - 2), batch))
      return failHere("batch dimensions do not broadcast");
    batch.push_back(m);
    batch.push_back(n);
    return sameDtype(0) && sameDtype(1) && expect(batch);
  }
  default:
    break;
  }
  // The row ops: over the last axis only.
  const Shape &x = opShape(0);
  if (x.empty())
    return failHere("a row op needs rank >= 1");
  Shape rowShape(x.begin(), x.end() - 1);
  int64_t last = static_cast<int64_t>(x.size()) - 1;
  switch (k) {
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
  case OpKind::SoftmaxGrad:
  case OpKind::LogSoftmaxGrad: {
    int64_t axis = 0;
    if (!getInt(in, "axis", axis, true))
      return fail(w, error);
    if (axis != last && axis != -1)
      return failHere("a fused kernel normalizes over the last axis only");
    for (size_t o = 0; o < in.operands.size(); ++o)
      if (!sameDtype(o) || opShape(o) != x)
        return failHere("operands must have one shape");
    return expect(x);
  }
  case OpKind::LayerNorm:
  case OpKind::RmsNorm: {
    for (size_t o = 1; o < in.operands.size(); ++o)
      if (opShape(o) != Shape{x.back()} || !sameDtype(o))
        return failHere("weights must be [", x.back(), "] of the input's type");
    if (!sameDtype(0) || !expect(x))
      return false;
    for (size_t r = 1; r < in.shapes.size(); ++r)
      if (in.shapes[r] != rowShape || in.dtypes[r] != DType::F32)
        return failHere("statistics must be f32 ", shapeText(rowShape));
    return true;
  }
  case OpKind::ReduceSum:
  case OpKind::ReduceMax:
  case OpKind::ReduceMean: {
    Shape axes;
    bool keep;
    if (!getInts(in, "axes", axes, true) || !getBool(in, "keepdims", keep))
      return fail(w, error);
    Shape want;
    for (size_t d = 0; d < x.size(); ++d) {
      bool reduced = std::find(axes.begin(), axes.end(),
                               static_cast<int64_t>(d)) != axes.end();
      if (!reduced)
        want.push_back(x[d]);
      else if (keep)
        want.push_back(1);
    }
    for (int64_t ax : axes)
      if (ax < 0 || ax > last)
        return failHere("axis ", ax, " out of range");
    return sameDtype(0) && expect(want);
  }
  default:
    return failHere("this op cannot be part of a fused kernel");
  }
}

bool Analyzer::deriveKind() {
  size_t optimizers = 0, matmuls = 0, rowOps = 0;
  for (const FusedInstructionDesc &in : p.instructions) {
    optimizers += in.kind == OpKind::AdamW || in.kind == OpKind::Sgd;
    matmuls += in.kind == OpKind::Matmul;
    rowOps += isRowOp(in.kind);
  }
  if (optimizers) {
    if (optimizers != p.instructions.size())
      return fail("optimizer updates fuse only with each other (a "
                  "horizontal kernel)");
    a.kind = FusionKind::Horizontal;
    return true;
  }
  if (matmuls) {
    if (matmuls > 1 || p.instructions[0].kind != OpKind::Matmul)
      return fail("a matmul kernel has one mw.matmul, its first "
                  "instruction");
    a.kind = FusionKind::Matmul;
    return true;
  }
  // Reductions over all axes but the last are column sums of a loop kernel;
  // anything else reducing or normalizing makes a row kernel.
  bool row = false;
  for (const FusedInstructionDesc &in : p.instructions) {
    if (!isRowOp(in.kind))
      continue;
    bool columnSum = false;
    if (in.kind == OpKind::ReduceSum) {
      Shape axes;
      getInts(in, "axes", axes, false);
      const Shape &x = shapeOf(in.operands[0]);
      columnSum = x.size() >= 2 && axes.size() == x.size() - 1;
      for (size_t d = 0; columnSum && d < axes.size(); ++d)
        columnSum = axes[d] == static_cast<int64_t>(d);
    }
    row |= !columnSum;
  }
  a.kind = row ? FusionKind::Row : FusionKind::Loop;
  return true;
}

bool Analyzer::analyzeHorizontal() {
  a.groupIns.resize(p.instructions.size());
  a.groupOuts.resize(p.instructions.size());
  for (size_t i = 0; i < p.instructions.size(); ++i) {
    const FusedInstructionDesc &in = p.instructions[i];
    for (const FusedValueRef &v : in.operands) {
      if (v.instruction >= 0)
        return fail(where(i), "an update of a horizontal kernel reads kernel "
                              "inputs only");
      a.groupIns[i].push_back(v.index);
    }
    a.groupOuts[i].assign(in.shapes.size(), -1);
  }
  for (size_t y = 0; y < p.yields.size(); ++y) {
    const FusedValueRef &v = p.yields[y];
    if (v.instruction < 0)
      return fail("yield #", y, " of a horizontal kernel is not an update's "
                                "result");
    int &slot = a.groupOuts[v.instruction][v.index];
    if (slot >= 0)
      return fail("yield #", y, " yields a result yielded before");
    slot = static_cast<int>(y);
  }
  for (size_t i = 0; i < p.instructions.size(); ++i)
    for (size_t r = 0; r < a.groupOuts[i].size(); ++r)
      if (a.groupOuts[i][r] < 0)
        return fail(where(i), "result #", r, " is not yielded");
  a.identityOnly.assign(ins.size(), true);
  return true;
}

int Analyzer::addNode(FusionNode node) {
  a.nodes.push_back(std::move(node));
  return static_cast<int>(a.nodes.size()) - 1;
}

Access Analyzer::accessOf(const Shape &strides, const IndexMap &m) const {
  Access acc;
  for (size_t e = 0; e < m.rank(); ++e)
    addScaled(acc, m.rows[e], strides[e]);
  // Along a row: a plain stride, or a table when the last dimension splits.
  std::vector<IndexTerm> row;
  bool split = false;
  for (const IndexTerm &t : acc.terms)
    if (rank && t.dim == rank - 1) {
      row.push_back(t);
      split |= t.div != 1 || t.mod != 0;
    }
  if (!split) {
    for (const IndexTerm &t : row)
      acc.colStride += t.coef;
    return acc;
  }
  acc.colTable.assign(static_cast<size_t>(a.cols), 0);
  for (int64_t c = 0; c < a.cols; ++c)
    for (const IndexTerm &t : row)
      acc.colTable[c] += t.coef * (t.mod ? (c / t.div) % t.mod : c / t.div);
  return acc;
}

bool Analyzer::composeReshape(const Shape &in, const Shape &out,
                              const IndexMap &m, IndexMap &result) {
  // The output's linear (row-major) index as a sum of terms of the
  // iteration index, split into the input's dimensions: each term goes to
  // the dimension whose stride divides its coefficient, and a term that
  // would carry past that dimension's size is split into digits (a merge
  // of dimensions: [B, S, H, D] -> [B, S, H*D]).
  Shape outStrides = rowMajor(out), inStrides = rowMajor(in);
  IndexExpr lin;
  for (size_t e = 0; e < m.rank(); ++e)
    addScaled(lin, m.rows[e], outStrides[e]);
  result = zeroMap(in.size());
  int64_t rest = lin.offset;
  if (rest < 0 || (!in.empty() && rest >= numElements(in)))
    return false;
  for (size_t e = 0; e < in.size(); ++e) {
    result.rows[e].offset = rest / inStrides[e];
    rest %= inStrides[e];
  }
  std::vector<IndexTerm> work(lin.terms.rbegin(), lin.terms.rend());
  while (!work.empty()) {
    IndexTerm t = work.back();
    work.pop_back();
    int64_t range = termRange(t, a.iterShape[t.dim]);
    if (range <= 1)
      continue;
    if (t.coef < 0)
      return false;
    size_t e = 0;
    while (e < in.size() && t.coef % inStrides[e] != 0)
      ++e;
    if (e == in.size())
      return false;
    int64_t q = t.coef / inStrides[e];
    if (q * (range - 1) < in[e]) {
      result.rows[e].terms.push_back({t.dim, t.div, t.mod, q});
      continue;
    }
    // A digit per input dimension: the low part stays here, the rest moves
    // up a dimension.
    int64_t size = in[e];
    if (q != 1 || range % size != 0 || result.rows[e].offset != 0 ||
        (t.mod && t.mod % size != 0))
      return false;
    result.rows[e].terms.push_back({t.dim, t.div, size, 1});
    work.push_back({t.dim, t.div * size, t.mod ? t.mod / size : 0,
                    t.coef * size});
  }
  for (size_t e = 0; e < in.size(); ++e) {
    normalize(result.rows[e]);
    int64_t hi = result.rows[e].offset;
    for (const IndexTerm &t : result.rows[e].terms)
      hi += t.coef * (termRange(t, a.iterShape[t.dim]) - 1);
    if (hi >= in[e])
      return false;
  }
  return true;
}

std::pair<int, int> Analyzer::valueAt(const FusedValueRef &v,
                                      const IndexMap &m) {
  const std::pair<int, int> bad{-1, 0};
  if (v.instruction < 0) {
    std::string key = "in" + std::to_string(v.index) + "@" + m.key();
    if (auto it = nodeByKey.find(key); it != nodeByKey.end())
      return {it->second, 0};
    FusionNode node;
    node.kind = NodeKind::Input;
    node.instruction = v.index;
    node.dtype = ins[v.index].dtype;
    node.access = accessOf(ins[v.index].strides, m);
    node.full = {node.access.alongRow()};
    if (!(m == identityMap(rank) && ins[v.index].shape == a.iterShape))
      a.identityOnly[v.index] = false;
    int id = addNode(std::move(node));
    nodeByKey[key] = id;
    return {id, 0};
  }
  const FusedInstructionDesc &in = p.instructions[v.instruction];
  std::string w = where(v.instruction);
  const Shape &result = in.shapes[v.index];
  auto opShape = [&](size_t o) -> const Shape & {
    return shapeOf(in.operands[o]);
  };
  // Shape ops fold into the map.
  switch (in.kind) {
  case OpKind::Transpose: {
    Shape perm;
    getInts(in, "permutation", perm, true);
    IndexMap inner = zeroMap(perm.size());
    for (size_t d = 0; d < perm.size(); ++d)
      inner.rows[perm[d]] = m.rows[d];
    return valueAt(in.operands[0], inner);
  }
  case OpKind::Slice: {
    const Shape &s = opShape(0);
    Shape offsets, sizes, steps(s.size(), 1);
    getInts(in, "offsets", offsets, true);
    getInts(in, "strides", steps, false);
    IndexMap inner = zeroMap(s.size());
    for (size_t e = 0; e < s.size(); ++e) {
      addScaled(inner.rows[e], m.rows[e], steps[e]);
      inner.rows[e].offset += offsets[e];
    }
    return valueAt(in.operands[0], inner);
  }
  case OpKind::Reshape: {
    IndexMap inner;
    if (!composeReshape(opShape(0), result, m, inner)) {
      fail(w, "this reshape is read at indices that are no affine function "
              "of the iteration index; it cannot be fused");
      return bad;
    }
    return valueAt(in.operands[0], inner);
  }
  default:
    break;
  }
  // A broadcast operand's map: missing leading dimensions and size-1
  // dimensions the result broadcasts read 0. A size-1 dimension the result
  // also has keeps the result's expression (always 0 in range), so an
  // operand of the result's shape reads at the identity (a batch of 1).
  auto broadcastMap = [&](const Shape &s) {
    IndexMap inner = zeroMap(s.size());
    size_t lead = result.size() - s.size();
    for (size_t e = 0; e < s.size(); ++e)
      if (s[e] != 1 || result[e + lead] == 1)
        inner.rows[e] = m.rows[e + lead];
    return inner;
  };
  if (in.kind == OpKind::BroadcastTo)
    return valueAt(in.operands[0], broadcastMap(opShape(0)));

  if (in.kind == OpKind::Constant) {
    std::string key = "c" + std::to_string(v.instruction) + "@" + m.key();
    if (auto it = nodeByKey.find(key); it != nodeByKey.end())
      return {it->second, 0};
    const auto &bytes = std::get<std::string>(*in.attrs.find("value"));
    FusionNode node;
    node.kind = NodeKind::Constant;
    node.instruction = v.instruction;
    node.dtype = in.dtypes[0];
    node.constData = bytes.data();
    Shape strides = bytes.size() == dtypeSize(node.dtype)
                        ? Shape(result.size(), 0)
                        : rowMajor(result);
    node.access = accessOf(strides, m);
    node.full = {node.access.alongRow()};
    int id = addNode(std::move(node));
    nodeByKey[key] = id;
    return {id, 0};
  }

  bool rowOp = isRowOp(in.kind) && a.kind == FusionKind::Row;
  std::string key = std::to_string(v.instruction) + "@" +
                    (rowOp || in.kind == OpKind::Matmul || in.kind == OpKind::Splat
                         ? std::string()
                         : m.key());
  auto found = nodeByKey.find(key);
  if (rowOp || in.kind == OpKind::Matmul) {
    // Computed once over whole rows; read at the iteration index (results
    // of the iteration shape) or at its row (row statistics).
    const Shape rowShape(a.iterShape.begin(), a.iterShape.end() - (rank ? 1 : 0));
    bool isFull = result == a.iterShape;
    bool ok = isFull ? m == identityMap(rank)
                     : (result == rowShape && m == rowMap(rank, false)) ||
                           (rank && result.size() == rank && result.back() == 1 &&
                            Shape(result.begin(), result.end() - 1) == rowShape &&
                            m == rowMap(rank, true));
    if (!ok) {
      fail(w, "result #", v.index, " ", shapeText(result),
           " is read at other indices than the iteration's ",
           shapeText(a.iterShape), " (or its rows)");
      return bad;
    }
    if (found != nodeByKey.end())
      return {found->second, v.index};
    FusionNode node;
    node.kind = rowOp ? NodeKind::RowOp : NodeKind::Matmul;
    node.op = in.kind;
    node.instruction = v.instruction;
    if (in.kind == OpKind::Matmul) {
      node.full = {true};
    } else {
      if (in.kind == OpKind::ReduceSum || in.kind == OpKind::ReduceMax ||
          in.kind == OpKind::ReduceMean) {
        Shape axes;
        getInts(in, "axes", axes, false);
        if (axes != Shape{static_cast<int64_t>(rank) - 1}) {
          fail(w, "a row kernel reduces over the last axis only");
          return bad;
        }
      }
      if (opShape(0) != a.iterShape) {
        fail(w, "a row op of this kernel must read the iteration shape ",
             shapeText(a.iterShape), ", not ", shapeText(opShape(0)));
        return bad;
      }
      for (size_t o = 0; o < in.operands.size(); ++o) {
        const Shape &s = opShape(o);
        IndexMap om = s == a.iterShape ? identityMap(rank) : zeroMap(1);
        if (s != a.iterShape)
          om.rows[0] = dimExpr(rank - 1); // gamma, beta: [C] along the row
        auto operand = valueAt(in.operands[o], om);
        if (operand.first < 0)
          return bad;
        // A row op reads whole rows: even a value that is the same along a
        // row is expanded into one (every node's loop can write either).
        a.nodes[operand.first].full[operand.second] = true;
        node.operands.push_back(operand);
      }
      for (const Shape &s : in.shapes)
        node.full.push_back(s == a.iterShape);
      double eps = 0;
      if (in.kind == OpKind::LayerNorm || in.kind == OpKind::RmsNorm)
        getFloat(in, "epsilon", eps, in.kind == OpKind::LayerNorm ? 1e-5 : 1e-6);
      node.value = static_cast<float>(eps);
      node.logForm = in.kind == OpKind::LogSoftmax ||
                     in.kind == OpKind::LogSoftmaxGrad;
    }
    int id = addNode(std::move(node));
    nodeByKey[key] = id;
    return {id, v.index};
  }
  if (isRowOp(in.kind)) {
    fail(w, "a column reduction may only be yielded, not read by another "
            "instruction");
    return bad;
  }
  if (found != nodeByKey.end())
    return {found->second, 0};
  FusionNode node;
  node.op = in.kind;
  node.instruction = v.instruction;
  if (in.kind == OpKind::Splat) {
    double value;
    getFloat(in, "value", value, 0);
    node.kind = NodeKind::Splat;
    node.value = formulas::roundOnceTo(
        in.dtypes[0] == DType::BF16  ? formulas::FloatFormat::BF16
        : in.dtypes[0] == DType::F16 ? formulas::FloatFormat::F16
                                     : formulas::FloatFormat::F32,
        value);
    node.full = {false};
    int id = addNode(std::move(node));
    nodeByKey[key] = id;
    return {id, 0};
  }
  if (const ElementwiseSpec *spec = elementwiseSpec(in.kind)) {
    node.kind = spec->arity == 1 ? NodeKind::Unary : NodeKind::Binary;
    for (int i = 0; i < spec->numParams; ++i) {
      const ParamSpec &ps = spec->params[i];
      node.params[i] = ps.byDefault;
      const AttrValue *av = in.attrs.find(ps.name);
      if (!av) {
        if (ps.required) {
          fail(w, "missing attribute '", ps.name, "'");
          return bad;
        }
        continue;
      }
      if (ps.kind == ParamKind::Enum) {
        const auto *s = std::get_if<std::string>(av);
        std::string cases = ps.cases;
        int index = 0;
        bool matched = false;
        for (size_t at = 0; s && at <= cases.size(); ++index) {
          size_t end = cases.find(' ', at);
          if (end == std::string::npos)
            end = cases.size();
          if (cases.compare(at, end - at, *s) == 0) {
            node.params[i] = index;
            matched = true;
            break;
          }
          at = end + 1;
        }
        if (!matched) {
          fail(w, "attribute '", ps.name, "' has no valid value");
          return bad;
        }
      } else if (const auto *d = std::get_if<double>(av)) {
        node.params[i] = *d;
      } else if (const auto *n = std::get_if<int64_t>(av)) {
        node.params[i] = static_cast<double>(*n);
      } else if (const auto *b = std::get_if<bool>(av)) {
        node.params[i] = *b;
      }
    }
  } else if (in.kind == OpKind::Cast) {
    node.kind = NodeKind::Cast;
    node.castTo = in.dtypes[0];
  } else if (in.kind == OpKind::Select) {
    node.kind = NodeKind::Select;
  } else {
    fail(w, "this op cannot be part of a ", fusionKindName(a.kind),
         " kernel");
    return bad;
  }
  bool full = false;
  for (size_t o = 0; o < in.operands.size(); ++o) {
    const Shape &s = opShape(o);
    IndexMap om = in.kind == OpKind::Select && o == 0 ? zeroMap(0)
                                                      : broadcastMap(s);
    auto operand = valueAt(in.operands[o], om);
    if (operand.first < 0)
      return bad;
    full |= a.nodes[operand.first].full[operand.second];
    node.operands.push_back(operand);
  }
  node.full = {full};
  int id = addNode(std::move(node));
  nodeByKey[key] = id;
  return {id, 0};
}

bool Analyzer::analyzeTiled() {
  // The iteration shape (docs/fusion.md): the matmul's result, the shape the
  // row ops normalize, or the first yielded value that is not a column sum.
  auto isColumnSum = [&](const FusedValueRef &v) {
    if (v.instruction < 0)
      return false;
    const FusedInstructionDesc &in = p.instructions[v.instruction];
    if (in.kind != OpKind::ReduceSum)
      return false;
    Shape axes;
    getInts(in, "axes", axes, false);
    const Shape &x = shapeOf(in.operands[0]);
    bool ok = x.size() >= 2 && axes.size() == x.size() - 1;
    for (size_t d = 0; ok && d < axes.size(); ++d)
      ok = axes[d] == static_cast<int64_t>(d);
    return ok && a.kind != FusionKind::Row;
  };
  if (a.kind == FusionKind::Matmul) {
    a.iterShape = p.instructions[0].shapes[0];
  } else if (a.kind == FusionKind::Row) {
    for (const FusedInstructionDesc &in : p.instructions)
      if (isRowOp(in.kind)) {
        a.iterShape = shapeOf(in.operands[0]);
        break;
      }
  } else {
    bool found = false;
    for (const FusedValueRef &v : p.yields)
      if (!isColumnSum(v)) {
        a.iterShape = shapeOf(v);
        found = true;
        break;
      }
    if (!found)
      a.iterShape = shapeOf(p.instructions[p.yields[0].instruction].operands[0]);
  }
  rank = a.iterShape.size();
  a.cols = rank ? a.iterShape.back() : 1;
  a.rows = rank ? numElements(Shape(a.iterShape.begin(), a.iterShape.end() - 1))
                : 1;
  a.identityOnly.assign(ins.size(), true);
  for (size_t i = 1; i < p.instructions.size(); ++i)
    if (a.kind == FusionKind::Matmul && isRowOp(p.instructions[i].kind) &&
        !isColumnSum({static_cast<int>(i), 0}))
      return fail(where(i), "a matmul kernel's epilogue is elementwise (and "
                            "column sums)");

  if (a.kind == FusionKind::Matmul) {
    const FusedInstructionDesc &mm = p.instructions[0];
    for (int o = 0; o < 2; ++o)
      if (mm.operands[o].instruction >= 0)
        return fail(where(0), "the matmul reads kernel inputs only");
    FusionMatmul &m = a.matmul;
    getBool(mm, "transpose_lhs", m.transA);
    getBool(mm, "transpose_rhs", m.transB);
    m.lhs = mm.operands[0].index;
    m.rhs = mm.operands[1].index;
    const Shape &l = ins[m.lhs].shape, &r = ins[m.rhs].shape;
    size_t lr = l.size(), rr = r.size();
    m.m = m.transA ? l[lr - 1] : l[lr - 2];
    m.k = m.transA ? l[lr - 2] : l[lr - 1];
    m.n = m.transB ? r[rr - 2] : r[rr - 1];
    Shape lb(l.begin(), l.end() - 2), rb(r.begin(), r.end() - 2), batch;
    broadcastShapes(lb, rb, batch);
    m.lhsMatrices = numElements(lb);
    m.rhsMatrices = numElements(rb);
    // Each batch element's lhs and rhs matrix (broadcast batch dimensions).
    Shape bs = rowMajor(batch), ls = rowMajor(lb), rs = rowMajor(rb);
    for (int64_t b = 0, nb = numElements(batch); b < nb; ++b) {
      int64_t li = 0, ri = 0, rest = b;
      for (size_t d = 0; d < batch.size(); ++d) {
        int64_t idx = rest / bs[d];
        rest %= bs[d];
        size_t ld = d + lb.size() - batch.size(), rd = d + rb.size() - batch.size();
        if (d >= batch.size() - lb.size() && lb[ld] != 1)
          li += idx * ls[ld];
        if (d >= batch.size() - rb.size() && rb[rd] != 1)
          ri += idx * rs[rd];
      }
      m.lhsBatch.push_back(li);
      m.rhsBatch.push_back(ri);
    }
    auto dense = [&](const OperandDesc &o) {
      return o.dtype == DType::F32 && o.strides == rowMajor(o.shape);
    };
    m.denseLhs = dense(ins[m.lhs]);
    m.denseRhs = dense(ins[m.rhs]);
    // Matrices of unit-stride rows: sgemm takes them with a leading
    // dimension, no copy (the batch element's matrix by its strides).
    auto view = [&](const OperandDesc &o, const std::vector<int64_t> &matrix,
                    int64_t &ld, std::vector<int64_t> &offsets) {
      size_t r = o.shape.size();
      int64_t rows = o.shape[r - 2], cols = o.shape[r - 1];
      if (o.dtype != DType::F32 || (cols != 1 && o.strides[r - 1] != 1) ||
          std::any_of(o.strides.begin(), o.strides.end(),
                      [](int64_t st) { return st < 0; }))
        return false;
      ld = rows == 1 ? std::max<int64_t>(cols, 1) : o.strides[r - 2];
      if (ld < std::max<int64_t>(cols, 1))
        return false;
      Shape ob(o.shape.begin(), o.shape.end() - 2), obs = rowMajor(ob);
      offsets.clear();
      for (int64_t mi : matrix) {
        int64_t off = 0;
        for (size_t d = 0; d < ob.size(); ++d)
          off += (mi / obs[d]) % ob[d] * o.strides[d];
        offsets.push_back(off);
      }
      return true;
    };
    m.viewLhs = view(ins[m.lhs], m.lhsBatch, m.lda, m.lhsOffsets);
    m.viewRhs = view(ins[m.rhs], m.rhsBatch, m.ldb, m.rhsOffsets);
    a.identityOnly[m.lhs] = a.identityOnly[m.rhs] = false;
  }

  // Tiles of whole rows; a matmul's tiles stay inside one batch matrix.
  a.tileRows = std::max<int64_t>(1, kTileElements / std::max<int64_t>(a.cols, 1));
  if (a.kind == FusionKind::Matmul)
    a.tileRows = std::min<int64_t>(std::max<int64_t>(a.tileRows, kMatmulTileRows),
                                   std::max<int64_t>(a.matmul.m, 1));
  a.tileRows = std::min(a.tileRows, std::max<int64_t>(a.rows, 1));

  for (size_t y = 0; y < p.yields.size(); ++y) {
    const FusedValueRef &v = p.yields[y];
    const Shape &s = shapeOf(v);
    FusionStore st;
    st.out = static_cast<int>(y);
    st.dtype = outs[y].dtype;
    if (isColumnSum(v)) {
      const FusedInstructionDesc &red = p.instructions[v.instruction];
      if (shapeOf(red.operands[0]) != a.iterShape)
        return fail(where(v.instruction), "a column sum must reduce a value "
                                          "of the iteration shape ",
                    shapeText(a.iterShape));
      std::string key = "sum" + std::to_string(v.instruction);
      auto it = nodeByKey.find(key);
      int id;
      if (it == nodeByKey.end()) {
        auto operand = valueAt(red.operands[0], identityMap(rank));
        if (operand.first < 0)
          return false;
        FusionNode node;
        node.kind = NodeKind::ColumnSum;
        node.op = OpKind::ReduceSum;
        node.instruction = v.instruction;
        node.operands = {operand};
        node.full = {false};
        id = addNode(std::move(node));
        nodeByKey[key] = id;
      } else {
        id = it->second;
      }
      st.node = id;
      st.columnSum = true;
      st.access.colStride = outs[y].strides.back();
      a.stores.push_back(st);
      continue;
    }
    IndexMap m;
    Shape rowShape(a.iterShape.begin(), a.iterShape.end() - (rank ? 1 : 0));
    if (s == a.iterShape) {
      m = identityMap(rank);
    } else if (a.kind == FusionKind::Row && s == rowShape) {
      m = rowMap(rank, false);
      st.row = true;
    } else if (a.kind == FusionKind::Row && rank && s.size() == rank &&
               s.back() == 1 && Shape(s.begin(), s.end() - 1) == rowShape) {
      m = rowMap(rank, true);
      st.row = true;
    } else {
      return fail("yield #", y, " has shape ", shapeText(s), ", not the ",
                  fusionKindName(a.kind), " kernel's iteration shape ",
                  shapeText(a.iterShape),
                  a.kind == FusionKind::Row ? " or its rows" : "");
    }
    auto value = valueAt(v, m);
    if (value.first < 0)
      return false;
    st.node = value.first;
    st.result = value.second;
    st.access = accessOf(outs[y].strides, m);
    a.stores.push_back(st);
  }
  for (size_t i = 0; i < p.instructions.size(); ++i)
    if (isRowOp(p.instructions[i].kind) && a.kind != FusionKind::Row &&
        used[i])
      return fail(where(i), "a column reduction may only be yielded, not "
                            "read by another instruction");

  // Scratch: a tile array per node result, a column sum's accumulators, the
  // matmul's operands as dense f32 when they are not, and the tile's row
  // indices.
  size_t floats = 0;
  size_t full = static_cast<size_t>(a.tileRows * a.cols);
  for (FusionNode &n : a.nodes) {
    n.slot.clear();
    for (bool f : n.full) {
      n.slot.push_back(floats);
      floats += n.kind == NodeKind::ColumnSum ? static_cast<size_t>(a.cols)
                : f                          ? full
                                             : static_cast<size_t>(a.tileRows);
      floats = (floats + 15) / 16 * 16; // 64-byte aligned arrays
    }
  }
  if (a.kind == FusionKind::Matmul) {
    if (!a.matmul.denseLhs && !a.matmul.viewLhs) {
      a.matmul.lhsSlot = floats;
      floats += (numElements(ins[a.matmul.lhs].shape) + 15) / 16 * 16;
    }
    if (!a.matmul.denseRhs && !a.matmul.viewRhs) {
      a.matmul.rhsSlot = floats;
      floats += (numElements(ins[a.matmul.rhs].shape) + 15) / 16 * 16;
    }
  }
  a.scratchFloats = floats;
  a.rowIndexSlot = (floats * sizeof(float) + 63) / 64 * 64 / sizeof(int64_t);
  a.cpuScratchBytes =
      a.rowIndexSlot * sizeof(int64_t) +
      static_cast<uint64_t>(a.tileRows) * std::max<size_t>(rank, 1) *
          sizeof(int64_t);
  return true;
}

bool Analyzer::run() {
  if (!checkRefs())
    return false;
  for (size_t i = 0; i < p.instructions.size(); ++i)
    if (!checkInstruction(i))
      return false;
  if (!deriveKind())
    return false;
  if (a.kind == FusionKind::Horizontal ? !analyzeHorizontal()
                                       : !analyzeTiled())
    return false;
  p.kind = a.kind;
  p.analysis = std::make_shared<FusionAnalysis>(std::move(a));
  return true;
}

} // namespace

bool detail::analyzeFusedProgram(FusedProgramDesc &program,
                                 const std::vector<OperandDesc> &ins,
                                 const std::vector<OperandDesc> &outs,
                                 std::string &error) {
  return Analyzer(program, ins, outs, error).run();
}

mwrt_status detail::checkFusedAliasing(const BoundKernel &k) {
  const FusionAnalysis &a = *k.program->analysis;
  // Every kind reads an identity-only input's element before it stores the
  // element at that index: a matmul kernel's matmul reads only its operands
  // (never identity-only) and its epilogue runs after it.
  for (size_t o = 0; o < k.outs.size(); ++o) {
    for (size_t i = 0; i < k.ins.size(); ++i) {
      const TensorRef &out = k.outs[o], &in = k.ins[i];
      if (!overlaps(out, in))
        continue;
      bool same = out.data == in.data && out.shape == in.shape &&
                  dtypeSize(out.dtype) == dtypeSize(in.dtype) &&
                  out.strides == in.strides; // bound: always explicit
      if (same && a.identityOnly[i])
        continue;
      return setError(MWRT_INVALID_ARGUMENT,
                      std::string("'mw.fusion' (") + fusionKindName(a.kind) +
                          "): result #" + std::to_string(o) +
                          " overlaps operand #" + std::to_string(i) +
                          ", which the program does not read at the "
                          "result's own index");
    }
  }
  return MWRT_OK;
}
