//===- safetensors_fuzzer.cpp - libFuzzer harness of the reader -----------===//
//
// The reader's contract on any bytes: reject them with a message, or return
// tensors whose bytes match their dtype and shape exactly; a file it accepts
// is also accepted by SafeTensorsFile (the reader of parts), with the same
// tensors, and reads back through writeSafeTensors identically. Run by
// runtime/fuzz/run-sanitized.sh under AddressSanitizer and UBSan.
//
//===----------------------------------------------------------------------===//

#include "mwrt/safetensors.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

using namespace mwrt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SafeTensors st;
  std::string error;
  if (!parseSafeTensors(data, size, st, error)) {
    if (error.empty())
      std::abort();
    return 0;
  }
  for (const std::string &name : st.names()) {
    const TensorData *t = st.find(name);
    if (!t || t->numElements() < 0 ||
        t->bytes.size() !=
            static_cast<size_t>(t->numElements()) * dtypeSize(t->dtype))
      std::abort();
  }
  // The same bytes through the file readers.
  static const std::string path =
      "/tmp/mwrt-fuzz-" + std::to_string(::getpid()) + ".safetensors";
  if (FILE *f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
    SafeTensorsFile file;
    if (!file.open(path, error) || file.names().size() != st.size())
      std::abort();
    for (const std::string &name : st.names()) {
      const SafeTensorsFile::Tensor *t = file.find(name);
      const TensorData *whole = st.find(name);
      if (!t || t->bytes != whole->bytes.size())
        std::abort();
      std::string part(whole->bytes.size(), '\0');
      if (!file.read(name, 0, part.data(), part.size(), error) ||
          part.compare(0, part.size(),
                       reinterpret_cast<const char *>(whole->bytes.data()),
                       whole->bytes.size()) != 0)
        std::abort();
    }
    SafeTensors back;
    if (!writeSafeTensors(path, st, error) ||
        !readSafeTensors(path, back, error) || back.size() != st.size())
      std::abort();
    ::unlink(path.c_str());
  }
  return 0;
}
