//===- MwFoldViews.cpp - Shape-only kernels become strided views ----------===//
//
// --mw-fold-views, after One-Shot Bufferize: a kernel that only moves
// elements (transposes, slices, reshapes) whose results a strided layout can
// express stops being a kernel. Its readers read the input through a
// memref.reinterpret_cast view instead (the consumer side), or the one kernel
// that produced a transposed value writes it through a view of the
// transpose's destination (the producer side). The values every kernel sees
// are the same, so mw-eval's outputs are bit-identical; the runtime reads and
// writes strided operands as it always could (docs/fusion.md, "Views").
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Statistic.h"

namespace mlir::mw {
#define GEN_PASS_DEF_MWFOLDVIEWS
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// A strided layout: element (i_0, ..., i_n) is at offset + sum i_d strides_d.
struct Strided {
  SmallVector<int64_t> shape, strides;
  int64_t offset = 0;
};

std::optional<Strided> layoutOf(MemRefType type) {
  Strided s;
  if (!type.hasStaticShape() ||
      failed(getStridesAndOffset(type, s.strides, s.offset)) ||
      s.offset == ShapedType::kDynamic ||
      llvm::is_contained(s.strides, ShapedType::kDynamic))
    return std::nullopt;
  s.shape.assign(type.getShape().begin(), type.getShape().end());
  return s;
}

/// The strides of `from` reshaped to `shape` without moving an element, or
/// nothing when the elements of a merged group are not evenly spaced (NumPy's
/// no-copy reshape: each group of old dimensions whose product is a group of
/// new ones must be contiguous relative to itself).
std::optional<Strided> reshaped(const Strided &from, ArrayRef<int64_t> shape) {
  Strided to;
  to.offset = from.offset;
  to.shape.assign(shape.begin(), shape.end());
  to.strides.assign(shape.size(), 0);
  // Size-1 dimensions do not constrain anything: drop them from the old
  // side and give them any stride on the new side.
  SmallVector<int64_t> os, ost;
  for (auto [n, st] : llvm::zip(from.shape, from.strides))
    if (n != 1) {
      os.push_back(n);
      ost.push_back(st);
    }
  size_t oi = 0, ni = 0;
  while (ni < shape.size() || oi < os.size()) {
    if (ni < shape.size() && shape[ni] == 1) {
      to.strides[ni++] = 1;
      continue;
    }
    if (ni == shape.size() || oi == os.size())
      return std::nullopt;
    size_t oj = oi + 1, nj = ni + 1;
    int64_t op = os[oi], np = shape[ni];
    while (op != np) {
      if (op < np) {
        if (oj == os.size())
          return std::nullopt;
        op *= os[oj++];
      } else {
        if (nj == shape.size())
          return std::nullopt;
        np *= shape[nj++];
      }
    }
    for (size_t k = oi; k + 1 < oj; ++k)
      if (ost[k] != ost[k + 1] * os[k + 1])
        return std::nullopt;
    // The new group's strides from its innermost dimension outwards.
    to.strides[nj - 1] = ost[oj - 1];
    for (size_t k = nj - 1; k > ni; --k)
      to.strides[k - 1] = to.strides[k] * shape[k];
    oi = oj;
    ni = nj;
  }
  // A size-1 dimension's stride is free; give it the row-major one.
  for (size_t d = shape.size(); d-- > 0;)
    if (shape[d] == 1)
      to.strides[d] = d + 1 < shape.size() ? to.strides[d + 1] * shape[d + 1] : 1;
  return to;
}

/// The layout of `op`'s result viewing its operand's layout `in`, for the
/// shape-only ops a strided view expresses.
std::optional<Strided> viewThrough(Operation *op, const Strided &in) {
  if (auto t = dyn_cast<TransposeOp>(op)) {
    Strided out;
    out.offset = in.offset;
    for (int64_t d : t.getPermutation()) {
      out.shape.push_back(in.shape[d]);
      out.strides.push_back(in.strides[d]);
    }
    return out;
  }
  if (auto s = dyn_cast<SliceOp>(op)) {
    Strided out;
    out.offset = in.offset;
    ArrayRef<int64_t> offsets = s.getOffsets(), sizes = s.getSizes();
    std::optional<ArrayRef<int64_t>> steps = s.getStrides();
    for (size_t d = 0; d < in.shape.size(); ++d) {
      int64_t step = steps ? (*steps)[d] : 1;
      out.offset += offsets[d] * in.strides[d];
      out.shape.push_back(sizes[d]);
      out.strides.push_back(in.strides[d] * step);
    }
    return out;
  }
  if (auto r = dyn_cast<ReshapeOp>(op))
    return reshaped(in, r.getType().getShape());
  return std::nullopt;
}

bool isRowMajor(const Strided &s) {
  int64_t expect = 1;
  for (size_t d = s.shape.size(); d-- > 0;) {
    if (s.shape[d] != 1 && s.strides[d] != expect)
      return false;
    expect *= s.shape[d];
  }
  return s.offset == 0;
}

/// The memref type of a view with layout `s` of elements of `like`'s type:
/// the identity layout when `s` is row-major (its size-1 dimensions' strides
/// then made the row-major ones, which reinterpret_cast requires).
MemRefType viewType(MemRefType like, Strided &s) {
  MLIRContext *ctx = like.getContext();
  if (isRowMajor(s)) {
    int64_t stride = 1;
    for (size_t d = s.shape.size(); d-- > 0;) {
      s.strides[d] = stride;
      stride *= s.shape[d];
    }
    return MemRefType::get(s.shape, like.getElementType(), nullptr,
                           like.getMemorySpace());
  }
  return MemRefType::get(s.shape, like.getElementType(),
                         StridedLayoutAttr::get(ctx, s.offset, s.strides),
                         like.getMemorySpace());
}

/// The buffer a memref value views: the allocation or argument at the end of
/// its chain of views.
Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

struct MwFoldViewsPass : mw::impl::MwFoldViewsBase<MwFoldViewsPass> {
  using MwFoldViewsBase::MwFoldViewsBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      Block &block = func.getBody().front();
      // Each rule erases kernels; positions are renumbered between them.
      foldConsumers(block);
      foldProducers(block);
      foldConcats(block);
    }
  }

  DenseMap<Operation *, unsigned> positions(Block &block) {
    DenseMap<Operation *, unsigned> pos;
    unsigned i = 0;
    for (Operation &op : block)
      pos[&op] = i++;
    return pos;
  }

  /// Whether `alloc` (a memref.alloc of an identity layout) is used only by
  /// `writer` as a destination, kernels that read it, and deallocs; sets
  /// `lastRead` to the latest reading kernel.
  static bool onlyReadAfter(memref::AllocOp alloc, KernelOp writer,
                            DenseMap<Operation *, unsigned> &pos,
                            Operation *&lastRead) {
    if (!alloc.getType().getLayout().isIdentity())
      return false;
    lastRead = writer;
    for (OpOperand &use : alloc->getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp>(user))
        continue;
      auto kernel = dyn_cast<KernelOp>(user);
      if (!kernel)
        return false;
      if (kernel == writer) {
        if (kernel.isDpsInput(&use))
          return false;
        continue;
      }
      if (!kernel.isDpsInput(&use) || pos[user] < pos[writer])
        return false;
      if (pos[user] > pos[lastRead])
        lastRead = user;
    }
    return true;
  }

  /// Whether an op in (from, to] may write `root`'s buffer: a kernel with a
  /// destination viewing it, or any op that is not a kernel, a view, an
  /// allocation or a constant.
  static bool writtenBetween(Value root, Operation *from, Operation *to) {
    for (Operation *op = from->getNextNode(); op; op = op->getNextNode()) {
      if (auto kernel = dyn_cast<KernelOp>(op)) {
        for (Value out : kernel.getOuts())
          if (rootOf(out) == root)
            return true;
      } else if (!isa<ViewLikeOpInterface, memref::AllocOp, memref::DeallocOp,
                      arith::ConstantOp>(op)) {
        return true;
      }
      if (op == to)
        break;
    }
    return false;
  }

  /// The consumer side. A kernel whose body is only transposes, slices and
  /// reshapes, each result a strided view of one input, whose destinations
  /// are fresh buffers that only kernels read, while no kernel writes the
  /// input's buffer until the last read: the readers read views of the
  /// input and the kernel goes.
  void foldConsumers(Block &block) {
    DenseMap<Operation *, unsigned> pos = positions(block);
    SmallVector<KernelOp> kernels(block.getOps<KernelOp>());
    for (KernelOp kernel : kernels) {
      if (!kernel.hasBufferSemantics())
        continue;
      Block &body = kernel.getBody().front();
      if (!llvm::all_of(body.without_terminator(), [](Operation &op) {
            return isa<TransposeOp, SliceOp, ReshapeOp>(op);
          }))
        continue;
      // The view of each body value, from the input it views.
      DenseMap<Value, std::pair<unsigned, Strided>> views;
      bool ok = true;
      for (BlockArgument arg : body.getArguments()) {
        auto type = cast<MemRefType>(kernel.getIns()[arg.getArgNumber()]
                                         .getType());
        if (std::optional<Strided> s = layoutOf(type))
          views[arg] = {arg.getArgNumber(), *s};
      }
      for (Operation &op : body.without_terminator()) {
        auto it = views.find(op.getOperand(0));
        std::optional<Strided> s;
        if (it != views.end())
          s = viewThrough(&op, it->second.second);
        if (!s) {
          ok = false;
          break;
        }
        views[op.getResult(0)] = {it->second.first, *s};
      }
      if (!ok)
        continue;
      SmallVector<std::pair<unsigned, Strided>> results;
      for (auto [value, out] :
           llvm::zip(kernel.getYield()->getOperands(), kernel.getOuts())) {
        auto alloc = out.getDefiningOp<memref::AllocOp>();
        Operation *lastRead = nullptr;
        auto it = views.find(value);
        if (it == views.end() || !alloc ||
            !onlyReadAfter(alloc, kernel, pos, lastRead) ||
            writtenBetween(rootOf(kernel.getIns()[it->second.first]), kernel,
                           lastRead)) {
          ok = false;
          break;
        }
        results.push_back(it->second);
      }
      if (!ok)
        continue;
      OpBuilder b(kernel);
      for (auto [out, view] : llvm::zip(kernel.getOuts(), results)) {
        Value in = kernel.getIns()[view.first];
        MemRefType type = viewType(cast<MemRefType>(in.getType()), view.second);
        Value cast = b.create<memref::ReinterpretCastOp>(
            kernel.getLoc(), type, in, view.second.offset, view.second.shape,
            view.second.strides);
        replaceBuffer(out, cast, kernel);
      }
      eraseKernelAndBuffers(kernel);
      ++numFolded;
    }
  }

  /// The producer side. A single mw.transpose kernel whose input is a fresh
  /// buffer that exactly one earlier single-op mw.matmul kernel writes and
  /// nothing else reads, into a fresh destination: the matmul writes the
  /// destination through the inverse transposed view and the kernel goes.
  void foldProducers(Block &block) {
    DenseMap<Operation *, unsigned> pos = positions(block);
    SmallVector<KernelOp> kernels(block.getOps<KernelOp>());
    for (KernelOp kernel : kernels) {
      auto transpose = dyn_cast_or_null<TransposeOp>(kernel.getSingleOp());
      if (!transpose || !kernel.hasBufferSemantics() ||
          transpose.getInput() != kernel.getBody().front().getArgument(0))
        continue;
      auto src = kernel.getIns()[0].getDefiningOp<memref::AllocOp>();
      auto dst = kernel.getOuts()[0].getDefiningOp<memref::AllocOp>();
      if (!src || !dst || !dst.getType().getLayout().isIdentity() ||
          !src.getType().getLayout().isIdentity())
        continue;
      KernelOp producer;
      bool ok = true;
      for (OpOperand &use : src->getUses()) {
        Operation *user = use.getOwner();
        if (isa<memref::DeallocOp>(user) || user == kernel)
          continue;
        auto k = dyn_cast<KernelOp>(user);
        if (!k || producer || !k.isDpsInit(&use) ||
            !isa_and_nonnull<MatmulOp>(k.getSingleOp()) ||
            pos[user] > pos[kernel]) {
          ok = false;
          break;
        }
        producer = k;
      }
      if (!ok || !producer ||
          llvm::any_of(dst->getUsers(), [&](Operation *u) {
            return pos[u] < pos[kernel];
          }))
        continue;
      // dst[i] = src[j] with j[perm[d]] = i[d]: src's view of dst has
      // stride[perm[d]] = dst's stride[d].
      std::optional<Strided> d = layoutOf(dst.getType());
      if (!d)
        continue;
      Strided view;
      view.shape.assign(src.getType().getShape().begin(),
                        src.getType().getShape().end());
      view.strides.assign(view.shape.size(), 0);
      for (auto [i, p] : llvm::enumerate(transpose.getPermutation()))
        view.strides[p] = d->strides[i];
      dst->moveBefore(producer);
      OpBuilder b(producer);
      MemRefType type = viewType(dst.getType(), view);
      Value cast = b.create<memref::ReinterpretCastOp>(
          kernel.getLoc(), type, dst, view.offset, view.shape, view.strides);
      replaceBuffer(src, cast, kernel);
      eraseKernelAndBuffers(kernel);
      ++numFolded;
    }
  }

  /// The concat side. A single mw.concat kernel into a fresh buffer whose
  /// every input is a fresh buffer (or a contiguous reshape of one) that one
  /// earlier single-op kernel writes (directly, or through a permuted view)
  /// and only the concat reads: each writer writes its piece of the concat's
  /// destination through a view, and the concat and the pieces go (the
  /// Q, K and V gradients into the QKV projection's gradient).
  void foldConcats(Block &block) {
    DenseMap<Operation *, unsigned> pos = positions(block);
    SmallVector<KernelOp> kernels(block.getOps<KernelOp>());
    for (KernelOp kernel : kernels) {
      auto concat = dyn_cast_or_null<ConcatOp>(kernel.getSingleOp());
      if (!concat || !kernel.hasBufferSemantics())
        continue;
      auto dst = kernel.getOuts()[0].getDefiningOp<memref::AllocOp>();
      std::optional<Strided> c = dst ? layoutOf(dst.getType()) : std::nullopt;
      if (!c || !dst.getType().getLayout().isIdentity() ||
          llvm::any_of(dst->getUsers(),
                       [&](Operation *u) { return pos[u] < pos[kernel]; }))
        continue;
      Block &body = kernel.getBody().front();
      if (!llvm::equal(concat.getInputs(), body.getArguments()))
        continue;
      struct Piece {
        memref::AllocOp buffer;
        SmallVector<Operation *> chain; // reshapes from the buffer to the input
        KernelOp writer;
        memref::ReinterpretCastOp writerView; // null: writes the buffer
        Strided layout;                       // of the buffer, in dst
      };
      SmallVector<Piece> pieces;
      int64_t axis = concat.getAxis(), at = 0;
      Operation *first = kernel;
      bool ok = true;
      for (Value in : kernel.getIns()) {
        Piece p;
        Value v = in;
        while (Operation *def = v.getDefiningOp()) {
          if (!isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
            break;
          if (!def->hasOneUse()) {
            ok = false;
            break;
          }
          p.chain.push_back(def);
          v = def->getOperand(0);
        }
        p.buffer = v.getDefiningOp<memref::AllocOp>();
        auto inType = cast<MemRefType>(in.getType());
        if (!ok || !p.buffer || !p.buffer.getType().getLayout().isIdentity() ||
            !inType.getLayout().isIdentity() ||
            llvm::any_of(pieces,
                         [&](const Piece &q) { return q.buffer == p.buffer; })) {
          ok = false;
          break;
        }
        // The buffer's users: the reshape chain (or the concat), one writer
        // (directly or through one reinterpret_cast), deallocs.
        for (OpOperand &use : p.buffer->getUses()) {
          Operation *user = use.getOwner();
          if (isa<memref::DeallocOp>(user) ||
              (!p.chain.empty() && user == p.chain.back()) ||
              (p.chain.empty() && user == kernel))
            continue;
          OpOperand *write = &use;
          if (auto view = dyn_cast<memref::ReinterpretCastOp>(user)) {
            if (p.writerView || !view->hasOneUse()) {
              ok = false;
              break;
            }
            p.writerView = view;
            write = &*view->getUses().begin();
          }
          auto writer = dyn_cast<KernelOp>(write->getOwner());
          if (!writer || p.writer || !writer.getSingleOp() ||
              !writer.isDpsInit(write) || pos[writer] > pos[kernel] ||
              llvm::is_contained(writer.getIns(), write->get())) {
            ok = false;
            break;
          }
          p.writer = writer;
        }
        if (!ok || !p.writer) {
          ok = false;
          break;
        }
        // The input's piece of dst, in the input's shape, then in the
        // buffer's (a contiguous reshape of it).
        Strided slice = *c;
        slice.offset += at * c->strides[axis];
        slice.shape.assign(inType.getShape().begin(), inType.getShape().end());
        at += inType.getShape()[axis];
        std::optional<Strided> layout =
            reshaped(slice, p.buffer.getType().getShape());
        if (!layout) {
          ok = false;
          break;
        }
        p.layout = *layout;
        if (pos[p.writer] < pos[first])
          first = p.writer;
        pieces.push_back(std::move(p));
      }
      if (!ok)
        continue;
      // A writer's permuted view of its buffer becomes the same permutation
      // of the buffer's layout in dst: each view dimension is one buffer
      // dimension (same size, the buffer's row-major stride).
      SmallVector<std::optional<Strided>> writerLayouts;
      for (Piece &p : pieces) {
        if (!p.writerView) {
          writerLayouts.push_back(p.layout);
          continue;
        }
        std::optional<Strided> v = layoutOf(p.writerView.getType());
        SmallVector<int64_t> rowMajor(p.layout.shape.size(), 1);
        for (size_t e = rowMajor.size(); e-- > 1;)
          rowMajor[e - 1] = rowMajor[e] * p.layout.shape[e];
        SmallVector<bool> used(rowMajor.size(), false);
        for (size_t d = 0; v && d < v->shape.size(); ++d) {
          if (v->shape[d] == 1) {
            v->strides[d] = 1;
            continue;
          }
          size_t e = 0;
          while (e < rowMajor.size() &&
                 (used[e] || p.layout.shape[e] != v->shape[d] ||
                  rowMajor[e] != v->strides[d]))
            ++e;
          if (e == rowMajor.size() || v->offset != 0) {
            v = std::nullopt;
            break;
          }
          used[e] = true;
          v->strides[d] = p.layout.strides[e];
        }
        if (v)
          v->offset = p.layout.offset;
        writerLayouts.push_back(v);
      }
      if (llvm::any_of(writerLayouts, [](auto &l) { return !l; }))
        continue;
      dst->moveBefore(first);
      for (auto [p, layout] : llvm::zip(pieces, writerLayouts)) {
        OpBuilder b(p.writer);
        MemRefType type = viewType(dst.getType(), *layout);
        Value view = b.create<memref::ReinterpretCastOp>(
            p.writer.getLoc(), type, dst, layout->offset, layout->shape,
            layout->strides);
        Value old = p.writerView ? p.writerView.getResult()
                                 : p.buffer.getResult();
        p.writer->replaceUsesOfWith(old, view);
      }
      kernel->erase();
      for (Piece &p : pieces) {
        if (p.writerView)
          p.writerView->erase();
        for (Operation *view : p.chain) // from the input back to the buffer
          view->erase();
        for (Operation *u : llvm::make_early_inc_range(p.buffer->getUsers()))
          u->erase();
        p.buffer->erase();
      }
      ++numFolded;
    }
  }

  /// Every use of buffer `old` but by `kernel` (which is going) and its
  /// deallocs now uses `view`.
  static void replaceBuffer(Value old, Value view, KernelOp kernel) {
    old.replaceUsesWithIf(view, [&](OpOperand &use) {
      return use.getOwner() != kernel &&
             !isa<memref::DeallocOp>(use.getOwner());
    });
  }

  /// Erases `kernel` and then every allocation among its operands that
  /// nothing but deallocs uses any more.
  static void eraseKernelAndBuffers(KernelOp kernel) {
    SmallVector<Value> operands(kernel->getOperands());
    kernel->erase();
    for (Value v : operands) {
      auto alloc = v.getDefiningOp<memref::AllocOp>();
      if (!alloc || !llvm::all_of(alloc->getUsers(), [](Operation *u) {
            return isa<memref::DeallocOp>(u);
          }))
        continue;
      for (Operation *u : llvm::make_early_inc_range(alloc->getUsers()))
        u->erase();
      alloc->erase();
    }
  }
};

} // namespace
