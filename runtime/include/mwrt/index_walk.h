//===- index_walk.h - Row-major index walks over strided tensors -*- C++ -*-===//
//
// The one row-major walk over a shape with several strided operands, shared
// by the reference evaluator (lib/Eval) and the CPU backend (runtime/src/cpu):
// broadcasting elementwise ops, transposes and copies all go through it, so
// the evaluator and the runtime visit elements in the same order. Header-only
// and MLIR-free; any container with size() and operator[] serves as a shape
// or a stride list (std::vector, llvm::ArrayRef, llvm::SmallVector).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_INDEX_WALK_H
#define MWRT_INDEX_WALK_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mwrt {

/// Calls fn(n, offsets) for every index of `shape` in row-major order, n its
/// row-major number and offsets[k] its offset under strides[k] (each with
/// one stride per dimension; 0 for a broadcast dimension). Strides given as
/// a braced list are std::vectors.
template <size_t N, typename StridesT = std::vector<int64_t>, typename ShapeT,
          typename Fn>
void forEachIndex(const ShapeT &shape, const std::array<StridesT, N> &strides,
                  Fn &&fn) {
  size_t rank = shape.size();
  int64_t total = 1;
  for (size_t d = 0; d < rank; ++d)
    total *= shape[d];
  if (total == 0)
    return;
  std::vector<int64_t> idx(rank, 0);
  std::array<int64_t, N> off{};
  for (int64_t n = 0; n < total; ++n) {
    fn(n, off);
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t k = 0; k < N; ++k)
        off[k] += strides[k][d];
      if (idx[d] < shape[d])
        break;
      for (size_t k = 0; k < N; ++k)
        off[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

} // namespace mwrt

#endif // MWRT_INDEX_WALK_H
