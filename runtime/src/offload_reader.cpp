//===- offload_reader.cpp - Weights files read a tensor at a time ---------===//
//
// See offload_reader.h. O_DIRECT bypasses the page cache, so streaming a
// file larger than host memory neither evicts everything else nor reads the
// bytes twice; it needs aligned offsets, lengths and buffers, which the
// staging buffer provides: the aligned range around the tensor is read and
// the tensor's bytes are used from `delta` on (the CUDA copy reads them from
// there; pinned memory has no alignment needs of its own).
//
//===----------------------------------------------------------------------===//

#include "offload_reader.h"
#include "file_io.h"
#include "status.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace mwrt;
using namespace mwrt::detail;

namespace {

uint64_t alignDown(uint64_t v) { return v / kDirectAlignment * kDirectAlignment; }
uint64_t alignUp(uint64_t v) { return alignDown(v + kDirectAlignment - 1); }

std::string quoted(const std::string &name) { return "'" + name + "'"; }

/// The one note of the process that O_DIRECT was not used.
std::atomic<bool> toldBuffered{false};

} // namespace

uint64_t detail::stagingBytesFor(uint64_t bytes) {
  return alignUp(bytes) + kDirectAlignment;
}

OffloadFile::~OffloadFile() {
  if (fd >= 0)
    ::close(fd);
  if (directFd >= 0)
    ::close(directFd);
}

void OffloadFile::fallBack(const std::string &why) {
  useDirect = false;
  if (!toldBuffered.exchange(true))
    std::fprintf(stderr,
                 "mwrt: note: %s: %s; reading offloaded weights buffered "
                 "(through the page cache)\n",
                 filePath.c_str(), why.c_str());
}

mwrt_status OffloadFile::open(const std::string &path, bool direct) {
  filePath = path;
  std::string error;
  if (!header.open(path, error))
    return setError(::access(path.c_str(), F_OK) != 0 ? MWRT_NOT_FOUND
                                                      : MWRT_INVALID_ARGUMENT,
                    error);
  fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info;
  if (fd < 0 || ::fstat(fd, &info) != 0)
    return setError(MWRT_INVALID_ARGUMENT,
                    path + ": cannot open: " + std::strerror(errno));
  size = static_cast<uint64_t>(info.st_size);
  mtimeSec = info.st_mtim.tv_sec;
  mtimeNsec = info.st_mtim.tv_nsec;
  if (!direct)
    return MWRT_OK;
  const char *env = std::getenv("MWRT_OFFLOAD_DIRECT");
  if (env && std::strcmp(env, "0") == 0) {
    fallBack("O_DIRECT is off (MWRT_OFFLOAD_DIRECT=0)");
    return MWRT_OK;
  }
#ifdef O_DIRECT
  directFd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_DIRECT);
  if (directFd >= 0)
    useDirect = true;
  else
    fallBack(std::string("the filesystem refuses O_DIRECT (") +
             std::strerror(errno) + ")");
#else
  fallBack("this system has no O_DIRECT");
#endif
  return MWRT_OK;
}

mwrt_status OffloadFile::changed(const std::string &tensor,
                                 const std::string &how) const {
  return setError(MWRT_INVALID_ARGUMENT,
                  filePath + ": " + how +
                      " since the session opened it; cannot read tensor " +
                      quoted(tensor) + " (restart with the file as it is)");
}

mwrt_status OffloadFile::truncated(const std::string &tensor, uint64_t at,
                                   uint64_t end) const {
  return setError(MWRT_INVALID_ARGUMENT,
                  filePath + ": truncated: it ends at byte " +
                      std::to_string(at) + ", before tensor " + quoted(tensor) +
                      " does (byte " + std::to_string(end) + ")");
}

mwrt_status OffloadFile::check(const std::string &tensor) const {
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return setError(MWRT_INVALID_ARGUMENT,
                    filePath + ": cannot stat it to read tensor " +
                        quoted(tensor) + ": " + std::strerror(errno));
  auto now = static_cast<uint64_t>(info.st_size);
  if (now < size)
    return changed(tensor, "was truncated from " + std::to_string(size) +
                               " to " + std::to_string(now) + " bytes");
  if (now != size)
    return changed(tensor, "grew from " + std::to_string(size) + " to " +
                               std::to_string(now) + " bytes");
  if (info.st_mtim.tv_sec != mtimeSec || info.st_mtim.tv_nsec != mtimeNsec)
    return changed(tensor, "was modified");
  return MWRT_OK;
}

mwrt_status OffloadFile::read(const std::string &tensor, uint64_t offset,
                              uint64_t bytes, uint8_t *staging,
                              uint64_t &delta) {
  if (mwrt_status st = check(tensor))
    return st;
  uint64_t got = 0;
  int code = 0;
  if (useDirect) {
    uint64_t begin = alignDown(offset), end = alignUp(offset + bytes);
    delta = offset - begin;
    if (preadFully(directFd, staging, end - begin, begin, got, code)) {
      if (got >= delta + bytes)
        return MWRT_OK;
      return truncated(tensor, begin + got, offset + bytes);
    }
    if (code != EINVAL)
      return setError(MWRT_INVALID_ARGUMENT,
                      filePath + ": cannot read tensor " + quoted(tensor) +
                          ": " + std::strerror(code));
    // Opened, but this filesystem refuses direct reads.
    fallBack(std::string("an O_DIRECT read failed (") + std::strerror(code) +
             ")");
  }
  delta = 0;
  if (!preadFully(fd, staging, bytes, offset, got, code))
    return setError(MWRT_INVALID_ARGUMENT,
                    filePath + ": cannot read tensor " + quoted(tensor) +
                        ": " + std::strerror(code));
  if (got < bytes)
    return truncated(tensor, offset + got, offset + bytes);
  return MWRT_OK;
}
