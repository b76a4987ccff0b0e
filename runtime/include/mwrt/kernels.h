//===- kernels.h - CPU kernels of the mw ops --------------------*- C++ -*-===//
//
// The CPU backend's kernel library: one kernel per op of the mw dialect, with
// the semantics of the reference evaluator (lib/Eval/Evaluator.cpp, float
// path) bit for bit, except matmul through OpenBLAS (docs/runtime-kernels.md
// states the tolerance). A plan interpreter calls runCpuKernel once per step
// with raw buffers in its arena; nothing here knows about plans. Every call
// checks arity, dtypes, shapes, layouts and attributes first and reports a bad
// call as a status with a one-line message (mwrt_last_error), never a crash.
//
//===---------------------------------------------------------------------===//

#ifndef MWRT_KERNELS_H
#define MWRT_KERNELS_H

#include "mwrt/mwrt.h"
#include "mwrt/op_table.h"
#include "mwrt/safetensors.h" // DType

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace mwrt {

/// A non-owning view of `size` contiguous `T`s, like llvm::ArrayRef (C++17
/// has no std::span). A view of an initializer list lives only as long as the
/// full expression that creates it, which is enough to pass it to a call.
template <typename T> class ArrayView {
public:
  using Value = std::remove_const_t<T>;

  constexpr ArrayView() = default;
  constexpr ArrayView(T *data, size_t size) : ptr(data), len(size) {}
  ArrayView(std::vector<Value> &v) : ptr(v.data()), len(v.size()) {}
  template <typename U = T, typename = std::enable_if_t<std::is_const_v<U>>>
  ArrayView(const std::vector<Value> &v) : ptr(v.data()), len(v.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push // as llvm::ArrayRef: the view is the argument's
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
#endif
  template <typename U = T, typename = std::enable_if_t<std::is_const_v<U>>>
  ArrayView(std::initializer_list<Value> list)
      : ptr(list.begin()), len(list.size()) {}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
  template <size_t N> constexpr ArrayView(T (&array)[N]) : ptr(array), len(N) {}

  T *data() const { return ptr; }
  size_t size() const { return len; }
  bool empty() const { return len == 0; }
  T *begin() const { return ptr; }
  T *end() const { return ptr + len; }
  T &operator[](size_t i) const { return ptr[i]; }

private:
  T *ptr = nullptr;
  size_t len = 0;
};

// OpKind, kNumOpKinds, opKindName and parseOpKind: the ops of the mw dialect,
// generated from its ODS (mwrt/op_table.h).

/// Whether the kernels take `dtype`: F32, F16, BF16, I32 and I64, and the
/// quantized KV cache's I8 and F8_E4M3, which only mw.kv_cache_write and
/// mw.paged_attention accept.
bool isKernelDType(DType dtype);

/// A tensor in memory, as a plan binds it: element `index` (row-major index
/// vector over `shape`) lives at `data` + sum(index[d] * strides[d]) elements.
/// Empty `strides` means row-major contiguous. Inputs may have any strides
/// (zero for broadcast views, negative for reversed ones); outputs must not
/// overlap themselves. `data` must hold every addressed element; it may be
/// null when the tensor has no elements. Inputs are only read.
struct TensorRef {
  DType dtype = DType::F32;
  std::vector<int64_t> shape; ///< Empty for rank 0.
  std::vector<int64_t> strides;
  void *data = nullptr;

  TensorRef() = default;
  /// Takes `data` as const so that inputs bind without casts; outputs are
  /// written through it all the same.
  TensorRef(DType dtype, std::vector<int64_t> shape, const void *data,
            std::vector<int64_t> strides = {})
      : dtype(dtype), shape(std::move(shape)), strides(std::move(strides)),
        data(const_cast<void *>(data)) {}

  /// Product of the shape (1 for rank 0).
  int64_t numElements() const;
  /// Whether the elements are row-major and dense.
  bool isContiguous() const;
};

/// An attribute value: an integer, a float, a bool, a string (also raw bytes),
/// or a list of integers or floats.
using AttrValue = std::variant<int64_t, double, bool, std::string,
                               std::vector<int64_t>, std::vector<double>>;

/// An op's attributes by their mw names ("axes", "transpose_rhs", "epsilon").
/// Absent attributes take the op's default; unit attributes are bools (absent
/// means false); enums are strings ("tanh"). Integer values are accepted where
/// a float is expected. A name the op does not have is an error.
class KernelAttrs {
public:
  KernelAttrs &setInt(std::string name, int64_t value);
  KernelAttrs &setFloat(std::string name, double value);
  KernelAttrs &setBool(std::string name, bool value);
  KernelAttrs &setString(std::string name, std::string value);
  KernelAttrs &setInts(std::string name, std::vector<int64_t> value);
  KernelAttrs &setFloats(std::string name, std::vector<double> value);

  /// The value named `name`, or null.
  const AttrValue *find(std::string_view name) const;
  /// Entries in the order they were first set.
  const std::vector<std::pair<std::string, AttrValue>> &entries() const {
    return items;
  }

private:
  KernelAttrs &set(std::string name, AttrValue value);
  std::vector<std::pair<std::string, AttrValue>> items;
};

namespace cpu {
class ThreadPool;
} // namespace cpu

/// Per-call choices that do not change an op's meaning.
struct CpuKernelOptions {
  /// Computes matmul and attention(_grad) with the evaluator's loops
  /// (bit-identical to it) instead of OpenBLAS; always the case in a build
  /// without OpenBLAS.
  bool referenceMatmul = false;
  /// Worker threads the kernels split independent rows, elements, tiles and
  /// matmul column blocks across (the CPU backend's, src/cpu/thread_pool.h);
  /// null runs every kernel on the calling thread. Results are bit-identical
  /// for any thread count.
  cpu::ThreadPool *pool = nullptr;
};

/// The mesh collectives (OpKind::MeshAllReduce, ...) run here as on a mesh
/// of one rank: the result is a copy of the input (src/cpu/collectives.cpp).
/// Runs op `kind` on `ins` (the op's operands in ODS order, variadic ones
/// expanded) writing `outs` (its results in order). An output may be exactly
/// an input (same data, shape, strides and element size) only for the ops
/// that compute in place (docs/runtime-kernels.md); any other overlap between
/// tensors is an error. Returns MWRT_OK, MWRT_INVALID_ARGUMENT for a bad call
/// or bad data (an index out of range, integer division by zero) with nothing
/// written, or MWRT_INTERNAL when host scratch memory runs out.
mwrt_status runCpuKernel(OpKind kind, const KernelAttrs &attrs,
                         ArrayView<const TensorRef> ins,
                         ArrayView<const TensorRef> outs,
                         const CpuKernelOptions &options = {});

/// Whether this build computes matmul with OpenBLAS.
bool cpuMatmulUsesBlas();
/// Number of OpenBLAS threads (1 by default, set on first use). matmul's
/// results repeat for a given count but change with it, so keep 1 where
/// results must not depend on the machine. A no-op without OpenBLAS.
void setCpuBlasThreads(int threads);
/// The OpenBLAS kernel set in use (openblas_get_corename(): "SkylakeX",
/// "Haswell", "Zen", "Prescott"...); empty without OpenBLAS.
std::string cpuBlasCore();
/// The kernel set to ask OpenBLAS for (its OPENBLAS_CORETYPE) where it did
/// not recognize this CPU: a DYNAMIC_ARCH build that fell back to a pre-AVX
/// core (Debian's 0.3.21 picks Prescott's SSE3 kernels on virtual AVX-512
/// Xeons) on a CPU whose AVX-512 ("SkylakeX") or AVX2 and FMA ("Haswell")
/// the OS enables. Empty where OpenBLAS's pick stands: no OpenBLAS, not
/// x86-64, a core that uses AVX, or OPENBLAS_CORETYPE already set (the
/// user's choice, or this advice taken). OpenBLAS reads the variable when
/// it loads, so taking the advice means starting the process again
/// (mw-run does, docs/runtime-kernels.md, "Which OpenBLAS kernels").
std::string cpuBlasCoreAdvice();

/// f16 and bf16 encodings (round to nearest, ties to even; NaNs stay quiet
/// NaNs): mwrt/formulas.h's, which the evaluator uses too.
using formulas::bfloatBitsToFloat;
using formulas::floatToBFloatBits;
using formulas::floatToHalfBits;
using formulas::halfBitsToFloat;

} // namespace mwrt

#endif // MWRT_KERNELS_H
