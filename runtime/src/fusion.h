//===- fusion.h - Fused kernels: the program's analysis --------*- C++ -*-===//
//
// Private to the runtime. When a plan is loaded, every fused kernel's program
// (KernelDesc::program, docs/fusion.md) is checked on its own terms (operand
// references in range, arities, dtypes and shapes consistent op by op, a
// kind among the four the runtime runs) and turned into a FusionAnalysis:
// the iteration space, and a small graph of nodes, each an instruction
// evaluated over a tile of whole rows of the iteration space, whose every
// read of a kernel input is an affine access (offset + coefficients per
// iteration dimension) composed from the index maps of the shape ops and
// broadcasts between it and the output. Shape ops are thus never computed:
// they fold into their consumers' accesses. The backends execute the graph:
// the CPU one tile by tile with one vectorizable loop per node
// (src/cpu/fused.cpp), the CUDA one as generated CUDA C (src/cuda/fused_codegen.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_FUSION_H
#define MWRT_SRC_FUSION_H

#include "mwrt/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mwrt::detail {

/// One term of an index expression: coef * ((i[dim] / div) % mod) of the
/// iteration index i, with no modulo when mod is 0. Plain affine terms have
/// div 1 and mod 0; a reshape that merges dimensions splits an iteration
/// dimension into such digits.
struct IndexTerm {
  size_t dim = 0;
  int64_t div = 1, mod = 0, coef = 0;
};

/// An index (or element offset) as a sum of terms of the iteration index.
struct IndexExpr {
  int64_t offset = 0;
  std::vector<IndexTerm> terms; ///< normalized: sorted, merged, non-zero
};

/// An element of an operand's view as a function of the iteration index:
/// element `offset + sum(terms)` from the view's first element
/// (TensorRef::data). Along the last iteration dimension (a tile's row) it
/// steps by `colStride`, or by `colTable[c]` when that dimension is split.
struct Access : IndexExpr {
  int64_t colStride = 0;
  std::vector<int64_t> colTable; ///< per column, when not a plain stride
  /// Whether the element changes along a row.
  bool alongRow() const { return colStride != 0 || !colTable.empty(); }
};

enum class NodeKind {
  Input,     ///< a kernel input read through `access`
  Constant,  ///< an mw.constant's elements (its attribute) through `access`
  Splat,     ///< mw.splat: one value
  Unary,     ///< an elementwise op with one operand (op_table.h formula)
  Binary,    ///< an elementwise op with two
  Cast,      ///< mw.cast between float types: rounds to `castTo`
  Select,    ///< mw.select: operand 0 (a flag) != 0 ? operand 1 : operand 2
  RowOp,     ///< softmax, layer_norm, a last-axis reduction ...: whole rows
  Matmul,    ///< the matmul of a matmul kernel, computed tile by tile
  ColumnSum, ///< reduce_sum over every axis but the last (the bias grad)
};

/// One node: an instruction evaluated over a tile. Its results are tile
/// arrays in the scratch buffer: `full` ones hold tileRows x cols values
/// (row-major), the others one value per tile row (the value is the same
/// along a row: a row statistic, a broadcast). ColumnSum's result is `cols`
/// accumulators that live across tiles.
struct FusionNode {
  NodeKind kind = NodeKind::Input;
  OpKind op = OpKind::Constant;
  int instruction = -1; ///< the program's instruction (or input index)
  /// (node, result) per operand, in the op's operand order.
  std::vector<std::pair<int, int>> operands;
  std::vector<bool> full;   ///< per result
  std::vector<size_t> slot; ///< per result: float offset in the scratch
  Access access;            ///< Input, Constant
  DType dtype = DType::F32; ///< Input, Constant: element type in memory
  const void *constData = nullptr; ///< Constant: the attribute's bytes
  double params[kMaxFormulaParams] = {}; ///< Unary, Binary
  DType castTo = DType::F32;             ///< Cast
  float value = 0;                       ///< Splat; RowOp: epsilon
  bool logForm = false; ///< RowOp: log_softmax(_grad)
};

/// Where a yielded value goes: node (result) stored through `access` into
/// kernel output `out`, one value per tile row when `row`, per element
/// otherwise; a ColumnSum node's accumulators after the last tile.
struct FusionStore {
  int node = 0, result = 0;
  int out = 0;
  bool row = false;
  bool columnSum = false;
  Access access;
  DType dtype = DType::F32; ///< the output's
};

/// The matmul of a matmul kernel: mw.matmul's shape rules (runMatmul's).
struct FusionMatmul {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  int lhs = 0, rhs = 0;                ///< kernel input indices
  int64_t lhsMatrices = 0, rhsMatrices = 0; ///< batch matrices of each
  std::vector<int64_t> lhsBatch, rhsBatch;  ///< per batch element: matrix
  bool denseLhs = false, denseRhs = false;  ///< f32 row-major as they are
  size_t lhsSlot = 0, rhsSlot = 0; ///< float offsets of their f32 copies
  /// The CPU's sgemm reads an f32 operand in place when each of its matrices
  /// is rows of unit-stride elements (a transposed or sliced view of a
  /// buffer): its leading dimension and, per batch element, the element
  /// offset of its matrix. Dense operands are such views too.
  bool viewLhs = false, viewRhs = false;
  int64_t lda = 0, ldb = 0;
  std::vector<int64_t> lhsOffsets, rhsOffsets;
};

/// A fused kernel's program, analysed (see the file comment).
struct FusionAnalysis {
  FusionKind kind = FusionKind::Loop;
  std::vector<int64_t> iterShape; ///< may be rank 0
  int64_t rows = 1, cols = 1;     ///< iteration space as [rows, cols]
  int64_t tileRows = 1;           ///< rows per tile (matmul: within one m)
  std::vector<FusionNode> nodes;  ///< in evaluation order
  std::vector<FusionStore> stores;
  /// Per kernel input: every read of it is at the output's own index (an
  /// output may then be the same buffer in a loop, row or horizontal kernel:
  /// docs/fusion.md, aliasing). A row op reads its operands at the index
  /// of each element of the row.
  std::vector<bool> identityOnly;
  FusionMatmul matmul;
  /// Horizontal kernels: per instruction, its kernel inputs and, per result,
  /// the kernel output it is yielded to.
  std::vector<std::vector<int>> groupIns, groupOuts;
  /// Scratch the CPU backend needs: floats for the tile arrays and the
  /// matmul operand copies, then int64s for the tile's row indices.
  size_t scratchFloats = 0;
  size_t rowIndexSlot = 0; ///< int64 offset (after the floats), tileRows x (rank-1)
  uint64_t cpuScratchBytes = 0;
};

/// Checks `program` (instructions and yields as read from the plan) against
/// the kernel's `ins` and `outs`, derives its kind and analyses it into
/// program.analysis; false with `error` (what is wrong, naming the
/// instruction) when the runtime cannot run it.
bool analyzeFusedProgram(FusedProgramDesc &program,
                         const std::vector<OperandDesc> &ins,
                         const std::vector<OperandDesc> &outs,
                         std::string &error);

struct BoundKernel;
/// Whether fused kernel `k`'s outputs may overlap its inputs as bound: only
/// an output that is exactly an input (same data, shape, element size and
/// strides) the program reads at the output's own index (identityOnly), in
/// a loop, row or horizontal kernel (docs/fusion.md, aliasing); both
/// backends check it before running the kernel, and both read every element
/// such an input gives a tile (CPU) or a thread (CUDA) before they write
/// any element of that tile or thread: a row kernel computes its row ops
/// over whole rows first.
mwrt_status checkFusedAliasing(const BoundKernel &k);

} // namespace mwrt::detail

#endif // MWRT_SRC_FUSION_H
