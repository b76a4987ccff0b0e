//===- fused_nvrtc.cpp - Compiling fused kernels with NVRTC ---------------===//
//
// The CUDA C of a fused kernel (fused_codegen.cpp) becomes PTX through
// NVRTC when a plan is loaded; no device is needed for that, so the CPU-only
// CI compiles every generated kernel too (FusedCudaTest). Results are cached
// on disk by content hash: the file <cache>/<hash>.ptx, where the hash
// (FNV-1a, 64 bits) covers the source, the target architecture and NVRTC's
// version. The cache directory is $MWRT_CUDA_CACHE_DIR, else
// $XDG_CACHE_HOME/memwall/cuda, else $HOME/.cache/memwall/cuda;
// MWRT_CUDA_CACHE_DIR=off disables it. A cache that cannot be written is
// skipped silently (compiling again is always correct).
//
//===----------------------------------------------------------------------===//

#include "cuda/fused_nvrtc.h"
#include "cuda/fused_codegen.h"
#include "mwrt/plan.h"
#include "status.h"

#include <nvrtc.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace mwrt;
using namespace mwrt::detail;

namespace {

std::string cacheDir() {
  if (const char *dir = std::getenv("MWRT_CUDA_CACHE_DIR"))
    return std::string(dir) == "off" ? std::string() : std::string(dir);
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    return std::string(xdg) + "/memwall/cuda";
  if (const char *home = std::getenv("HOME"); home && *home)
    return std::string(home) + "/.cache/memwall/cuda";
  return "";
}

/// mkdir -p.
bool makeDirs(const std::string &path) {
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at < path.size() && path[at] != '/')
      continue;
    std::string prefix = path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  return true;
}

} // namespace

std::string detail::fusedCacheDirectory() { return cacheDir(); }

mwrt_status detail::compileFusedCuda(const std::string &source, int sm,
                                     std::string &ptx, bool *fromCache) {
  if (fromCache)
    *fromCache = false;
  int major = 0, minor = 0;
  nvrtcVersion(&major, &minor);
  std::string arch = "compute_" + std::to_string(sm);
  std::string keyText = source + "\n" + arch + "\nnvrtc " +
                        std::to_string(major) + "." + std::to_string(minor);
  char hash[17];
  std::snprintf(hash, sizeof hash, "%016llx",
                static_cast<unsigned long long>(
                    planChecksum(keyText.data(), keyText.size())));
  std::string dir = cacheDir();
  std::string path = dir.empty() ? "" : dir + "/" + hash + ".ptx";
  if (!path.empty()) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream text;
      text << in.rdbuf();
      ptx = text.str();
      if (!ptx.empty()) {
        if (fromCache)
          *fromCache = true;
        return MWRT_OK;
      }
    }
  }

  const auto &headers = fusedCudaHeaders();
  std::vector<const char *> contents, names;
  for (const auto &[name, text] : headers) {
    names.push_back(name.c_str());
    contents.push_back(text.c_str());
  }
  nvrtcProgram program;
  if (nvrtcResult r = nvrtcCreateProgram(
          &program, source.c_str(), "mw_fused.cu",
          static_cast<int>(headers.size()), contents.data(), names.data());
      r != NVRTC_SUCCESS)
    return setError(MWRT_INTERNAL, std::string("nvrtcCreateProgram: ") +
                                       nvrtcGetErrorString(r));
  // -fmad=false: the kernels round like the CPU kernels (kernels.cu);
  // -default-device: formulas.h's unannotated helpers (layerNormRow, ...)
  // compile for the device, as nvcc does not need them to.
  std::string archFlag = "--gpu-architecture=" + arch;
  const char *options[] = {archFlag.c_str(), "--std=c++17", "--fmad=false",
                           "-default-device"};
  nvrtcResult r = nvrtcCompileProgram(program, 4, options);
  if (r != NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    nvrtcDestroyProgram(&program);
    return setError(MWRT_INTERNAL,
                    std::string("NVRTC cannot compile a fused kernel (") +
                        nvrtcGetErrorString(r) + "): " + log);
  }
  size_t size = 0;
  nvrtcGetPTXSize(program, &size);
  ptx.assign(size, '\0');
  nvrtcGetPTX(program, ptx.data());
  nvrtcDestroyProgram(&program);
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  if (!path.empty() && makeDirs(dir)) {
    // Through a temporary and a rename, so a reader never sees half a file.
    std::string tmp = path + ".tmp" + std::to_string(::getpid());
    std::ofstream out(tmp, std::ios::binary);
    out << ptx;
    out.close();
    if (!out || std::rename(tmp.c_str(), path.c_str()) != 0)
      std::remove(tmp.c_str());
  }
  return MWRT_OK;
}
