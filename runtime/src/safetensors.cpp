//===- safetensors.cpp - Reading and writing safetensors files ------------===//
//
// Implements mwrt/safetensors.h. The header is parsed with nlohmann-json in
// its non-throwing mode and every value's type is checked before it is read,
// because the header of a corrupt file is attacker-shaped input: any mistake
// here would be an out-of-bounds read or a crash in mw-eval or mw-run. Every
// public function also catches what little can still throw (std::bad_alloc)
// so that no exception leaves this file. File access is POSIX (pread, fsync,
// rename) since the runtime targets Linux and atomic replacement needs it.
//
//===---------------------------------------------------------------------===//

#include "mwrt/safetensors.h"
#include "file_io.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <limits>
#include <new>
#include <set>
#include <system_error>
#include <tuple>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using Json = nlohmann::json;

namespace mwrt {

//===----------------------------------------------------------------------===//
// DType and TensorData
//===----------------------------------------------------------------------===//

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  size_t size;
};

constexpr DTypeInfo dtypeTable[] = {
    {DType::F32, "F32", 4}, {DType::F16, "F16", 2}, {DType::BF16, "BF16", 2},
    {DType::I32, "I32", 4}, {DType::I64, "I64", 8}, {DType::F64, "F64", 8},
    {DType::I8, "I8", 1},   {DType::U8, "U8", 1},   {DType::BOOL, "BOOL", 1},
    {DType::F8_E4M3, "F8_E4M3", 1},
};

const DTypeInfo *lookup(DType dtype) {
  for (const DTypeInfo &info : dtypeTable)
    if (info.dtype == dtype)
      return &info;
  return nullptr;
}
} // namespace

const char *dtypeName(DType dtype) {
  const DTypeInfo *info = lookup(dtype);
  return info ? info->name : "?";
}

bool parseDType(std::string_view name, DType &dtype) {
  for (const DTypeInfo &info : dtypeTable) {
    if (name == info.name) {
      dtype = info.dtype;
      return true;
    }
  }
  return false;
}

size_t dtypeSize(DType dtype) {
  const DTypeInfo *info = lookup(dtype);
  return info ? info->size : 0;
}

namespace {
constexpr int64_t int64Max = std::numeric_limits<int64_t>::max();

/// Product of `shape`, or -1 when a dimension is negative or it overflows.
int64_t elementCount(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0)
      return -1;
  for (int64_t dim : shape) {
    // A zero anywhere makes the product 0 however large the rest is, so check
    // for it before any multiplication can overflow.
    if (dim == 0)
      return 0;
  }
  for (int64_t dim : shape) {
    if (count > int64Max / dim)
      return -1;
    count *= dim;
  }
  return count;
}
} // namespace

int64_t TensorData::numElements() const { return elementCount(shape); }

//===----------------------------------------------------------------------===//
// Message helpers
//===----------------------------------------------------------------------===//

namespace {
/// `text` in single quotes, with control bytes escaped, so that a tensor name
/// from a hostile file cannot break the one-line message it appears in.
std::string quote(std::string_view text) {
  static const char hex[] = "0123456789abcdef";
  std::string result = "'";
  for (char c : text) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      result += "\\x";
      result += hex[byte >> 4];
      result += hex[byte & 0xf];
    } else {
      result += c;
    }
  }
  return result + "'";
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string result = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      result += ", ";
    result += std::to_string(shape[i]);
  }
  return result + "]";
}

std::string errnoText(int code) {
  return std::generic_category().message(code);
}

/// JSON strings must be UTF-8 and nlohmann's serializer rejects (by throwing)
/// anything else, so names and metadata are checked before a write.
bool isValidUtf8(std::string_view text) {
  size_t i = 0;
  size_t n = text.size();
  while (i < n) {
    auto lead = static_cast<unsigned char>(text[i]);
    if (lead < 0x80) {
      ++i;
      continue;
    }
    size_t length;
    uint32_t codePoint;
    if ((lead & 0xe0) == 0xc0) {
      length = 2;
      codePoint = lead & 0x1f;
    } else if ((lead & 0xf0) == 0xe0) {
      length = 3;
      codePoint = lead & 0x0f;
    } else if ((lead & 0xf8) == 0xf0) {
      length = 4;
      codePoint = lead & 0x07;
    } else {
      return false;
    }
    if (n - i < length)
      return false;
    for (size_t k = 1; k < length; ++k) {
      auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xc0) != 0x80)
        return false;
      codePoint = (codePoint << 6) | (next & 0x3f);
    }
    static const uint32_t minimum[] = {0, 0, 0x80, 0x800, 0x10000};
    if (codePoint < minimum[length] || codePoint > 0x10ffff ||
        (codePoint >= 0xd800 && codePoint <= 0xdfff))
      return false;
    i += length;
  }
  return true;
}

/// Checks a shape and computes the byte size it needs; on failure sets
/// `problem` to the reason, without any prefix.
bool shapeByteSize(const std::vector<int64_t> &shape, DType dtype,
                   int64_t &byteSize, std::string &problem) {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      problem = "negative dimension " + std::to_string(shape[i]) +
                " at index " + std::to_string(i) + " of shape " +
                formatShape(shape);
      return false;
    }
  }
  int64_t count = elementCount(shape);
  auto size = static_cast<int64_t>(dtypeSize(dtype));
  if (count < 0 || count > int64Max / size) {
    problem = "element count of shape " + formatShape(shape) + " overflows";
    return false;
  }
  byteSize = count * size;
  return true;
}
} // namespace

//===----------------------------------------------------------------------===//
// SafeTensors
//===----------------------------------------------------------------------===//

bool SafeTensors::add(std::string name, TensorData tensor, std::string &error) {
  try {
    if (name == "__metadata__") {
      error = "tensor name '__metadata__' is reserved for metadata";
      return false;
    }
    if (!isValidUtf8(name)) {
      error = "tensor name " + quote(name) + " is not valid UTF-8";
      return false;
    }
    // A C string would end at the NUL, naming another tensor ("x\0" is not
    // "x"); mw-eval refuses such names too.
    if (name.find('\0') != std::string::npos) {
      error = "tensor name " + quote(name) + " contains a NUL byte";
      return false;
    }
    if (tensors.count(name)) {
      error = "duplicate tensor " + quote(name);
      return false;
    }
    if (!lookup(tensor.dtype)) {
      error = "tensor " + quote(name) + ": invalid dtype";
      return false;
    }
    int64_t byteSize = 0;
    std::string problem;
    if (!shapeByteSize(tensor.shape, tensor.dtype, byteSize, problem)) {
      error = "tensor " + quote(name) + ": " + problem;
      return false;
    }
    if (tensor.bytes.size() != static_cast<uint64_t>(byteSize)) {
      error = "tensor " + quote(name) + ": has " +
              std::to_string(tensor.bytes.size()) + " bytes but " +
              dtypeName(tensor.dtype) + " shape " + formatShape(tensor.shape) +
              " needs " + std::to_string(byteSize);
      return false;
    }
    auto inserted = tensors.emplace(name, std::move(tensor)).first;
    try {
      order.push_back(std::move(name));
    } catch (...) {
      // Keep names() and the map in step: undo the half-done insertion.
      tensors.erase(inserted);
      throw;
    }
    return true;
  } catch (const std::bad_alloc &) {
    error = "out of memory adding a tensor";
  } catch (...) {
    error = "internal error adding a tensor";
  }
  return false;
}

const TensorData *SafeTensors::find(std::string_view name) const {
  auto it = tensors.find(name);
  return it == tensors.end() ? nullptr : &it->second;
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

namespace {
/// The spec's cap on the header; it also bounds what a corrupt length field
/// can make us allocate before anything else is checked.
constexpr uint64_t maxHeaderSize = 100ull * 1024 * 1024;

/// A tensor as described by the header, before its bytes are loaded.
struct Entry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
  uint64_t begin;
  uint64_t end;
};

/// A SAX pass over the header that only finds what the non-throwing DOM
/// parser cannot tell us: where a syntax error is, and duplicate keys, which
/// the DOM parser would silently collapse into one (losing a tensor).
class HeaderChecker {
public:
  using NumberInteger = Json::number_integer_t;
  using NumberUnsigned = Json::number_unsigned_t;
  using NumberFloat = Json::number_float_t;

  bool null() { return true; }
  bool boolean(bool) { return true; }
  bool number_integer(NumberInteger) { return true; }
  bool number_unsigned(NumberUnsigned) { return true; }
  bool number_float(NumberFloat, const std::string &) { return true; }
  bool string(std::string &) { return true; }
  bool binary(Json::binary_t &) { return true; }
  bool start_object(std::size_t) {
    keys.emplace_back();
    return true;
  }
  bool key(std::string &key) {
    if (keys.back().insert(key).second)
      return true;
    duplicate = key;
    hasDuplicate = true;
    return false;
  }
  bool end_object() {
    keys.pop_back();
    return true;
  }
  bool start_array(std::size_t) { return true; }
  bool end_array() { return true; }
  bool parse_error(std::size_t position, const std::string &,
                   const Json::exception &) {
    errorPosition = position;
    return false;
  }

  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  bool hasDuplicate = false;
  size_t errorPosition = 0;
};

/// Reads a JSON value that must be a non-negative integer into `value`.
bool getUnsigned(const Json &json, uint64_t &value) {
  if (json.is_number_unsigned()) {
    value = json.get<uint64_t>();
    return true;
  }
  if (json.is_number_integer() && json.get<int64_t>() >= 0) {
    value = static_cast<uint64_t>(json.get<int64_t>());
    return true;
  }
  return false;
}

/// Decodes one tensor entry of the header. `problem` gets the reason without
/// the file/tensor prefix.
bool parseEntry(const Json &json, uint64_t bufferSize, Entry &entry,
                std::string &problem) {
  if (!json.is_object()) {
    problem = "entry is not a JSON object";
    return false;
  }
  auto dtypeIt = json.find("dtype");
  auto shapeIt = json.find("shape");
  auto offsetsIt = json.find("data_offsets");
  const char *missing = dtypeIt == json.end()     ? "dtype"
                        : shapeIt == json.end()   ? "shape"
                        : offsetsIt == json.end() ? "data_offsets"
                                                  : nullptr;
  if (missing) {
    problem = std::string("missing \"") + missing + "\"";
    return false;
  }

  if (!dtypeIt->is_string()) {
    problem = "\"dtype\" is not a string";
    return false;
  }
  const std::string &dtypeText = dtypeIt->get_ref<const std::string &>();
  if (!parseDType(dtypeText, entry.dtype)) {
    problem = "unsupported dtype " + quote(dtypeText);
    return false;
  }

  if (!shapeIt->is_array()) {
    problem = "\"shape\" is not an array of integers";
    return false;
  }
  entry.shape.clear();
  for (size_t i = 0; i < shapeIt->size(); ++i) {
    const Json &dim = (*shapeIt)[i];
    if (dim.is_number_unsigned()) {
      auto value = dim.get<uint64_t>();
      if (value > static_cast<uint64_t>(int64Max)) {
        problem = "dimension " + std::to_string(value) + " at index " +
                  std::to_string(i) + " of \"shape\" is too large";
        return false;
      }
      entry.shape.push_back(static_cast<int64_t>(value));
    } else if (dim.is_number_integer()) {
      entry.shape.push_back(dim.get<int64_t>());
    } else {
      problem = "\"shape\" is not an array of integers";
      return false;
    }
  }
  int64_t byteSize = 0;
  if (!shapeByteSize(entry.shape, entry.dtype, byteSize, problem))
    return false;

  const Json &offsets = *offsetsIt;
  if (!offsets.is_array() || offsets.size() != 2 ||
      !getUnsigned(offsets[0], entry.begin) ||
      !getUnsigned(offsets[1], entry.end)) {
    problem = "\"data_offsets\" is not [begin, end] of non-negative integers";
    return false;
  }
  if (entry.begin > entry.end) {
    problem = "data_offsets begin " + std::to_string(entry.begin) +
              " is after end " + std::to_string(entry.end);
    return false;
  }
  if (entry.end > bufferSize) {
    problem = "data_offsets end " + std::to_string(entry.end) +
              " is beyond the " + std::to_string(bufferSize) +
              "-byte data buffer";
    return false;
  }
  if (entry.end - entry.begin != static_cast<uint64_t>(byteSize)) {
    problem = "data_offsets span " + std::to_string(entry.end - entry.begin) +
              " bytes but " + dtypeName(entry.dtype) + " shape " +
              formatShape(entry.shape) + " needs " + std::to_string(byteSize) +
              " bytes";
    return false;
  }
  return true;
}

/// Validates the 8-byte length prefix against the file size.
bool parsePrefix(const std::string &source, const uint8_t *prefix,
                 uint64_t fileSize, uint64_t &headerSize, std::string &error) {
  headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | prefix[i];
  if (headerSize > maxHeaderSize) {
    error = source + ": header length " + std::to_string(headerSize) +
            " exceeds the 100 MiB limit";
    return false;
  }
  if (headerSize > fileSize - 8) {
    error = source + ": header length " + std::to_string(headerSize) +
            " is larger than the " + std::to_string(fileSize - 8) +
            " bytes after the length field (truncated file?)";
    return false;
  }
  return true;
}

/// Parses and validates the JSON header. `entries` come back in the order
/// of their data in the buffer, which is also the order they are returned in.
bool parseHeader(const std::string &source, const char *header,
                 size_t headerSize, uint64_t bufferSize,
                 std::vector<Entry> &entries,
                 std::map<std::string, std::string> &metadata,
                 std::string &error) {
  // An empty header is not JSON (and `header` may then be null, which
  // memchr must not see, even with a size of 0).
  if (headerSize == 0) {
    error = source + ": header is not valid JSON (it is empty: its length "
                     "field is 0)";
    return false;
  }
  // nlohmann's lexer takes a NUL byte for the end of input, so without this
  // check "{}\0<anything>" would pass. Raw NUL is never valid JSON.
  if (const void *nul = std::memchr(header, 0, headerSize)) {
    error = source + ": header is not valid JSON (NUL byte at header byte " +
            std::to_string(static_cast<const char *>(nul) - header) + ")";
    return false;
  }
  HeaderChecker checker;
  if (!Json::sax_parse(header, header + headerSize, &checker)) {
    if (checker.hasDuplicate)
      error = source + ": header has duplicate key " + quote(checker.duplicate);
    else
      error = source + ": header is not valid JSON (error near header byte " +
              std::to_string(checker.errorPosition) + ")";
    return false;
  }
  Json json = Json::parse(header, header + headerSize, nullptr,
                          /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    error = source + ": header is not valid JSON";
    return false;
  }
  if (!json.is_object()) {
    error = source + ": header is not a JSON object";
    return false;
  }

  entries.clear();
  metadata.clear();
  for (const auto &item : json.items()) {
    const std::string &key = item.key();
    const Json &value = item.value();
    if (key == "__metadata__") {
      if (!value.is_object()) {
        error = source + ": \"__metadata__\" is not an object of strings";
        return false;
      }
      for (const auto &field : value.items()) {
        if (!field.value().is_string()) {
          error = source + ": \"__metadata__\" value of " + quote(field.key()) +
                  " is not a string";
          return false;
        }
        metadata[field.key()] = field.value().get<std::string>();
      }
      continue;
    }
    Entry entry;
    entry.name = key;
    std::string problem;
    if (!parseEntry(value, bufferSize, entry, problem)) {
      error = source + ": tensor " + quote(key) + ": " + problem;
      return false;
    }
    entries.push_back(std::move(entry));
  }

  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  // The spec requires the tensors to tile the buffer exactly: walk them in
  // offset order tracking the end of what is covered so far. Zero-size
  // tensors own no bytes, so they can neither overlap nor cover anything.
  uint64_t covered = 0;
  uint64_t gapEnd = bufferSize;
  const Entry *coveredBy = nullptr;
  for (const Entry &entry : entries) {
    if (entry.begin == entry.end)
      continue;
    if (entry.begin < covered) {
      error = source + ": tensors " + quote(coveredBy->name) + " [" +
              std::to_string(coveredBy->begin) + ", " +
              std::to_string(coveredBy->end) + ") and " + quote(entry.name) +
              " [" + std::to_string(entry.begin) + ", " +
              std::to_string(entry.end) + ") overlap";
      return false;
    }
    if (entry.begin > covered) {
      gapEnd = entry.begin;
      break;
    }
    covered = entry.end;
    coveredBy = &entry;
  }
  if (covered < bufferSize) {
    // Either a gap before some tensor or bytes after the last one.
    error = source + ": bytes [" + std::to_string(covered) + ", " +
            std::to_string(gapEnd) +
            ") of the data buffer are not covered by any tensor";
    return false;
  }
  return true;
}

/// Turns validated entries into `out`, with `load` filling each tensor's
/// bytes from the buffer.
template <typename LoadFn>
bool buildResult(const std::string &source, std::vector<Entry> &entries,
                 std::map<std::string, std::string> &metadata, SafeTensors &out,
                 std::string &error, LoadFn load) {
  SafeTensors result;
  result.metadata() = std::move(metadata);
  for (Entry &entry : entries) {
    TensorData tensor;
    tensor.dtype = entry.dtype;
    tensor.shape = std::move(entry.shape);
    tensor.bytes.resize(entry.end - entry.begin);
    if (!load(entry, tensor.bytes.data(), tensor.bytes.size()))
      return false;
    std::string problem;
    if (!result.add(entry.name, std::move(tensor), problem)) {
      error = source + ": " + problem;
      return false;
    }
  }
  out = std::move(result);
  return true;
}

/// Reads exactly `size` bytes at `offset`; false on error or end of file.
bool readAt(int fd, uint8_t *data, size_t size, uint64_t offset, int &code) {
  uint64_t got = 0;
  return detail::preadFully(fd, data, size, offset, got, code) && got == size;
}

/// Sets `error` for a failed or short read of `what` in `path`; false.
bool readFailed(const std::string &path, const std::string &what, int code,
                std::string &error) {
  error = path + ": cannot read " + what + ": " +
          (code ? errnoText(code) : std::string("unexpected end of file"));
  return false;
}

/// Closes a file descriptor on every path out of a function.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0)
      ::close(fd);
  }
};

bool parseImpl(const std::string &source, const uint8_t *data, size_t size,
               SafeTensors &out, std::string &error) {
  if (!data && size) {
    error = source + ": null data pointer";
    return false;
  }
  if (size < 8) {
    error = source + ": file is " + std::to_string(size) +
            " bytes, shorter than the 8-byte header length";
    return false;
  }
  uint64_t headerSize = 0;
  if (!parsePrefix(source, data, size, headerSize, error))
    return false;
  const auto *header = reinterpret_cast<const char *>(data + 8);
  const uint8_t *buffer = data + 8 + headerSize;
  uint64_t bufferSize = size - 8 - headerSize;
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  if (!parseHeader(source, header, headerSize, bufferSize, entries, metadata,
                   error))
    return false;
  return buildResult(source, entries, metadata, out, error,
                     [&](const Entry &entry, uint8_t *dest, size_t count) {
                       if (count)
                         std::copy_n(buffer + entry.begin, count, dest);
                       return true;
                     });
}

/// Opens `path` into `file` and reads and validates its header: the first
/// half of a read, shared by readSafeTensors and SafeTensorsFile.
bool openAndParseHeader(const std::string &path, FdCloser &file,
                        uint64_t &headerSize, std::vector<Entry> &entries,
                        std::map<std::string, std::string> &metadata,
                        std::string &error) {
  file.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (file.fd < 0) {
    int code = errno;
    error = path + ": cannot open: " + errnoText(code);
    return false;
  }
  struct stat info;
  if (::fstat(file.fd, &info) != 0) {
    int code = errno;
    error = path + ": cannot stat: " + errnoText(code);
    return false;
  }
  if (!S_ISREG(info.st_mode)) {
    error = path + ": not a regular file";
    return false;
  }
  auto fileSize = static_cast<uint64_t>(info.st_size);
  if (fileSize < 8) {
    error = path + ": file is " + std::to_string(fileSize) +
            " bytes, shorter than the 8-byte header length";
    return false;
  }
  int code = 0;
  uint8_t prefix[8];
  if (!readAt(file.fd, prefix, 8, 0, code))
    return readFailed(path, "the header length", code, error);
  if (!parsePrefix(path, prefix, fileSize, headerSize, error))
    return false;
  std::vector<uint8_t> header(headerSize);
  if (headerSize && !readAt(file.fd, header.data(), headerSize, 8, code))
    return readFailed(path, "the header", code, error);
  return parseHeader(path, reinterpret_cast<const char *>(header.data()),
                     headerSize, fileSize - 8 - headerSize, entries, metadata,
                     error);
}

bool readImpl(const std::string &path, SafeTensors &out, std::string &error) {
  FdCloser file{-1};
  uint64_t headerSize = 0;
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;
  if (!openAndParseHeader(path, file, headerSize, entries, metadata, error))
    return false;
  // The file can still shrink under us after fstat; readAt reports that as
  // an early end of file instead of trusting the size.
  int code = 0;
  uint64_t bufferStart = 8 + headerSize;
  return buildResult(path, entries, metadata, out, error,
                     [&](const Entry &entry, uint8_t *dest, size_t count) {
                       if (count && !readAt(file.fd, dest, count,
                                            bufferStart + entry.begin, code))
                         return readFailed(path, "tensor " + quote(entry.name),
                                           code, error);
                       return true;
                     });
}
} // namespace

bool readSafeTensors(const std::string &path, SafeTensors &out,
                     std::string &error) {
  try {
    return readImpl(path, out, error);
  } catch (const std::bad_alloc &) {
    error = path + ": out of memory";
  } catch (...) {
    error = path + ": internal error while reading";
  }
  return false;
}

bool parseSafeTensors(const uint8_t *data, size_t size, SafeTensors &out,
                      std::string &error) {
  try {
    return parseImpl("<memory>", data, size, out, error);
  } catch (const std::bad_alloc &) {
    error = "<memory>: out of memory";
  } catch (...) {
    error = "<memory>: internal error while parsing";
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Reading parts of tensors
//===----------------------------------------------------------------------===//

SafeTensorsFile::~SafeTensorsFile() {
  if (fd >= 0)
    ::close(fd);
}

bool SafeTensorsFile::open(const std::string &path, std::string &error) {
  try {
    if (fd >= 0)
      ::close(fd);
    fd = -1;
    order.clear();
    entries.clear();
    filePath = path;
    FdCloser file{-1};
    uint64_t headerSize = 0;
    std::vector<mwrt::Entry> raw;
    std::map<std::string, std::string> metadata;
    if (!openAndParseHeader(path, file, headerSize, raw, metadata, error))
      return false;
    for (mwrt::Entry &e : raw) {
      Entry entry;
      entry.dtype = e.dtype;
      entry.shape = std::move(e.shape);
      entry.bytes = e.end - e.begin;
      entry.begin = 8 + headerSize + e.begin;
      entry.offset = entry.begin;
      order.push_back(e.name);
      entries.emplace(std::move(e.name), std::move(entry));
    }
    fd = file.fd;
    file.fd = -1;
    return true;
  } catch (const std::bad_alloc &) {
    error = path + ": out of memory";
  }
  return false;
}

const SafeTensorsFile::Tensor *
SafeTensorsFile::find(std::string_view name) const {
  auto it = entries.find(name);
  return it == entries.end() ? nullptr : &it->second;
}

bool SafeTensorsFile::read(std::string_view name, uint64_t offset, void *dst,
                           size_t size, std::string &error) const {
  auto it = entries.find(name);
  if (it == entries.end() || fd < 0) {
    error = filePath + ": no tensor " + quote(name);
    return false;
  }
  const Entry &e = it->second;
  if (offset > e.bytes || size > e.bytes - offset) {
    error = filePath + ": bytes [" + std::to_string(offset) + ", " +
            std::to_string(offset + size) + ") are outside tensor " +
            quote(name) + " (" + std::to_string(e.bytes) + " bytes)";
    return false;
  }
  int code = 0;
  if (size && !readAt(fd, static_cast<uint8_t *>(dst), size, e.begin + offset,
                      code)) {
    error = filePath + ": cannot read tensor " + quote(name) + ": " +
            (code ? errnoText(code) : std::string("unexpected end of file"));
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

namespace {
bool writeAll(int fd, const uint8_t *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// The temporary a write goes to. Until commit(), destroying it closes and
/// removes the file, so every early return (or exception) cleans up.
struct TempFile {
  std::string path;
  int fd = -1;
  bool committed = false;

  ~TempFile() {
    if (fd >= 0)
      ::close(fd);
    if (!path.empty() && !committed)
      ::unlink(path.c_str());
  }
};

/// Makes the header text: compact JSON with sorted keys (nlohmann's object
/// is a std::map) padded with spaces so the data buffer starts at a
/// multiple of 8. `sortedNames` fixes the buffer layout.
bool buildHeader(const std::string &path, const SafeTensors &in,
                 const std::vector<std::string> &sortedNames,
                 std::string &header, std::string &error) {
  Json json = Json::object();
  uint64_t offset = 0;
  for (const std::string &name : sortedNames) {
    const TensorData &tensor = *in.find(name);
    Json entry = Json::object();
    entry["dtype"] = dtypeName(tensor.dtype);
    entry["shape"] = tensor.shape;
    uint64_t end = offset + tensor.bytes.size();
    entry["data_offsets"] = Json::array({offset, end});
    json[name] = std::move(entry);
    offset = end;
  }
  if (!in.metadata().empty()) {
    Json meta = Json::object();
    for (const auto &[key, value] : in.metadata()) {
      if (!isValidUtf8(key) || !isValidUtf8(value)) {
        error = path + ": metadata key " + quote(key) +
                " or its value is not valid UTF-8";
        return false;
      }
      meta[key] = value;
    }
    json["__metadata__"] = std::move(meta);
  }
  // strict: names and metadata were checked above, so this cannot fail; if
  // it ever did, the caller's catch turns it into an error, not a bad file.
  header =
      json.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::strict);
  header.append((8 - header.size() % 8) % 8, ' ');
  return true;
}

std::string parentDirectory(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  if (slash == 0)
    return "/";
  return path.substr(0, slash);
}

bool writeImpl(const std::string &path, const SafeTensors &in,
               std::string &error) {
  std::vector<std::string> sortedNames = in.names();
  std::sort(sortedNames.begin(), sortedNames.end());
  std::string header;
  if (!buildHeader(path, in, sortedNames, header, error))
    return false;
  uint8_t prefix[8];
  for (int i = 0; i < 8; ++i)
    prefix[i] = static_cast<uint8_t>(uint64_t(header.size()) >> (8 * i));

  // An unnamed file (O_TMPFILE) where the filesystem has them: it gets a
  // name only once it is complete, so a process killed while writing leaves
  // nothing behind. Elsewhere, O_EXCL with a fresh name instead of mkstemp:
  // mkstemp makes the file 0600, which the rename would then impose on the
  // target; open(0666) honours the umask like any other file the user
  // creates.
  static std::atomic<uint64_t> counter{0};
  TempFile temp;
  bool unnamed = false;
#ifdef O_TMPFILE
  temp.fd = ::open(parentDirectory(path).c_str(),
                   O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  unnamed = temp.fd >= 0;
#endif
  for (int attempt = 0; !unnamed; ++attempt) {
    temp.path = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                std::to_string(counter++);
    temp.fd = ::open(temp.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
                     0666);
    if (temp.fd >= 0)
      break;
    int code = errno;
    if (code != EEXIST || attempt == 100) {
      error = path + ": cannot create temporary file " + quote(temp.path) +
              ": " + errnoText(code);
      temp.path.clear(); // Nothing was created, so nothing to remove.
      return false;
    }
  }

  auto failed = [&](const char *what) {
    int code = errno;
    error = path + ": cannot " + what + " " +
            (temp.path.empty() ? std::string("its temporary file")
                               : quote(temp.path)) +
            ": " + errnoText(code);
    return false;
  };
  if (!writeAll(temp.fd, prefix, sizeof(prefix)) ||
      !writeAll(temp.fd, reinterpret_cast<const uint8_t *>(header.data()),
                header.size()))
    return failed("write");
  for (const std::string &name : sortedNames) {
    const std::vector<uint8_t> &bytes = in.find(name)->bytes;
    if (!bytes.empty() && !writeAll(temp.fd, bytes.data(), bytes.size()))
      return failed("write");
  }
  if (::fsync(temp.fd) != 0)
    return failed("fsync");
  if (unnamed) {
    // Complete: name it (through /proc, which needs no privilege, unlike
    // linkat's AT_EMPTY_PATH), then rename that name over `path` below.
    std::string self = "/proc/self/fd/" + std::to_string(temp.fd);
    for (int attempt = 0;; ++attempt) {
      temp.path = path + ".tmp-" + std::to_string(::getpid()) + "-" +
                  std::to_string(counter++);
      if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp.path.c_str(),
                   AT_SYMLINK_FOLLOW) == 0)
        break;
      int code = errno;
      if (code != EEXIST || attempt == 100) {
        error = path + ": cannot name the temporary file " + quote(temp.path) +
                ": " + errnoText(code);
        temp.path.clear();
        return false;
      }
    }
  }
  int fd = temp.fd;
  temp.fd = -1;
  if (::close(fd) != 0)
    return failed("close");
  if (::rename(temp.path.c_str(), path.c_str()) != 0) {
    int code = errno;
    error = path + ": cannot rename " + quote(temp.path) +
            " over it: " + errnoText(code);
    return false;
  }
  temp.committed = true;

  // Persist the rename itself. Best effort: the new file is already in
  // place, and some filesystems refuse fsync on directories.
  int dir =
      ::open(parentDirectory(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    (void)::fsync(dir);
    ::close(dir);
  }
  return true;
}
} // namespace

bool writeSafeTensors(const std::string &path, const SafeTensors &in,
                      std::string &error) {
  try {
    return writeImpl(path, in, error);
  } catch (const std::bad_alloc &) {
    error = path + ": out of memory while writing";
  } catch (...) {
    error = path + ": internal error while writing";
  }
  return false;
}

} // namespace mwrt
