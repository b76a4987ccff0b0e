//===- matmul.cpp - Batched matmul through OpenBLAS or the evaluator's loops
//===//
//
// mw.matmul on f32 values (f16 and bf16 are widened, multiplied in f32 and
// rounded once, as the evaluator does). With OpenBLAS the product is one
// cblas_sgemm per batch matrix (or one for the whole batch when the rhs is
// shared and the lhs not transposed); its summation order differs from the
// evaluator's, so results agree within the bound docs/runtime-kernels.md
// states. The reference path is the evaluator's triple loop and agrees bit
// for bit. OpenBLAS runs on one thread unless setCpuBlasThreads says
// otherwise: its results repeat for a given thread count but change with it
// (measured: 1 and 2 threads differ in the last bits of most elements).
// The kernels' own pool (thread_pool.h) spreads a product instead: batch
// matrices, or chunks of result columns (ColumnChunks), each one single-threaded
// cblas_sgemm with the same k and the same operands. Every element's sum
// is then the one the whole call computes (OpenBLAS blocks k the same way
// for any m and n; measured bit-identical on gpt2's shapes, 1 or 2
// workers, docs/runtime-kernels.md), so results do not depend on the
// thread count.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>

#ifdef MWRT_HAVE_OPENBLAS
#include <cblas.h>
#include <mutex>
#endif

namespace mwrt::cpu {

#ifdef MWRT_HAVE_OPENBLAS
static std::once_flag blasThreadsSet;
static void ensureBlasThreads() {
  std::call_once(blasThreadsSet, [] { openblas_set_num_threads(1); });
}
#endif

namespace {
struct MatmulShape {
  int64_t m, n, k;
  bool transA, transB;
  Shape batch;                       ///< the result's batch dimensions
  std::array<Shape, 2> batchStrides; ///< in whole matrices of lhs and rhs
};

void referenceMatmul(const MatmulShape &s, const float *a, const float *b,
                     float *c) {
  int64_t m = s.m, n = s.n, k = s.k;
  forEachIndex<2>(s.batch, s.batchStrides,
                  [&](int64_t bi, const std::array<int64_t, 2> &o) {
                    matmulRows(s.transA, s.transB, m, n, k, a + o[0] * m * k,
                               s.transA ? m : k, b + o[1] * k * n,
                               s.transB ? k : n, c + bi * m * n,
                               /*reference=*/true);
                  });
}

#ifdef MWRT_HAVE_OPENBLAS
/// Element offsets of batch element `bi` (row-major over `batch`, as
/// forEachIndex walks it) in tensors with batch strides `strides`.
template <size_t N>
std::array<int64_t, N> batchOffsets(const Shape &batch,
                                    const std::array<Shape, N> &strides,
                                    int64_t bi) {
  std::array<int64_t, N> o{};
  for (size_t d = batch.size(); d-- > 0;) {
    int64_t i = bi % batch[d];
    bi /= batch[d];
    for (size_t j = 0; j < N; ++j)
      o[j] += i * strides[j][d];
  }
  return o;
}

constexpr int64_t kColumnBlock = kBlasColumnBlock;
constexpr int64_t kBlockWork = kBlasBlockWork;

/// The column chunks of one product, from the problem's size alone. OpenBLAS
/// may pick a different kernel (and summation order) for a different call
/// width (its small-matrix paths on some CPUs, AMD Zen among them), so the
/// calls must not depend on how many workers there are: the same chunks are
/// made with any pool or none, and the bits are the same.
///
/// Each chunk is one sgemm over all m rows, which packs the whole of op(A)
/// again: m·k elements copied for 2·m·k·w FLOPs, so the packing's share
/// falls as 1/w. Chunks are at least kMinChunkBlocks blocks of 64 columns
/// (512) and kBlasBlockWork multiply-adds, and their count is made even
/// (where there is more than one) with the columns shared evenly, so that
/// two or four workers finish together: on gpt2-small's [1024, 768] x
/// [768, 3072] product with the AVX-512 kernels, one thread, 256-column
/// chunks ran at 141 GFLOP/s, 512-column ones at 148 and one call at 156;
/// n = 768 makes two chunks of 384 (three of 256 before: two workers, one
/// idle a third of the time). The gpt2-small training step (2 threads,
/// 128-row fused matmul tiles): 6.61-6.69 s with the old chunks (256
/// columns, any count), 6.42-6.48 s with an even count of them, 6.25-6.33 s
/// with this rule (docs/fusion.md).
struct ColumnChunks {
  static constexpr int64_t kMinChunkBlocks = 8;
  int64_t width = 0, count = 0;
  ColumnChunks(int64_t m, int64_t n, int64_t k) {
    int64_t unitWork = std::max<int64_t>(m * kColumnBlock * k, 1);
    int64_t grain = std::max<int64_t>(kMinChunkBlocks,
                                      (kBlockWork + unitWork - 1) / unitWork);
    int64_t blocks = (n + kColumnBlock - 1) / kColumnBlock;
    count = (blocks + grain - 1) / grain;
    if (count > 1 && count % 2)
      ++count;
    width = (blocks + count - 1) / count * kColumnBlock;
    count = (n + width - 1) / width;
  }
};

/// Chunk `chunk` of one cblas_sgemm (row major, alpha 1, beta 0): the same
/// product on its columns of op(B) and C.
void sgemmChunk(const ColumnChunks &chunks, int64_t chunk, bool transA,
                bool transB, int64_t m, int64_t n, int64_t k, const float *a,
                int64_t lda, const float *b, int64_t ldb, float *c,
                int64_t ldc) {
  CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  int64_t j0 = chunk * chunks.width, j1 = std::min(n, j0 + chunks.width);
  cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m),
              static_cast<int>(j1 - j0), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), transB ? b + j0 * ldb : b + j0,
              static_cast<int>(ldb), 0.0f, c + j0, static_cast<int>(ldc));
}

/// One product, its column chunks across the pool's workers.
void sgemmColumns(const CpuKernelOptions &options, bool transA, bool transB,
                  int64_t m, int64_t n, int64_t k, const float *a,
                  int64_t lda, const float *b, int64_t ldb, float *c,
                  int64_t ldc) {
  ColumnChunks chunks(m, n, k);
  parallelFor(options, chunks.count, 1, [&](int, int64_t c0, int64_t c1) {
    for (int64_t q = c0; q < c1; ++q)
      sgemmChunk(chunks, q, transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
  });
}

/// Products of `count` batch elements: small ones whole, the batch across
/// the workers; large ones in column chunks, every (element, chunk) pair
/// across the workers. The choice depends on the sizes only, never on the
/// pool, so any thread count gives the same bits.
template <typename Offsets>
void sgemmBatch(const CpuKernelOptions &options, int64_t count, bool transA,
                bool transB, int64_t m, int64_t n, int64_t k, const float *a,
                int64_t lda, const float *b, int64_t ldb, float *c,
                int64_t ldc, Offsets offsets) {
  if (m * n * k < kBlockWork) {
    CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
    CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
    int64_t grain = std::max<int64_t>(
        1, kBlockWork / std::max<int64_t>(m * n * k, 1));
    parallelFor(options, count, grain, [&](int, int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi) {
        std::array<int64_t, 3> o = offsets(bi);
        cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m),
                    static_cast<int>(n), static_cast<int>(k), 1.0f, a + o[0],
                    static_cast<int>(lda), b + o[1], static_cast<int>(ldb),
                    0.0f, c + o[2], static_cast<int>(ldc));
      }
    });
    return;
  }
  ColumnChunks chunks(m, n, k);
  parallelFor(options, count * chunks.count, 1,
              [&](int, int64_t q0, int64_t q1) {
                for (int64_t q = q0; q < q1; ++q) {
                  std::array<int64_t, 3> o = offsets(q / chunks.count);
                  sgemmChunk(chunks, q % chunks.count, transA, transB, m, n,
                             k, a + o[0], lda, b + o[1], ldb, c + o[2], ldc);
                }
              });
}

/// Whether sgemm can take the problem: its sizes are C ints.
bool fitsBlas(const MatmulShape &s) {
  int64_t batchRows = product(s.batch) * s.m;
  return std::max({s.m, s.n, s.k, batchRows}) <= INT_MAX;
}

void blasMatmul(const MatmulShape &s, const float *a, const float *b, float *c,
                int64_t lhsMatrices, int64_t rhsMatrices,
                const CpuKernelOptions &options) {
  int64_t m = s.m, n = s.n, k = s.k, count = product(s.batch);
  if (m == 0 || n == 0 || count == 0)
    return;
  if (k == 0) { // sgemm rejects a zero leading dimension
    std::fill(c, c + count * m * n, 0.0f);
    return;
  }
  ensureBlasThreads();
  int64_t lda = s.transA ? m : k;
  int64_t ldb = s.transB ? k : n;
  if (!s.transA && rhsMatrices == 1 && lhsMatrices == count) {
    // One rhs for every batch element and lhs matrices stacked in batch
    // order: one [count*m, k] x [k, n] product.
    sgemmColumns(options, false, s.transB, count * m, n, k, a, lda, b, ldb, c,
                 n);
    return;
  }
  sgemmBatch(options, count, s.transA, s.transB, m, n, k, a, lda, b, ldb, c, n,
             [&](int64_t bi) -> std::array<int64_t, 3> {
               std::array<int64_t, 2> o =
                   batchOffsets<2>(s.batch, s.batchStrides, bi);
               return {o[0] * m * k, o[1] * k * n, bi * m * n};
             });
}

/// An f32 operand whose matrices are rows of unit-stride elements (a
/// transposed, sliced or merged view of a buffer): its leading dimension and
/// the element strides of its batch dimensions, so that sgemm reads or
/// writes it in place.
struct MatrixView {
  int64_t ld = 0;
  Shape batchStrides;
};

bool matrixView(const TensorRef &t, MatrixView &v) {
  size_t r = t.shape.size();
  Shape st = stridesOf(t);
  int64_t rows = t.shape[r - 2], cols = t.shape[r - 1];
  if (t.dtype != DType::F32 || (cols != 1 && st[r - 1] != 1) ||
      std::any_of(st.begin(), st.end(), [](int64_t s) { return s < 0; }))
    return false;
  v.ld = rows == 1 ? std::max<int64_t>(cols, 1) : st[r - 2];
  v.batchStrides.assign(st.begin(), st.end() - 2);
  return v.ld >= std::max<int64_t>(cols, 1) && v.ld <= INT_MAX;
}

/// The strided operands in place: one sgemm per batch element.
void blasMatmulViews(const MatmulShape &s, const KernelCall &c,
                     const MatrixView &va, const MatrixView &vb,
                     const MatrixView &vc) {
  const TensorRef &a = c.in(0), &b = c.in(1), &out = c.out(0);
  Shape aBatch(a.shape.begin(), a.shape.end() - 2);
  Shape bBatch(b.shape.begin(), b.shape.end() - 2);
  ensureBlasThreads();
  const float *pa = static_cast<const float *>(a.data);
  const float *pb = static_cast<const float *>(b.data);
  float *pc = static_cast<float *>(out.data);
  std::array<Shape, 3> strides = {
      broadcastStrides(aBatch, va.batchStrides, s.batch),
      broadcastStrides(bBatch, vb.batchStrides, s.batch), vc.batchStrides};
  sgemmBatch(c.options, product(s.batch), s.transA, s.transB, s.m, s.n, s.k,
             pa, va.ld, pb, vb.ld, pc, vc.ld, [&](int64_t bi) {
               return batchOffsets<3>(s.batch, strides, bi);
             });
}
#endif
} // namespace

bool blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              float alpha, const float *a, int64_t lda, const float *b,
              int64_t ldb, float beta, float *c, int64_t ldc) {
#ifdef MWRT_HAVE_OPENBLAS
  if (m == 0 || n == 0 || k == 0 ||
      std::max({m, n, k, lda, ldb, ldc}) > INT_MAX)
    return false;
  ensureBlasThreads();
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c,
              static_cast<int>(ldc));
  return true;
#else
  (void)transA, (void)transB, (void)m, (void)n, (void)k, (void)alpha;
  (void)a, (void)lda, (void)b, (void)ldb, (void)beta, (void)c, (void)ldc;
  return false;
#endif
}

void matmulRows(bool transA, bool transB, int64_t rows, int64_t n, int64_t k,
                const float *a, int64_t lda, const float *b, int64_t ldb,
                float *c, bool reference, int64_t ldc) {
  if (rows == 0 || n == 0)
    return;
  if (ldc < 0)
    ldc = n;
#ifdef MWRT_HAVE_OPENBLAS
  if (!reference && std::max({rows, n, k, lda, ldb, ldc}) <= INT_MAX) {
    if (k == 0) {
      for (int64_t i = 0; i < rows; ++i)
        std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
      return;
    }
    ensureBlasThreads();
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
                transB ? CblasTrans : CblasNoTrans, static_cast<int>(rows),
                static_cast<int>(n), static_cast<int>(k), 1.0f, a,
                static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f, c,
                static_cast<int>(ldc));
    return;
  }
#endif
  (void)reference;
  // referenceMatmul's loop, element by element in the same order.
  int64_t aRow = transA ? 1 : lda, aCol = transA ? lda : 1;
  int64_t bRow = transB ? 1 : ldb, bCol = transB ? ldb : 1;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (int64_t p = 0; p < k; ++p)
        acc += a[i * aRow + p * aCol] * b[p * bRow + j * bCol];
      c[i * ldc + j] = acc;
    }
}

mwrt_status runMatmul(KernelCall &c) {
  const TensorRef &a = c.in(0), &b = c.in(1), &out = c.out(0);
  MWRT_TRY(c.expectFloat(a, "lhs"));
  size_t ar = a.shape.size(), br = b.shape.size();
  if (ar < 2)
    return c.fail("lhs must have rank >= 2, got ", ar);
  if (br < 2)
    return c.fail("rhs must have rank >= 2, got ", br);
  if (b.dtype != a.dtype)
    return c.fail("rhs element type ", typeName(b.dtype),
                  " differs from the lhs element type ", typeName(a.dtype));
  MatmulShape s;
  MWRT_TRY(c.getBool("transpose_lhs", s.transA));
  MWRT_TRY(c.getBool("transpose_rhs", s.transB));
  s.m = s.transA ? a.shape[ar - 1] : a.shape[ar - 2];
  s.k = s.transA ? a.shape[ar - 2] : a.shape[ar - 1];
  int64_t k2 = s.transB ? b.shape[br - 1] : b.shape[br - 2];
  s.n = s.transB ? b.shape[br - 2] : b.shape[br - 1];
  if (s.k != k2)
    return c.fail("contracting dimensions differ: ", s.k, " vs ", k2);
  Shape aBatch(a.shape.begin(), a.shape.end() - 2);
  Shape bBatch(b.shape.begin(), b.shape.end() - 2);
  if (!broadcastShapes(aBatch, bBatch, s.batch))
    return c.fail("batch dimensions ", shapeString(aBatch), " and ",
                  shapeString(bBatch), " are not broadcast-compatible");
  Shape shape = s.batch;
  shape.push_back(s.m);
  shape.push_back(s.n);
  MWRT_TRY(c.expectType(out, "result", shape, a.dtype));
  s.batchStrides = {broadcastStrides(aBatch, rowMajorStrides(aBatch), s.batch),
                    broadcastStrides(bBatch, rowMajorStrides(bBatch), s.batch)};
#ifdef MWRT_HAVE_OPENBLAS
  // A strided f32 view (--mw-fold-views) whose matrices have unit-stride
  // rows goes to sgemm in place instead of through a dense copy: the same
  // products, without copying.
  MatrixView va, vb, vc;
  if (!c.options.referenceMatmul && fitsBlas(s) && s.m > 0 && s.n > 0 &&
      s.k > 0 && (!a.isContiguous() || !b.isContiguous() || !out.isContiguous()) &&
      matrixView(a, va) && matrixView(b, vb) && matrixView(out, vc)) {
    blasMatmulViews(s, c, va, vb, vc);
    return MWRT_OK;
  }
#endif
  FloatSrc x(a), y(b);
  FloatDst r(out);
#ifdef MWRT_HAVE_OPENBLAS
  if (!c.options.referenceMatmul && fitsBlas(s))
    blasMatmul(s, x.data(), y.data(), r.data(), product(aBatch),
               product(bBatch), c.options);
  else
    referenceMatmul(s, x.data(), y.data(), r.data());
#else
  referenceMatmul(s, x.data(), y.data(), r.data());
#endif
  r.commit();
  return MWRT_OK;
}

} // namespace mwrt::cpu

bool mwrt::cpuMatmulUsesBlas() {
#ifdef MWRT_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

std::string mwrt::cpuBlasCore() {
#ifdef MWRT_HAVE_OPENBLAS
  const char *name = openblas_get_corename();
  return name ? name : "";
#else
  return "";
#endif
}

std::string mwrt::cpuBlasCoreAdvice() {
#if defined(MWRT_HAVE_OPENBLAS) && defined(__x86_64__)
  if (std::getenv("OPENBLAS_CORETYPE"))
    return "";
  // Only a DYNAMIC_ARCH build chooses its kernels at load time.
  const char *config = openblas_get_config();
  if (!config || !std::strstr(config, "DYNAMIC_ARCH"))
    return "";
  // The cores of OpenBLAS's x86-64 dynamic table (driver/others/dynamic.c)
  // whose kernels use no AVX: what it falls back to for a CPU model it does
  // not know.
  static constexpr const char *kPreAvx[] = {
      "Unknown", "Katmai",  "Coppermine", "Northwood",    "Prescott",
      "Banias",  "Atom",    "Core2",      "Penryn",       "Dunnington",
      "Nehalem", "Athlon",  "Opteron",    "Opteron_SSE3", "Barcelona",
      "Nano",    "Bobcat"};
  std::string core = cpuBlasCore();
  if (std::none_of(std::begin(kPreAvx), std::end(kPreAvx),
                   [&](const char *c) { return core == c; }))
    return "";
  // __builtin_cpu_supports reports a feature only where the OS saves its
  // registers (XCR0), as OpenBLAS's own checks require.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512vl"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return "Haswell";
  return "";
#else
  return "";
#endif
}

void mwrt::setCpuBlasThreads(int threads) {
#ifdef MWRT_HAVE_OPENBLAS
  cpu::ensureBlasThreads();
  openblas_set_num_threads(std::max(threads, 1));
#else
  (void)threads;
#endif
}
