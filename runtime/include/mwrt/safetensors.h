//===- safetensors.h - Reading and writing safetensors files ---*- C++ -*-===//
//
// Safetensors (Hugging Face) is how Memwall exchanges weights and reference
// tensors: mw-eval reads inputs and writes expected outputs with it, and
// mw-run reads the same files, so both sides share this one C++ API. A file
// is an 8-byte little-endian header length N, N bytes of JSON naming each
// tensor's dtype, shape and byte range, then the byte buffer. Reading
// validates everything a corrupt or truncated file could get wrong and
// reports it as a one-line message; writing is byte-for-byte deterministic and
// atomic. Nothing here throws: every failure is a `false` plus a message.
//
//===---------------------------------------------------------------------===//

#ifndef MWRT_SAFETENSORS_H
#define MWRT_SAFETENSORS_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace mwrt {

/// Element types Memwall exchanges. The safetensors format knows more (I16,
/// U32, F8_E5M2, ...); files holding those are rejected with a message naming
/// the dtype rather than misread. F8_E4M3 is MLIR's f8E4M3FN (the quantized
/// KV cache's), as in PyTorch's float8_e4m3fn.
enum class DType { F32, F16, BF16, I32, I64, F64, I8, U8, BOOL, F8_E4M3 };

/// The safetensors spelling of `dtype`: "F32", "F16", "BF16", ...
const char *dtypeName(DType dtype);

/// Sets `dtype` from its safetensors spelling; false (and `dtype` unchanged)
/// when `name` is not one of the spellings dtypeName returns.
bool parseDType(std::string_view name, DType &dtype);

/// Bytes per element of `dtype` (BOOL is one byte).
size_t dtypeSize(DType dtype);

/// One tensor: row-major, little-endian bytes exactly as they are in the file.
struct TensorData {
  DType dtype = DType::F32;
  std::vector<int64_t> shape; ///< Empty for a rank-0 (scalar) tensor.
  std::vector<uint8_t> bytes;

  /// Product of `shape` (1 for rank 0); -1 when a dimension is negative or
  /// the product overflows int64_t, so callers can reject such shapes.
  int64_t numElements() const;
};

/// The contents of a safetensors file: named tensors and string metadata.
/// Tensors keep the order they were added in; the file layout does not
/// depend on that order (see writeSafeTensors). Pointers returned by find()
/// stay valid until the object is destroyed or assigned to.
class SafeTensors {
public:
  /// Adds `tensor` under `name`. Returns false with a message in `error`
  /// (and changes nothing) when the name is already present, is
  /// "__metadata__" (reserved by the format) or is not valid UTF-8, when the
  /// shape has a negative dimension or overflows, or when `bytes` does not
  /// hold exactly numElements() * dtypeSize(dtype) bytes.
  bool add(std::string name, TensorData tensor, std::string &error);

  /// The tensor called `name`, or null when there is none.
  const TensorData *find(std::string_view name) const;

  /// Tensor names in insertion order.
  const std::vector<std::string> &names() const { return order; }
  size_t size() const { return order.size(); }

  /// The "__metadata__" map. Keys and values must be valid UTF-8 for
  /// writeSafeTensors to accept them.
  const std::map<std::string, std::string> &metadata() const { return meta; }
  std::map<std::string, std::string> &metadata() { return meta; }

private:
  std::vector<std::string> order;
  // std::less<> lets find() look up a string_view without allocating; a
  // node-based map keeps find()'s pointers stable across later add() calls.
  std::map<std::string, TensorData, std::less<>> tensors;
  std::map<std::string, std::string> meta;
};

/// Reads and validates the safetensors file at `path`. On success replaces
/// `out` with its contents, tensors in the order of their data in the file
/// (ties broken by name); on failure leaves `out` untouched and sets `error`
/// to one line naming the file and, where one is at fault, the tensor.
/// Tensor data is read straight into each tensor, so peak memory is about
/// the file's size, not twice it.
bool readSafeTensors(const std::string &path, SafeTensors &out,
                     std::string &error);

/// As readSafeTensors, from the `size` bytes of a whole file at `data`.
bool parseSafeTensors(const uint8_t *data, size_t size, SafeTensors &out,
                      std::string &error);

/// A safetensors file opened for reading parts of tensors: the header is
/// read and validated as readSafeTensors does, but no tensor data until
/// read() asks for a byte range of one tensor. A rank of a ZeRO plan reads
/// its piece of a whole checkpoint this way, so no rank holds the file.
class SafeTensorsFile {
public:
  struct Tensor {
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    uint64_t bytes = 0;  ///< the tensor's size in the file
    uint64_t offset = 0; ///< where its bytes start, from the file's start
  };

  SafeTensorsFile() = default;
  SafeTensorsFile(const SafeTensorsFile &) = delete;
  SafeTensorsFile &operator=(const SafeTensorsFile &) = delete;
  ~SafeTensorsFile();

  /// Opens `path` and validates its header; false with `error` (one line
  /// naming the file) when it cannot be opened or is not valid safetensors.
  bool open(const std::string &path, std::string &error);
  const std::string &path() const { return filePath; }

  /// The tensor called `name`, or null.
  const Tensor *find(std::string_view name) const;
  /// Names in the order of their data in the file.
  const std::vector<std::string> &names() const { return order; }

  /// Reads `size` bytes of tensor `name` starting `offset` bytes into it.
  /// False with `error` when the range is outside the tensor or the read
  /// fails.
  bool read(std::string_view name, uint64_t offset, void *dst, size_t size,
            std::string &error) const;

private:
  struct Entry : Tensor {
    uint64_t begin = 0; ///< from the start of the file
  };
  std::string filePath;
  int fd = -1;
  std::vector<std::string> order;
  std::map<std::string, Entry, std::less<>> entries;
};

/// Writes `in` to `path`. The bytes depend only on the content, never on
/// insertion order: tensor data is laid out sorted by name with no gaps, the
/// header JSON has sorted keys and no whitespace, and it is padded with
/// spaces so the byte buffer starts at a multiple of 8. "__metadata__" is
/// written only when the metadata is non-empty. The file is written to a
/// temporary in the same directory, fsynced and renamed over `path`, so
/// readers see the old file or the new one, never a partial one; on failure
/// the temporary is removed, an existing `path` is left as it was, and
/// `error` says why. Where the filesystem has unnamed files (O_TMPFILE) the
/// temporary has no name until it is complete, so a killed writer leaves no
/// partial file.
bool writeSafeTensors(const std::string &path, const SafeTensors &in,
                      std::string &error);

} // namespace mwrt

#endif // MWRT_SAFETENSORS_H
