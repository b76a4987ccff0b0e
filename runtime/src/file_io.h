//===- file_io.h - Reading a file's byte range ------------------*- C++ -*-===//
//
// Private to the runtime: the pread loop that the safetensors reader and the
// offloaded weights' reader share.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_SRC_FILE_IO_H
#define MWRT_SRC_FILE_IO_H

#include <cerrno>
#include <cstddef>
#include <cstdint>

#include <unistd.h>

namespace mwrt::detail {

/// Reads `size` bytes at `offset` of `fd` into `data`, retrying short reads,
/// until they are all read or the file ends; `got` is the count read. False
/// with errno's value in `code` when a read fails.
inline bool preadFully(int fd, uint8_t *data, uint64_t size, uint64_t offset,
                       uint64_t &got, int &code) {
  got = 0;
  code = 0;
  while (got < size) {
    ssize_t n = ::pread(fd, data + got, static_cast<size_t>(size - got),
                        static_cast<off_t>(offset + got));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      code = errno;
      return false;
    }
    if (n == 0)
      return true;
    got += static_cast<uint64_t>(n);
  }
  return true;
}

} // namespace mwrt::detail

#endif // MWRT_SRC_FILE_IO_H
