//===- offload_reader.h - Weights files read a tensor at a time -*- C++ -*-===//
//
// Private to the runtime. The File persistents of an offloaded plan
// (docs/offload.md "runtime") stay in a safetensors file and are read, one
// tensor's byte range at a time, while the step runs. An OffloadFile is one
// such file: its header parsed once, its size and modification time taken
// when the session opens it, and reads with pread, through O_DIRECT (an
// aligned bounce buffer: the file offset, length and address are rounded to
// kDirectAlignment, and the tensor's bytes start `delta` bytes in) where the
// filesystem takes it, else buffered. A file that a read finds truncated or
// changed since it was opened is refused, naming the tensor. Reads are
// thread-safe (pread).
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_OFFLOAD_READER_H
#define MWRT_SRC_OFFLOAD_READER_H

#include "mwrt/mwrt.h"
#include "mwrt/safetensors.h"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace mwrt::detail {

/// O_DIRECT's alignment of offsets, lengths and buffers (the largest common
/// logical block size).
inline constexpr uint64_t kDirectAlignment = 4096;

/// The staging bytes a read of `bytes` may need: the tensor plus the
/// rounding of both ends to kDirectAlignment.
uint64_t stagingBytesFor(uint64_t bytes);

class OffloadFile {
public:
  OffloadFile() = default;
  OffloadFile(const OffloadFile &) = delete;
  OffloadFile &operator=(const OffloadFile &) = delete;
  ~OffloadFile();

  /// Opens the safetensors file at `path` and parses its header. With
  /// `direct`, reads go through O_DIRECT when the filesystem takes it;
  /// where it refuses (EINVAL, as some filesystems do), or when the
  /// environment sets MWRT_OFFLOAD_DIRECT=0, they are buffered, which the
  /// first such file in the process says once on stderr.
  mwrt_status open(const std::string &path, bool direct);

  const std::string &path() const { return filePath; }
  const SafeTensorsFile &tensors() const { return header; }
  /// Whether reads go through O_DIRECT.
  bool direct() const { return useDirect.load(); }

  /// Whether the file is as the session opened it (size and modification
  /// time); MWRT_INVALID_ARGUMENT naming `tensor` otherwise.
  mwrt_status check(const std::string &tensor) const;

  /// Reads `bytes` bytes at file offset `offset` (tensor `tensor`'s) into
  /// `staging`, which is kDirectAlignment-aligned and holds
  /// stagingBytesFor(bytes) bytes; `delta` is where they start in it. Checks
  /// the file first; a short read is a truncated file.
  mwrt_status read(const std::string &tensor, uint64_t offset, uint64_t bytes,
                   uint8_t *staging, uint64_t &delta);

private:
  mwrt_status changed(const std::string &tensor, const std::string &how) const;
  mwrt_status truncated(const std::string &tensor, uint64_t at,
                        uint64_t end) const;
  /// Gives up O_DIRECT for this file, saying so once per process.
  void fallBack(const std::string &why);

  std::string filePath;
  SafeTensorsFile header;
  int fd = -1, directFd = -1;
  std::atomic<bool> useDirect{false};
  uint64_t size = 0;
  int64_t mtimeSec = 0, mtimeNsec = 0;
};

} // namespace mwrt::detail

#endif // MWRT_SRC_OFFLOAD_READER_H
