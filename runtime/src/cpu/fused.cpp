//===- fused.cpp - Fused kernels on the CPU -------------------------------===//
//
// Executes a fused kernel's analysed program (src/fusion.h) without
// interpreting anything per element: the iteration space is cut into tiles
// of whole rows, and each node of the program runs over the tile as one
// loop whose operation is fixed at compile time (a template instantiated
// per op, dispatched once per node and tile), reading its operands' tile
// arrays with a column stride of 1, or of 0 for a value that is the same
// along a row, and writing its own, all in the scratch buffer the session
// allocated once (DESIGN.md decision 8). Kernel inputs are gathered into the
// tile through their affine accesses (a broadcast, transpose, slice or
// reshape is only an access), yielded values are stored through the
// outputs' accesses, rounded to their dtype only there. The per-element
// formulas are the unfused kernels' (op_table.h's dispatch to
// mwrt/formulas.h, the softmax and norm loops of reductions.cpp and
// norms.cpp), and reductions add in the unfused kernels' order, so f32
// results are bit-identical to running the body's ops one by one.
// A matmul kernel computes its matmul rows tile by tile (matmulRows: OpenBLAS,
// or the evaluator's loop) and its epilogue on them; a horizontal kernel
// runs each optimizer update as its own kernel would, in place.
// Tiles are independent (each writes its own rows of the outputs), so the
// backend's worker pool (thread_pool.h) runs them in any order, each worker
// in its own copy of the tile arrays. A kernel with a column sum adds the
// tiles' rows in row order, so it splits its columns instead: each worker
// runs every tile, in order, over its own blocks of 64 columns (a matmul's
// columns of op(B), each block one sgemm of at least kBlasBlockWork), which
// leaves every element and every column's sum as one thread computes it.
//
//===----------------------------------------------------------------------===//

#include "fused.h"
#include "fusion.h"
#include "support.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace mwrt::cpu {

using detail::BoundKernel;
using detail::FusionAnalysis;
using detail::FusionNode;
using detail::NodeKind;

namespace {

/// A node result's tile array: element (row, col) at p[row * rs + col * cs];
/// cs is 0 for a value that is the same along a row.
struct Arr {
  const float *p;
  int64_t rs, cs;
};

/// Reads element `i` of a float tensor of `dtype`.
template <DType T> inline float load(const void *data, int64_t i) {
  if constexpr (T == DType::F32)
    return static_cast<const float *>(data)[i];
  else if constexpr (T == DType::BF16)
    return fromBFloat(static_cast<const uint16_t *>(data)[i]);
  else
    return fromHalf(static_cast<const uint16_t *>(data)[i]);
}

template <DType T> inline void store(void *data, int64_t i, float v) {
  if constexpr (T == DType::F32)
    static_cast<float *>(data)[i] = v;
  else if constexpr (T == DType::BF16)
    static_cast<uint16_t *>(data)[i] = toBFloat(v);
  else
    static_cast<uint16_t *>(data)[i] = toHalf(v);
}

/// The unary and binary ops with a formula, each instantiated so that the
/// op table's dispatch folds into the loop.
#define MWRT_FUSED_UNARY(X)                                                    \
  X(Neg) X(Exp) X(Log) X(Tanh) X(Sqrt) X(Rsqrt) X(Reciprocal) X(Relu)          \
  X(Sigmoid) X(Silu) X(Clamp) X(Gelu)
#define MWRT_FUSED_BINARY(X)                                                   \
  X(Add) X(Sub) X(Mul) X(Div) X(Maximum) X(ReluGrad) X(SiluGrad) X(GeluGrad)   \
  X(ClampGrad)

template <OpKind K, int CS>
void unaryLoop(float *d, int64_t drs, Arr x, int64_t nr, int64_t nc,
               const double *p) {
  for (int64_t r = 0; r < nr; ++r) {
    float *dr = d + r * drs;
    const float *xr = x.p + r * x.rs;
    for (int64_t c = 0; c < nc; ++c)
      dr[c] = applyUnaryFormula(K, xr[c * CS], p);
  }
}

template <int CS>
void unaryTile(OpKind op, float *d, int64_t drs, Arr x, int64_t nr,
               int64_t nc, const double *p) {
  switch (op) {
#define MWRT_UNARY_CASE(K)                                                     \
  case OpKind::K:                                                              \
    return unaryLoop<OpKind::K, CS>(d, drs, x, nr, nc, p);
    MWRT_FUSED_UNARY(MWRT_UNARY_CASE)
#undef MWRT_UNARY_CASE
  default: // an op added to the table later: the same formula, not unrolled
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t c = 0; c < nc; ++c)
        d[r * drs + c] = applyUnaryFormula(op, x.p[r * x.rs + c * CS], p);
  }
}

template <OpKind K, int AS, int BS>
void binaryLoop(float *d, int64_t drs, Arr a, Arr b, int64_t nr, int64_t nc,
                const double *p) {
  for (int64_t r = 0; r < nr; ++r) {
    float *dr = d + r * drs;
    const float *ar = a.p + r * a.rs, *br = b.p + r * b.rs;
    for (int64_t c = 0; c < nc; ++c)
      dr[c] = applyBinaryFormula(K, ar[c * AS], br[c * BS], p);
  }
}

template <int AS, int BS>
void binaryTile(OpKind op, float *d, int64_t drs, Arr a, Arr b, int64_t nr,
                int64_t nc, const double *p) {
  switch (op) {
#define MWRT_BINARY_CASE(K)                                                    \
  case OpKind::K:                                                              \
    return binaryLoop<OpKind::K, AS, BS>(d, drs, a, b, nr, nc, p);
    MWRT_FUSED_BINARY(MWRT_BINARY_CASE)
#undef MWRT_BINARY_CASE
  default:
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t c = 0; c < nc; ++c)
        d[r * drs + c] = applyBinaryFormula(op, a.p[r * a.rs + c * AS],
                                            b.p[r * b.rs + c * BS], p);
  }
}

/// Gathers a leaf (input or constant) into its tile array; along a row
/// the access steps by `cc`, or by `table` when it is not null.
template <DType T>
void gather(float *d, int64_t drs, const void *src, const int64_t *base,
            int64_t cc, const int64_t *table, int64_t nr, int64_t nc) {
  for (int64_t r = 0; r < nr; ++r) {
    float *dr = d + r * drs;
    int64_t b = base[r];
    if (table) {
      for (int64_t c = 0; c < nc; ++c)
        dr[c] = load<T>(src, b + table[c]);
    } else if (T == DType::F32 && cc == 1) {
      std::memcpy(dr, static_cast<const float *>(src) + b,
                  static_cast<size_t>(nc) * sizeof(float));
    } else {
      for (int64_t c = 0; c < nc; ++c)
        dr[c] = load<T>(src, b + c * cc);
    }
  }
}

/// Stores a tile array into an output, rounding to its dtype.
template <DType T>
void scatter(void *dst, const int64_t *base, int64_t cc, const int64_t *table,
             Arr v, int64_t nr, int64_t nc) {
  for (int64_t r = 0; r < nr; ++r) {
    const float *vr = v.p + r * v.rs;
    int64_t b = base[r];
    for (int64_t c = 0; c < nc; ++c)
      store<T>(dst, b + (table ? table[c] : c * cc), vr[c * v.cs]);
  }
}

/// Appends the elements of dimensions `d`.. of `t` (from element `offset`)
/// to `out` as f32, in row-major order.
template <DType T>
void widen(size_t d, const TensorRef &t, int64_t offset, float *&out) {
  if (d == t.shape.size()) {
    *out++ = load<T>(t.data, offset);
    return;
  }
  for (int64_t i = 0; i < t.shape[d]; ++i)
    widen<T>(d + 1, t, offset + i * t.strides[d], out);
}

/// One fused kernel's run: the analysis, its tensors and its scratch.
class FusedRun {
public:
  FusedRun(const BoundKernel &k, const CpuKernelOptions &options)
      : k(k), p(*k.program), a(*p.analysis), options(options),
        f(static_cast<float *>(k.scratch)), shared(f),
        rowIndex(static_cast<int64_t *>(k.scratch) + a.rowIndexSlot),
        rank(a.iterShape.size()), ncols(a.cols) {}

  mwrt_status run();

  /// This run with worker `w`'s tile arrays and row indices (worker 0's
  /// are the analysis' own; the others follow the first scratch, one
  /// workerScratchBytes each). The matmul operands' copies stay shared.
  FusedRun forWorker(int w) const {
    FusedRun r = *this;
    if (w == 0)
      return r;
    uint8_t *base = static_cast<uint8_t *>(k.scratch) + firstScratchBytes(a) +
                    static_cast<uint64_t>(w - 1) * workerScratchBytes(a);
    r.f = reinterpret_cast<float *>(base);
    r.rowIndex = reinterpret_cast<int64_t *>(base + tileArrayBytes(a));
    size_t outer = rank ? rank - 1 : 0;
    r.baseBuf = r.rowIndex + a.tileRows * outer;
    return r;
  }

  /// The analysis' scratch (worker 0's) with FusedRun's row offsets.
  static uint64_t firstScratchBytes(const FusionAnalysis &a) {
    uint64_t bytes =
        a.cpuScratchBytes + static_cast<uint64_t>(a.tileRows) * sizeof(int64_t);
    return (bytes + 63) / 64 * 64;
  }
  /// The tile arrays alone: the floats before the matmul operands' copies.
  static uint64_t tileArrayBytes(const FusionAnalysis &a) {
    size_t floats = a.scratchFloats;
    if (a.kind == FusionKind::Matmul) {
      if (!a.matmul.denseLhs && !a.matmul.viewLhs)
        floats = std::min(floats, a.matmul.lhsSlot);
      if (!a.matmul.denseRhs && !a.matmul.viewRhs)
        floats = std::min(floats, a.matmul.rhsSlot);
    }
    return (floats * sizeof(float) + 63) / 64 * 64;
  }
  /// Another worker's tile arrays, row indices and row offsets.
  static uint64_t workerScratchBytes(const FusionAnalysis &a) {
    size_t rank = a.iterShape.size();
    uint64_t rows = static_cast<uint64_t>(a.tileRows) *
                    (std::max<size_t>(rank, 1) + 1) * sizeof(int64_t);
    return tileArrayBytes(a) + (rows + 63) / 64 * 64;
  }
  /// Whether the tiles must run in row order (a column sum adds them so).
  static bool serialTiles(const FusionAnalysis &a) {
    return std::any_of(a.nodes.begin(), a.nodes.end(), [](const FusionNode &n) {
      return n.kind == NodeKind::ColumnSum;
    });
  }
  /// Whether such a kernel may split its columns instead: every value is
  /// elementwise along the row (no row op, no per-row result).
  static bool columnSplit(const FusionAnalysis &a) {
    return a.kind != FusionKind::Row &&
           std::none_of(a.nodes.begin(), a.nodes.end(),
                        [](const FusionNode &n) {
                          return n.kind == NodeKind::RowOp;
                        }) &&
           std::none_of(a.stores.begin(), a.stores.end(),
                        [](const detail::FusionStore &s) { return s.row; });
  }

private:
  // In a column split, a full value's array is addressed from the split's
  // first column (its row stride stays the kernel's width).
  Arr arr(std::pair<int, int> o) const {
    const FusionNode &n = a.nodes[o.first];
    bool full = n.full[o.second];
    return {f + n.slot[o.second] + (full ? c0 : 0), full ? a.cols : 1,
            full ? 1 : 0};
  }
  float *out(const FusionNode &n, int r) {
    return f + n.slot[r] + (n.full[r] ? c0 : 0);
  }
  int64_t drs(const FusionNode &n, int r) const {
    return n.full[r] ? a.cols : 1;
  }
  /// Row base offsets of an access for the tile's rows, into `base`.
  void bases(const detail::Access &acc, int64_t nr, int64_t *base) const;
  /// Moves the access just put in baseBuf (or its column table) to column c0.
  void offsetColumns(const int64_t *&table, int64_t cc, int64_t nr) {
    if (table) {
      table += c0;
      return;
    }
    for (int64_t r = 0; r < nr; ++r)
      baseBuf[r] += c0 * cc;
  }
  mwrt_status prepareMatmul();
  void runTile(int64_t r0, int64_t nr);
  void evalNode(const FusionNode &n, int64_t r0, int64_t nr);
  void evalRowOp(const FusionNode &n, int64_t nr);
  void evalMatmul(const FusionNode &n, int64_t r0, int64_t nr);

  const BoundKernel &k;
  const FusedProgramDesc &p;
  const FusionAnalysis &a;
  const CpuKernelOptions &options;
  float *f;
  /// Worker 0's scratch, where the column sums accumulate (each worker its
  /// own columns of them in a column split).
  float *shared;
  int64_t *rowIndex;
  size_t rank;
  /// The columns this run computes: [c0, c0 + ncols), all of them unless
  /// a column-sum kernel splits its columns across the workers.
  int64_t c0 = 0, ncols;
  const float *lhs = nullptr, *rhs = nullptr;
  /// Row offsets of the access being gathered or stored; it lives after the
  /// tile's row indices (fusedScratchBytes counts it).
  int64_t *baseBuf = nullptr;
};

void FusedRun::bases(const detail::Access &acc, int64_t nr,
                     int64_t *base) const {
  size_t outer = rank ? rank - 1 : 0;
  for (int64_t r = 0; r < nr; ++r) {
    int64_t b = acc.offset;
    const int64_t *idx = rowIndex + r * outer;
    for (const detail::IndexTerm &t : acc.terms)
      if (t.dim < outer)
        b += t.coef * (t.mod ? (idx[t.dim] / t.div) % t.mod : idx[t.dim] / t.div);
    base[r] = b;
  }
}

mwrt_status FusedRun::prepareMatmul() {
  const detail::FusionMatmul &m = a.matmul;
  auto dense = [&](int input, bool isDense, size_t slot) -> const float * {
    const TensorRef &t = k.ins[input];
    if (isDense) // or a view sgemm reads in place
      return static_cast<const float *>(t.data);
    float *copy = f + slot, *at = copy;
    // A row-major f32 copy (FloatSrc's) into the scratch; bound tensors
    // always carry their strides, so this walks them without allocating.
    if (t.dtype == DType::F32)
      widen<DType::F32>(0, t, 0, at);
    else if (t.dtype == DType::BF16)
      widen<DType::BF16>(0, t, 0, at);
    else
      widen<DType::F16>(0, t, 0, at);
    return copy;
  };
  lhs = dense(m.lhs, m.denseLhs || m.viewLhs, m.lhsSlot);
  rhs = dense(m.rhs, m.denseRhs || m.viewRhs, m.rhsSlot);
  return MWRT_OK;
}

void FusedRun::evalMatmul(const FusionNode &n, int64_t r0, int64_t nr) {
  const detail::FusionMatmul &m = a.matmul;
  int64_t batch = r0 / m.m, row = r0 % m.m;
  // Views are read in place with their leading dimension; copies (and
  // dense operands) are row-major [m, k] / [k, n] matrices in batch order.
  const float *pa = m.viewLhs ? lhs + m.lhsOffsets[batch]
                              : lhs + m.lhsBatch[batch] * m.m * m.k;
  const float *pb = m.viewRhs ? rhs + m.rhsOffsets[batch]
                              : rhs + m.rhsBatch[batch] * m.k * m.n;
  int64_t lda = m.viewLhs ? m.lda : m.transA ? m.m : m.k;
  int64_t ldb = m.viewRhs ? m.ldb : m.transB ? m.k : m.n;
  // op(A)'s rows [row, row + nr): A itself is [m, k], or [k, m] transposed;
  // op(B)'s columns [c0, c0 + ncols).
  const float *rows = m.transA ? pa + row : pa + row * lda;
  const float *cols = m.transB ? pb + c0 * ldb : pb + c0;
  matmulRows(m.transA, m.transB, nr, ncols, m.k, rows, lda, cols, ldb,
             out(n, 0), options.referenceMatmul, a.cols);
}

void FusedRun::evalRowOp(const FusionNode &n, int64_t nr) {
  const int64_t d = a.cols;
  Arr x = arr(n.operands[0]);
  float *y = out(n, 0);
  // Operands of a row op are full tile arrays (the analysis makes them so).
  switch (n.op) {
  case OpKind::Softmax:
  case OpKind::LogSoftmax:
    // runSoftmax's loops, one row at a time.
    for (int64_t r = 0; r < nr; ++r) {
      const float *xr = x.p + r * x.rs;
      float *yr = y + r * d;
      float mx = -std::numeric_limits<float>::infinity();
      for (int64_t j = 0; j < d; ++j)
        mx = std::max(mx, xr[j]);
      float sum = 0.0f;
      for (int64_t j = 0; j < d; ++j)
        sum += std::exp(xr[j] - mx);
      for (int64_t j = 0; j < d; ++j)
        yr[j] = n.logForm ? xr[j] - mx - std::log(sum)
                          : std::exp(xr[j] - mx) / sum;
    }
    return;
  case OpKind::SoftmaxGrad:
  case OpKind::LogSoftmaxGrad: {
    Arr dy = arr(n.operands[1]);
    for (int64_t r = 0; r < nr; ++r) {
      const float *py = x.p + r * x.rs, *pdy = dy.p + r * dy.rs;
      float *o = y + r * d;
      float sum = 0.0f;
      for (int64_t j = 0; j < d; ++j)
        sum += n.logForm ? pdy[j] : pdy[j] * py[j];
      for (int64_t j = 0; j < d; ++j)
        o[j] = n.logForm ? pdy[j] - std::exp(py[j]) * sum
                         : py[j] * (pdy[j] - sum);
    }
    return;
  }
  case OpKind::LayerNorm: {
    Arr g = arr(n.operands[1]), b = arr(n.operands[2]);
    float *mean = out(n, 1), *rstd = out(n, 2);
    for (int64_t r = 0; r < nr; ++r)
      formulas::layerNormRow(x.p + r * x.rs, g.p + r * g.rs, b.p + r * b.rs,
                             d, n.value, y + r * d, mean[r], rstd[r]);
    return;
  }
  case OpKind::RmsNorm: {
    Arr g = arr(n.operands[1]);
    float *rstd = out(n, 1);
    for (int64_t r = 0; r < nr; ++r)
      formulas::rmsNormRow(x.p + r * x.rs, g.p + r * g.rs, d, n.value,
                           y + r * d, rstd[r]);
    return;
  }
  default: { // reduce_sum, reduce_max, reduce_mean over the last axis
    bool isMax = n.op == OpKind::ReduceMax;
    float count = static_cast<float>(d);
    for (int64_t r = 0; r < nr; ++r) {
      const float *xr = x.p + r * x.rs;
      float acc = 0.0f;
      bool seen = false;
      for (int64_t j = 0; j < d; ++j) {
        acc = reduceStep(isMax, acc, xr[j], seen);
        seen = true;
      }
      y[r] = n.op == OpKind::ReduceMean ? acc / count : acc;
    }
    return;
  }
  }
}

void FusedRun::evalNode(const FusionNode &n, int64_t r0, int64_t nr) {
  float *d = n.slot.empty() ? nullptr : out(n, 0);
  int64_t nc = n.full.empty() || !n.full[0] ? 1 : ncols;
  int64_t ds = n.full.empty() ? 1 : drs(n, 0);
  switch (n.kind) {
  case NodeKind::Input:
  case NodeKind::Constant: {
    const void *src = n.kind == NodeKind::Input ? k.ins[n.instruction].data
                                                : n.constData;
    bases(n.access, nr, baseBuf);
    int64_t cc = n.access.colStride;
    const int64_t *table =
        n.access.colTable.empty() ? nullptr : n.access.colTable.data();
    if (nc > 1 && c0)
      offsetColumns(table, cc, nr);
    if (n.dtype == DType::F32)
      gather<DType::F32>(d, ds, src, baseBuf, cc, table, nr, nc);
    else if (n.dtype == DType::BF16)
      gather<DType::BF16>(d, ds, src, baseBuf, cc, table, nr, nc);
    else
      gather<DType::F16>(d, ds, src, baseBuf, cc, table, nr, nc);
    return;
  }
  case NodeKind::Splat:
    for (int64_t r = 0; r < nr; ++r)
      std::fill(d + r * ds, d + r * ds + nc, n.value);
    return;
  case NodeKind::Unary: {
    Arr x = arr(n.operands[0]);
    if (x.cs)
      unaryTile<1>(n.op, d, ds, x, nr, nc, n.params);
    else
      unaryTile<0>(n.op, d, ds, x, nr, nc, n.params);
    return;
  }
  case NodeKind::Binary: {
    Arr x = arr(n.operands[0]), y = arr(n.operands[1]);
    if (x.cs && y.cs)
      binaryTile<1, 1>(n.op, d, ds, x, y, nr, nc, n.params);
    else if (x.cs)
      binaryTile<1, 0>(n.op, d, ds, x, y, nr, nc, n.params);
    else if (y.cs)
      binaryTile<0, 1>(n.op, d, ds, x, y, nr, nc, n.params);
    else
      binaryTile<0, 0>(n.op, d, ds, x, y, nr, nc, n.params);
    return;
  }
  case NodeKind::Cast: {
    Arr x = arr(n.operands[0]);
    for (int64_t r = 0; r < nr; ++r)
      for (int64_t c = 0; c < nc; ++c)
        d[r * ds + c] = roundTo(n.castTo, x.p[r * x.rs + c * x.cs]);
    return;
  }
  case NodeKind::Select: {
    Arr cond = arr(n.operands[0]), t = arr(n.operands[1]),
        e = arr(n.operands[2]);
    for (int64_t r = 0; r < nr; ++r) {
      // NaN is != 0, so a NaN flag selects the true value (runSelect).
      const Arr &v = cond.p[r * cond.rs] != 0.0f ? t : e;
      for (int64_t c = 0; c < nc; ++c)
        d[r * ds + c] = v.p[r * v.rs + c * v.cs];
    }
    return;
  }
  case NodeKind::RowOp:
    return evalRowOp(n, nr);
  case NodeKind::Matmul:
    return evalMatmul(n, r0, nr);
  case NodeKind::ColumnSum: {
    // The unfused reduce_sum adds each column's elements in increasing row
    // order into one f32 accumulator: the tiles come in row order.
    Arr x = arr(n.operands[0]);
    float *acc = shared + n.slot[0] + c0;
    for (int64_t r = 0; r < nr; ++r) {
      const float *xr = x.p + r * x.rs;
      for (int64_t c = 0; c < ncols; ++c)
        acc[c] += xr[c * x.cs];
    }
    return;
  }
  }
}

void FusedRun::runTile(int64_t r0, int64_t nr) {
  // The outer (all but last) iteration index of each row of the tile.
  size_t outer = rank ? rank - 1 : 0;
  if (outer) {
    int64_t *idx = rowIndex;
    int64_t rest = r0;
    for (size_t d = outer; d-- > 0;) {
      idx[d] = rest % a.iterShape[d];
      rest /= a.iterShape[d];
    }
    for (int64_t r = 1; r < nr; ++r) {
      int64_t *next = rowIndex + r * outer;
      std::memcpy(next, next - outer, outer * sizeof(int64_t));
      for (size_t d = outer; d-- > 0;) {
        if (++next[d] < a.iterShape[d])
          break;
        next[d] = 0;
      }
    }
  }
  for (const FusionNode &n : a.nodes)
    evalNode(n, r0, nr);
  for (const detail::FusionStore &s : a.stores) {
    if (s.columnSum)
      continue;
    const TensorRef &o = k.outs[s.out];
    bases(s.access, nr, baseBuf);
    Arr v = arr({s.node, s.result});
    int64_t cc = s.access.colStride;
    const int64_t *table =
        s.access.colTable.empty() ? nullptr : s.access.colTable.data();
    int64_t nc = s.row ? 1 : ncols;
    if (!s.row && c0)
      offsetColumns(table, cc, nr);
    if (o.dtype == DType::F32)
      scatter<DType::F32>(o.data, baseBuf, cc, table, v, nr, nc);
    else if (o.dtype == DType::BF16)
      scatter<DType::BF16>(o.data, baseBuf, cc, table, v, nr, nc);
    else
      scatter<DType::F16>(o.data, baseBuf, cc, table, v, nr, nc);
  }
}

mwrt_status FusedRun::run() {
  size_t outer = rank ? rank - 1 : 0;
  baseBuf = rowIndex + a.tileRows * std::max<size_t>(outer, 0);
  if (a.kind == FusionKind::Matmul)
    MWRT_TRY(prepareMatmul());
  for (const FusionNode &n : a.nodes)
    if (n.kind == NodeKind::ColumnSum)
      std::fill(out(n, 0), out(n, 0) + a.cols, 0.0f);
  int64_t total = a.rows * a.cols == 0 ? 0 : a.rows;
  // A matmul's tiles stay inside one batch matrix of m rows.
  int64_t span = a.kind == FusionKind::Matmul ? a.matmul.m : total;
  if (span > 0 && total > 0) {
    int64_t perSpan = (span + a.tileRows - 1) / a.tileRows;
    int64_t tiles = total / span * perSpan;
    auto runTiles = [&](FusedRun &r, int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        int64_t start = t / perSpan * span;
        int64_t r0 = start + t % perSpan * a.tileRows;
        r.runTile(r0, std::min(a.tileRows, start + span - r0));
      }
    };
    if (!options.pool || options.pool->size() == 1) {
      runTiles(*this, 0, tiles);
    } else if (serialTiles(a)) {
      // Every tile in row order, each worker over its own columns (blocks
      // of 64; a matmul's at least kBlasBlockWork multiply-adds a tile).
      int64_t units = (a.cols + kBlasColumnBlock - 1) / kBlasColumnBlock;
      int64_t minUnits = 1;
      if (a.kind == FusionKind::Matmul) {
        int64_t unitWork =
            std::max<int64_t>(a.tileRows * kBlasColumnBlock * a.matmul.k, 1);
        minUnits = (kBlasBlockWork + unitWork - 1) / unitWork;
      }
      if (!columnSplit(a))
        minUnits = units + 1;
      parallelBlocks(options, units, minUnits,
                     [&](int w, int64_t u0, int64_t u1) {
        FusedRun r = forWorker(w);
        r.c0 = u0 * kBlasColumnBlock;
        r.ncols = std::min(a.cols, u1 * kBlasColumnBlock) - r.c0;
        runTiles(r, 0, tiles);
      });
    } else {
      // A few tiles a chunk: a matmul tile is a product of its own, the
      // others about kTileElements elements through every node.
      int64_t grain = a.kind == FusionKind::Matmul ? 1 : 4;
      options.pool->parallelFor(tiles, grain, [&](int w, int64_t t0, int64_t t1) {
        FusedRun r = forWorker(w);
        runTiles(r, t0, t1);
      });
    }
  }
  for (const detail::FusionStore &s : a.stores) {
    if (!s.columnSum)
      continue;
    const TensorRef &o = k.outs[s.out];
    const float *acc = out(a.nodes[s.node], 0);
    int64_t cc = s.access.colStride;
    for (int64_t c = 0; c < a.cols; ++c) {
      if (o.dtype == DType::F32)
        store<DType::F32>(o.data, c * cc, acc[c]);
      else if (o.dtype == DType::BF16)
        store<DType::BF16>(o.data, c * cc, acc[c]);
      else
        store<DType::F16>(o.data, c * cc, acc[c]);
    }
  }
  return MWRT_OK;
}

} // namespace

uint64_t fusedScratchBytes(const FusedProgramDesc &program, int workers) {
  const FusionAnalysis &a = *program.analysis;
  if (a.kind == FusionKind::Horizontal)
    return 0;
  // FusedRun's row offsets after the analysis' count; then the other
  // workers' tile arrays when the tiles may run in parallel.
  uint64_t bytes = FusedRun::firstScratchBytes(a);
  if (workers > 1)
    bytes += static_cast<uint64_t>(workers - 1) * FusedRun::workerScratchBytes(a);
  return bytes;
}

mwrt_status runFusedKernel(const BoundKernel &k,
                           const CpuKernelOptions &options) {
  const FusionAnalysis &a = *k.program->analysis;
  MWRT_TRY(detail::checkFusedAliasing(k));
  if (a.kind == FusionKind::Horizontal) {
    // Each update as its own kernel, in place (optimizers.cpp).
    for (size_t i = 0; i < k.program->instructions.size(); ++i) {
      const FusedInstructionDesc &in = k.program->instructions[i];
      if (mwrt_status st = runCpuKernel(in.kind, in.attrs, k.groupIns[i],
                                        k.groupOuts[i], options)) {
        std::string message = mwrt_last_error();
        return setError(st, "'mw.fusion' (horizontal), update " +
                                std::to_string(i) + ": " + message);
      }
    }
    return MWRT_OK;
  }
  if (!k.scratch)
    return setError(MWRT_INTERNAL, "'mw.fusion': no scratch bound");
  return FusedRun(k, options).run();
}

} // namespace mwrt::cpu
