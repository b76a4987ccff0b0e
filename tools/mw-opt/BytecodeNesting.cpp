//===- BytecodeNesting.cpp - MLIR bytecode measured before its reader ----===//
//
// Mirrors MLIR 19's mlir/lib/Bytecode/Reader/BytecodeReader.cpp step by step
// (the container, the string, dialect, properties and attribute/type offset
// tables, the builtin dialect's entries and the IR section), reading the
// same bytes in the same order, so that where it stops the reader stops
// too, with an error of its own. See memwall/Support/BytecodeNesting.h.
//
//===----------------------------------------------------------------------===//

#include "memwall/Support/BytecodeNesting.h"

#include "mlir/Bytecode/Encoding.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/MathExtras.h"

#include <memory>
#include <vector>

using namespace memwall;
namespace bc = mlir::bytecode;

namespace {

/// IntegerType::kMaxWidth.
constexpr uint64_t kMaxIntegerWidth = (1 << 24) - 1;

/// A reader over part of the file, with MLIR's varint encoding. Every
/// method fails (returns false) where the reader's EncodingReader fails.
class Bytes {
public:
  Bytes(llvm::ArrayRef<uint8_t> data, const uint8_t *fileStart)
      : it(data.begin()), end(data.end()), fileStart(fileStart) {}

  bool empty() const { return it == end; }
  size_t remaining() const { return end - it; }
  size_t offset() const { return it - fileStart; }

  bool byte(uint8_t &value) {
    if (empty())
      return false;
    value = *it++;
    return true;
  }
  bool bytes(size_t length, llvm::ArrayRef<uint8_t> &result) {
    if (length > remaining())
      return false;
    result = {it, length};
    it += length;
    return true;
  }
  /// EncodingReader::parseVarInt: the trailing zeros of the first byte
  /// count the bytes that follow (all eight when the byte is zero).
  bool varInt(uint64_t &result) {
    uint8_t first;
    if (!byte(first))
      return false;
    if (first & 1) {
      result = first >> 1;
      return true;
    }
    unsigned more = first == 0 ? 8 : llvm::countr_zero<uint32_t>(first);
    if (more > remaining())
      return false;
    uint64_t value = first == 0 ? 0 : first;
    for (unsigned i = 0; i < more; ++i)
      value |= static_cast<uint64_t>(it[i]) << (8 * (first == 0 ? i : i + 1));
    it += more;
    result = first == 0 ? value : value >> (more + 1);
    return true;
  }
  /// EncodingReader::parseSignedVarInt: zigzag over a varint.
  bool signedVarInt(int64_t &result) {
    uint64_t zigzag;
    if (!varInt(zigzag))
      return false;
    result = static_cast<int64_t>((zigzag >> 1) ^ (~(zigzag & 1) + 1));
    return true;
  }
  bool varIntWithFlag(uint64_t &result, bool &flag) {
    if (!varInt(result))
      return false;
    flag = result & 1;
    result >>= 1;
    return true;
  }
  bool skipVarInts(uint64_t count) {
    uint64_t ignored;
    for (uint64_t i = 0; i < count; ++i)
      if (!varInt(ignored))
        return false;
    return true;
  }
  bool nullTerminated(llvm::StringRef &result) {
    for (const uint8_t *p = it; p != end; ++p) {
      if (*p == 0) {
        result = llvm::StringRef(reinterpret_cast<const char *>(it), p - it);
        it = p + 1;
        return true;
      }
    }
    return false;
  }
  /// EncodingReader::parseSection: an id byte whose high bit says an
  /// alignment follows (padding bytes 0xCB up to an aligned address: the
  /// same addresses as the reader's, as it reads the same buffer), a length
  /// and the data.
  bool section(uint8_t &id, llvm::ArrayRef<uint8_t> &data) {
    uint8_t idAndAlignment;
    uint64_t length;
    if (!byte(idAndAlignment) || !varInt(length))
      return false;
    id = idAndAlignment & 0x7f;
    if (id >= bc::Section::kNumSections)
      return false;
    if (idAndAlignment & 0x80) {
      // The reader passes it to alignTo(unsigned): truncated.
      uint64_t value;
      if (!varInt(value))
        return false;
      unsigned alignment = static_cast<unsigned>(value);
      if (!llvm::isPowerOf2_32(alignment))
        return false;
      while (reinterpret_cast<uintptr_t>(it) & (alignment - 1)) {
        uint8_t padding;
        if (!byte(padding) || padding != bc::kAlignmentByte)
          return false;
      }
    }
    return bytes(length, data);
  }

private:
  const uint8_t *it, *end;
  const uint8_t *fileStart;
};

/// An attribute or type entry of the offset table.
struct Entry {
  llvm::ArrayRef<uint8_t> data;
  uint64_t dialect = 0;
  bool custom = false;
};

/// The walk over one file; `problem` is set where it stops for one.
class Scan {
public:
  Scan(llvm::ArrayRef<uint8_t> file, unsigned limit)
      : file(file), limit(limit) {}

  std::optional<BytecodeProblem> run();

private:
  /// Sets the problem (the first one stays) and returns false, to stop.
  bool fail(size_t offset, const llvm::Twine &message) {
    if (!problem)
      problem = BytecodeProblem{offset, message.str()};
    return false;
  }
  /// A count read at `at` that sizes a vector before the `remaining` bytes
  /// behind it, each element at least one byte, are read.
  bool checkCount(uint64_t count, size_t remaining, size_t at,
                  llvm::StringRef what) {
    if (count <= remaining)
      return true;
    return fail(at, "its " + llvm::Twine(what) + " count " +
                        llvm::Twine(count) + " is more than the " +
                        llvm::Twine(remaining) +
                        " bytes that follow could hold (the reader would "
                        "allocate for them first)");
  }

  /// Reads a count that sizes a vector (checkCount).
  bool readCount(Bytes &reader, uint64_t &count, llvm::StringRef what) {
    size_t at = reader.offset();
    return reader.varInt(count) &&
           checkCount(count, reader.remaining(), at, what);
  }

  bool strings(llvm::ArrayRef<uint8_t> data);
  bool dialects(llvm::ArrayRef<uint8_t> data);
  bool properties(llvm::ArrayRef<uint8_t> data);
  bool entries(llvm::ArrayRef<uint8_t> data, llvm::ArrayRef<uint8_t> offsets);
  bool entryTexts();
  bool entryReferences(size_t node, std::vector<size_t> &refs);
  bool entryDepths();
  /// The bits of an element of the type at `type` (integers, index,
  /// floats, complex numbers of those), or nothing.
  std::optional<uint64_t> elementBits(size_t type);
  /// What the type at `type` is, for the element types that shaped and
  /// complex types accept.
  enum class TypeClass {
    Integer,
    Index,
    Float,
    Complex,
    Vector,
    Tensor,
    MemRef,
    Other,        // function, tuple, none
    BuiltinText,  // a builtin type written as text (f8E5M2, tf32)
    OtherDialect, // another dialect's type
    Unknown,
  };
  TypeClass classify(size_t type);
  /// A memref's layout against its rank (MemRefType::verify's
  /// verifyLayout): the dimensions of an affine map, the strides of a
  /// strided layout; both are text entries.
  void checkLayoutRank(size_t node, size_t layout, uint64_t rank);
  /// The names of a dictionary (`refs`: name, value, name, value, ...)
  /// differ: DictionaryAttr::get keeps duplicates (it only asserts), which
  /// print as text that does not parse.
  void checkUniqueNames(size_t node, const std::vector<size_t> &refs);
  /// The element count and element type of the tensor or vector type at
  /// `type`, or nothing.
  std::optional<std::pair<uint64_t, size_t>> shape(size_t type);
  /// The data of a dense attribute against its type, which MLIR 19 builds
  /// unchecked (`getFromRawBuffer`, `DenseArrayAttr::get`): a buffer
  /// shorter than its elements is read past by everything that reads the
  /// attribute (the printer printed bytes from beyond it).
  void checkDenseData(size_t node, uint64_t kind, size_t type, Bytes &reader);
  /// The value of an IntegerAttr or FloatAttr (readAPIntWithKnownWidth):
  /// a byte up to 8 bits, a varint up to 64, else a count of words, which
  /// sizes a vector first, and the words. It must be all there: MLIR 19's
  /// readAPFloatWithKnownSemantics helper returns success when the value
  /// could not be read, and FloatAttr::get then reads an APFloat that was
  /// never made (a segfault in APInt::tcAssign, found by ir_fuzzer).
  void checkValue(size_t node, size_t type, Bytes &reader) {
    std::optional<uint64_t> bits = elementBits(type);
    if (!bits)
      return; // not an integer or a float: the reader refuses it
    size_t at = reader.offset();
    uint64_t value;
    uint8_t small;
    bool complete;
    if (*bits <= 8) {
      complete = reader.byte(small);
    } else if (*bits <= 64) {
      complete = reader.varInt(value);
    } else {
      if (!readCount(reader, value, "word"))
        return;
      complete = reader.skipVarInts(value);
    }
    if (!complete)
      fail(at, entryName(node) + ": its " + llvm::Twine(*bits) +
                   "-bit value is cut short (MLIR 19's reader builds the "
                   "attribute from it anyway)");
  }
  bool irSection(llvm::ArrayRef<uint8_t> data);

  /// The kind of a custom builtin entry, read from `reader` (set to its
  /// data); nothing for text entries, other dialects' entries or no data.
  std::optional<uint64_t> builtinKind(size_t node, Bytes &reader) const {
    const Entry &entry = table[node];
    reader = Bytes(entry.data, file.data());
    uint64_t kind;
    if (!entry.custom || dialectNames[entry.dialect] != "builtin" ||
        !reader.varInt(kind))
      return std::nullopt;
    return kind;
  }

  std::string entryName(size_t node) const {
    return node < numAttributes
               ? "attribute " + std::to_string(node)
               : "type " + std::to_string(node - numAttributes);
  }
  size_t entryOffset(size_t node) const {
    return table[node].data.data() - file.data();
  }

  llvm::ArrayRef<uint8_t> file;
  unsigned limit;
  std::optional<BytecodeProblem> problem;
  uint64_t version = 0;
  std::vector<llvm::StringRef> stringTable;
  std::vector<llvm::StringRef> dialectNames;
  /// The operation names: `dialect.name`, for messages, and whether it was
  /// registered (recorded from version 5).
  struct OpName {
    std::string name;
    std::optional<bool> registered;
  };
  std::vector<OpName> opNames;
  /// Attributes, then types.
  std::vector<Entry> table;
  size_t numAttributes = 0;
};

} // namespace

bool Scan::strings(llvm::ArrayRef<uint8_t> data) {
  Bytes reader(data, file.data());
  uint64_t count;
  if (!readCount(reader, count, "string"))
    return false;
  stringTable.resize(count);
  size_t dataEnd = data.size();
  for (size_t i = count; i-- > 0;) {
    uint64_t size;
    size_t at = reader.offset();
    if (!reader.varInt(size) || dataEnd < size)
      return false;
    // The reader drops the NUL from `size`: an empty one underflows.
    if (size == 0)
      return fail(at, "string " + llvm::Twine(i) +
                          " has size 0, without its NUL (the reader would "
                          "read past the string section)");
    size_t offset = dataEnd - size;
    stringTable[i] = llvm::StringRef(
        reinterpret_cast<const char *>(data.data()) + offset, size - 1);
    dataEnd = offset;
  }
  return data.size() - reader.remaining() == dataEnd;
}

bool Scan::dialects(llvm::ArrayRef<uint8_t> data) {
  Bytes reader(data, file.data());
  uint64_t count;
  if (!readCount(reader, count, "dialect"))
    return false;
  dialectNames.resize(count);
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t name;
    bool hasVersion = false;
    if (version < bc::kDialectVersioning) {
      if (!reader.varInt(name))
        return false;
    } else if (!reader.varIntWithFlag(name, hasVersion)) {
      return false;
    }
    if (name >= stringTable.size())
      return false;
    dialectNames[i] = stringTable[name];
    if (hasVersion) {
      uint8_t id;
      llvm::ArrayRef<uint8_t> versionData;
      if (!reader.section(id, versionData) ||
          id != bc::Section::kDialectVersions)
        return false;
    }
  }
  // The operation names, grouped by dialect.
  if (version >= bc::kElideUnknownBlockArgLocation) {
    uint64_t numOps;
    if (!readCount(reader, numOps, "operation name"))
      return false;
  }
  while (!reader.empty()) {
    uint64_t dialect, numOps;
    if (!reader.varInt(dialect) || dialect >= dialectNames.size() ||
        !reader.varInt(numOps))
      return false;
    for (uint64_t i = 0; i < numOps; ++i) {
      uint64_t name;
      bool registered = false;
      bool flagged = version >= bc::kNativePropertiesEncoding;
      if (!(flagged ? reader.varIntWithFlag(name, registered)
                    : reader.varInt(name)) ||
          name >= stringTable.size())
        return false;
      opNames.push_back(
          {(dialectNames[dialect] + "." + stringTable[name]).str(),
           flagged ? std::optional<bool>(registered) : std::nullopt});
    }
  }
  return true;
}

bool Scan::properties(llvm::ArrayRef<uint8_t> data) {
  if (data.empty())
    return true;
  Bytes reader(data, file.data());
  uint64_t count;
  return readCount(reader, count, "properties");
}

bool Scan::entries(llvm::ArrayRef<uint8_t> data,
                   llvm::ArrayRef<uint8_t> offsets) {
  Bytes reader(offsets, file.data());
  uint64_t attributes, types;
  size_t at = reader.offset();
  if (!reader.varInt(attributes) || !reader.varInt(types))
    return false;
  // Each entry takes at least a byte of the table.
  if (!checkCount(attributes, reader.remaining(), at, "attribute") ||
      !checkCount(types, reader.remaining() - attributes, at, "type"))
    return false;
  numAttributes = attributes;
  table.resize(attributes + types);
  uint64_t dataOffset = 0;
  auto group = [&](size_t begin, size_t end) {
    size_t index = begin;
    while (index != end) {
      uint64_t dialect, count;
      if (!reader.varInt(dialect) || dialect >= dialectNames.size())
        return false;
      at = reader.offset();
      if (!reader.varInt(count))
        return false;
      // The reader fills `count` entries from `index` without a bound.
      if (count > end - index)
        return fail(at, "a group of " + llvm::Twine(count) +
                            " entries overruns the " +
                            llvm::Twine(end - index) +
                            " left of its table (the reader would write "
                            "past it)");
      for (uint64_t i = 0; i < count; ++i) {
        Entry &entry = table[index++];
        uint64_t size;
        if (!reader.varIntWithFlag(size, entry.custom) ||
            dataOffset > data.size() || size > data.size() - dataOffset)
          return false;
        entry.data = data.slice(dataOffset, size);
        entry.dialect = dialect;
        dataOffset += size;
      }
    }
    return true;
  };
  return group(0, attributes) && group(attributes, attributes + types) &&
         reader.empty();
}

bool Scan::entryTexts() {
  for (size_t node = 0; node < table.size(); ++node) {
    const Entry &entry = table[node];
    if (entry.custom)
      continue;
    Bytes reader(entry.data, file.data());
    llvm::StringRef text;
    if (!reader.nullTerminated(text))
      continue; // the reader refuses it when it gets there
    if (std::optional<NestingExcess> deep =
            findExcessNesting(text, NestingSyntax::Mlir, limit))
      return fail(entryOffset(node) + deep->offset,
                  llvm::Twine(entryName(node)) + "'s text `" +
                      text.take_front(24) + "...` " +
                      describeExcessNesting(limit));
  }
  return true;
}

/// The entries a builtin attribute or type refers to, in the order the
/// generated reader (BuiltinDialectBytecode.cpp.inc) resolves them; the
/// reader recurses into each as it reads its index. The decoding stops
/// after the last reference (what follows is data: an APInt, a blob) or
/// where the reader's would fail.
bool Scan::entryReferences(size_t node, std::vector<size_t> &refs) {
  refs.clear();
  Bytes reader({}, file.data());
  // Text, or a dialect without a bytecode interface: a leaf.
  std::optional<uint64_t> entryKind = builtinKind(node, reader);
  if (!entryKind)
    return true;
  uint64_t kind = *entryKind;
  const size_t numTypes = table.size() - numAttributes;
  bool stopped = false;
  auto reference = [&](bool isType) {
    uint64_t index;
    if (stopped || !reader.varInt(index) ||
        index >= (isType ? numTypes : numAttributes))
      return !(stopped = true);
    refs.push_back(isType ? numAttributes + index : index);
    return true;
  };
  auto attr = [&] { return reference(false); };
  auto type = [&] { return reference(true); };
  auto varInt = [&] {
    uint64_t ignored;
    return !stopped && (reader.varInt(ignored) || !(stopped = true));
  };
  auto boolean = [&] {
    uint8_t ignored;
    return !stopped && (reader.byte(ignored) || !(stopped = true));
  };
  // DialectBytecodeReader::readList reserves the count first.
  auto list = [&](auto element) {
    uint64_t count;
    size_t at = reader.offset();
    if (stopped || !reader.varInt(count))
      return !(stopped = true);
    if (!checkCount(count, reader.remaining(), at, "list"))
      return false;
    for (uint64_t i = 0; i < count; ++i)
      if (!element())
        return false;
    return true;
  };
  auto namedAttr = [&] { return attr() && attr(); };
  // MLIR 19 builds builtin types with `get`, without their verifiers: a
  // tensor<-58x2xf32> went through the pipeline and printed as text that
  // does not parse.
  auto bad = [&](const llvm::Twine &what) {
    stopped = true;
    return fail(entryOffset(node),
                entryName(node) + ": " + what +
                    ": refused (MLIR 19 builds the type without its "
                    "verifier)");
  };
  auto dimension = [&](bool vector) {
    int64_t size;
    if (stopped || !reader.signedVarInt(size))
      return !(stopped = true);
    if (vector ? size > 0 : (size >= 0 || size == INT64_MIN))
      return true;
    return bad("a " + llvm::Twine(vector ? "vector" : "tensor or memref") +
               " dimension of " + llvm::Twine(size));
  };
  auto memrefSize = [&] { return dimension(false); };
  auto vectorSize = [&] { return dimension(true); };
  // The element type of a shaped or complex type of kind `kind`, as
  // TensorType, BaseMemRefType, VectorType and ComplexType accept them.
  auto elementOf = [&](uint64_t kind) {
    if (!type())
      return false;
    TypeClass element = classify(refs.back() - numAttributes);
    bool scalar = element == TypeClass::Integer ||
                  element == TypeClass::Index || element == TypeClass::Float ||
                  element == TypeClass::BuiltinText ||
                  element == TypeClass::OtherDialect;
    bool ok;
    switch (kind) {
    case 9: // complex
      ok = element == TypeClass::Integer || element == TypeClass::Float ||
           element == TypeClass::BuiltinText;
      break;
    case 19: // vector
    case 20:
      ok = scalar;
      break;
    case 13: // tensor
    case 14:
    case 18:
      ok = scalar || element == TypeClass::Complex ||
           element == TypeClass::Vector;
      break;
    default: // memref
      ok = scalar || element == TypeClass::Complex ||
           element == TypeClass::Vector || element == TypeClass::MemRef;
      break;
    }
    return ok || bad(llvm::Twine(kind == 9 ? "a complex" : "a shaped") +
                     " type of an element type it cannot hold (" +
                     entryName(refs.back()) + ")");
  };
  if (node < numAttributes) {
    switch (kind) {
    case 0:  // ArrayAttr
    case 12: // FusedLoc
      list(attr);
      break;
    case 1: // DictionaryAttr
      if (list(namedAttr))
        checkUniqueNames(node, refs);
      break;
    case 3: // StringAttrWithType
      (void)(varInt() && type());
      break;
    case 4:  // FlatSymbolRefAttr
    case 11: // FileLineColLoc (then line and column)
    case 21: // DistinctAttr
      attr();
      break;
    case 5: // SymbolRefAttr
      (void)(attr() && list(attr));
      break;
    case 6:  // TypeAttr
    case 16: // DenseResourceElementsAttr (then the handle)
      type();
      break;
    case 8: // IntegerAttr
    case 9: // FloatAttr
      if (type())
        checkValue(node, refs.back() - numAttributes, reader);
      break;
    case 17: // DenseArrayAttr
    case 18: // DenseIntOrFPElementsAttr
    case 19: // DenseStringElementsAttr
      if (type())
        checkDenseData(node, kind, refs.back() - numAttributes, reader);
      break;
    case 10: // CallSiteLoc
    case 14: // NameLoc
      (void)(attr() && attr());
      break;
    case 13: // FusedLoc with metadata
      (void)(list(attr) && attr());
      break;
    case 20: // SparseElementsAttr
      (void)(type() && attr() && attr());
      break;
    default: // StringAttr, UnitAttr, UnknownLoc; or unknown: refused
      break;
    }
  } else {
    switch (kind) {
    case 2: // FunctionType
      (void)(list(type) && list(type));
      break;
    case 9:  // ComplexType
    case 16: // UnrankedMemRefType
    case 18: // UnrankedTensorType
      elementOf(kind);
      break;
    case 10:   // MemRefType
    case 11: { // MemRefType with a memory space first
      if (kind == 11 && !attr())
        break;
      Bytes peek = reader;
      uint64_t rank;
      if (list(memrefSize) && peek.varInt(rank) && elementOf(kind) && attr())
        checkLayoutRank(node, refs.back(), rank);
      break;
    }
    case 13: // RankedTensorType
      (void)(list(memrefSize) && elementOf(kind));
      break;
    case 19: // VectorType
      (void)(list(vectorSize) && elementOf(kind));
      break;
    case 14: // RankedTensorType with an encoding
      (void)(attr() && list(memrefSize) && elementOf(kind));
      break;
    case 15: // TupleType
      list(type);
      break;
    case 17: // UnrankedMemRefType with a memory space
      (void)(attr() && elementOf(kind));
      break;
    case 20: { // VectorType with scalable dimensions
      // As many flags as dimensions (VectorType::verify).
      Bytes peek = reader;
      uint64_t flags, rank;
      if (!list(boolean) || !peek.varInt(flags))
        break;
      Bytes dims = reader;
      if (dims.varInt(rank) && rank != flags) {
        bad("a vector of " + llvm::Twine(rank) + " dimensions has " +
            llvm::Twine(flags) + " scalable flags");
        break;
      }
      (void)(list(vectorSize) && elementOf(kind));
      break;
    }
    case 0: { // IntegerType: width << 2 | signedness
      uint64_t value;
      if (reader.varInt(value) && (value >> 2) > kMaxIntegerWidth)
        bad("an integer type of " + llvm::Twine(value >> 2) +
            " bits (at most " + llvm::Twine(kMaxIntegerWidth) + ")");
      break;
    }
    default: // index, floats, none; or unknown: refused
      break;
    }
  }
  return !problem;
}

void Scan::checkLayoutRank(size_t node, size_t layout, uint64_t rank) {
  const Entry &entry = table[layout];
  if (entry.custom)
    return; // not a layout: readAttribute<MemRefLayoutAttrInterface> refuses
  Bytes reader(entry.data, file.data());
  llvm::StringRef text;
  if (!reader.nullTerminated(text))
    return;
  // The entries of the first `open ... close` list, counted by their
  // commas; nothing when the text is not of that form.
  auto count = [](llvm::StringRef text, llvm::StringRef prefix, char open,
                  char close) -> std::optional<uint64_t> {
    text = text.ltrim();
    if (!text.consume_front(prefix))
      return std::nullopt;
    text = text.ltrim();
    if (!text.consume_front(llvm::StringRef(&open, 1)))
      return std::nullopt;
    size_t end = text.find(close);
    if (end == llvm::StringRef::npos)
      return std::nullopt;
    llvm::StringRef items = text.take_front(end).trim();
    return items.empty() ? 0 : items.count(',') + 1;
  };
  std::optional<uint64_t> dims = count(text, "affine_map<", '(', ')');
  const char *what = "dimensions";
  if (!dims) {
    dims = count(text, "strided<", '[', ']');
    what = "strides";
  }
  if (dims && *dims != rank)
    fail(entryOffset(node),
         entryName(node) + ": a memref of rank " + llvm::Twine(rank) +
             " with a layout of " + llvm::Twine(*dims) + " " + what + " (" +
             entryName(layout) +
             "): refused (MLIR 19 builds the type without its verifier)");
}

void Scan::checkUniqueNames(size_t node, const std::vector<size_t> &refs) {
  std::vector<llvm::StringRef> names;
  for (size_t i = 0; i + 1 < refs.size(); i += 2) {
    Bytes reader(table[refs[i]].data, file.data());
    llvm::StringRef name;
    uint64_t index;
    if (!table[refs[i]].custom) {
      if (!reader.nullTerminated(name))
        return;
    } else if (std::optional<uint64_t> kind = builtinKind(refs[i], reader);
               !kind || (*kind != 2 && *kind != 3) || !reader.varInt(index) ||
               index >= stringTable.size()) {
      return; // not a StringAttr: the reader refuses it
    } else {
      name = stringTable[index];
    }
    names.push_back(name);
  }
  llvm::sort(names);
  for (size_t i = 1; i < names.size(); ++i)
    if (names[i] == names[i - 1]) {
      fail(entryOffset(node),
           entryName(node) + ": a dictionary with the name '" +
               names[i].take_front(40) +
               "' twice: refused (MLIR 19 builds it without its check)");
      return;
    }
}

Scan::TypeClass Scan::classify(size_t type) {
  const size_t numTypes = table.size() - numAttributes;
  if (type >= numTypes)
    return TypeClass::Unknown;
  const Entry &entry = table[numAttributes + type];
  Bytes reader(entry.data, file.data());
  if (!entry.custom) {
    llvm::StringRef text;
    if (!reader.nullTerminated(text))
      return TypeClass::Unknown;
    // Another dialect's type (`!dialect.type`), or a builtin type without a
    // custom encoding (the f8 floats, tf32, ...).
    return text.starts_with("!") ? TypeClass::OtherDialect
                                 : TypeClass::BuiltinText;
  }
  if (dialectNames[entry.dialect] != "builtin")
    return TypeClass::OtherDialect;
  uint64_t kind;
  if (!reader.varInt(kind))
    return TypeClass::Unknown;
  switch (kind) {
  case 0:
    return TypeClass::Integer;
  case 1:
    return TypeClass::Index;
  case 3:
  case 4:
  case 5:
  case 6:
  case 7:
  case 8:
    return TypeClass::Float;
  case 9:
    return TypeClass::Complex;
  case 10:
  case 11:
  case 16:
  case 17:
    return TypeClass::MemRef;
  case 13:
  case 14:
  case 18:
    return TypeClass::Tensor;
  case 19:
  case 20:
    return TypeClass::Vector;
  default: // function, none, tuple
    return TypeClass::Other;
  }
}

std::optional<uint64_t> Scan::elementBits(size_t type) {
  const size_t numTypes = table.size() - numAttributes;
  uint64_t factor = 1;
  // complex<complex<...>>: a loop, at most `limit` deep.
  for (unsigned level = 0; level < limit && type < numTypes; ++level) {
    const Entry &entry = table[numAttributes + type];
    Bytes reader(entry.data, file.data());
    if (!entry.custom) {
      // Builtin element types are written in their custom form; in text
      // (crafted, or another writer's) only the simplest are sized.
      llvm::StringRef text;
      if (!reader.nullTerminated(text))
        return std::nullopt;
      uint64_t width;
      if (text == "index")
        return factor * 64;
      if (text == "bf16" || text == "f16")
        return factor * 16;
      if (text == "f32")
        return factor * 32;
      if (text == "f64")
        return factor * 64;
      if ((text.consume_front("i") || text.consume_front("si") ||
           text.consume_front("ui")) &&
          !text.getAsInteger(10, width) && width > 0 &&
          width <= kMaxIntegerWidth)
        return factor * width;
      return std::nullopt;
    }
    std::optional<uint64_t> kind = builtinKind(numAttributes + type, reader);
    uint64_t value;
    if (!kind)
      return std::nullopt;
    switch (*kind) {
    case 0: // IntegerType: width << 2 | signedness
      if (!reader.varInt(value) || (value >> 2) == 0)
        return std::nullopt;
      return factor * (value >> 2);
    case 1: // IndexType
      return factor * 64;
    case 3: // BFloat16Type
    case 4: // Float16Type
      return factor * 16;
    case 5:
      return factor * 32;
    case 6:
      return factor * 64;
    case 7:
      return factor * 80;
    case 8:
      return factor * 128;
    case 9: // ComplexType: two of its element
      if (!reader.varInt(value))
        return std::nullopt;
      type = value;
      factor *= 2;
      continue;
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<std::pair<uint64_t, size_t>> Scan::shape(size_t type) {
  const size_t numTypes = table.size() - numAttributes;
  if (type >= numTypes)
    return std::nullopt;
  Bytes reader({}, file.data());
  std::optional<uint64_t> kind = builtinKind(numAttributes + type, reader);
  uint64_t ignored, rank, element;
  if (!kind)
    return std::nullopt;
  switch (*kind) {
  case 13: // RankedTensorType
  case 19: // VectorType
    break;
  case 14: // RankedTensorType with an encoding first
    if (!reader.varInt(ignored))
      return std::nullopt;
    break;
  case 20: { // VectorType with its scalable dimensions first
    if (!reader.varInt(rank))
      return std::nullopt;
    for (uint64_t i = 0; i < rank; ++i) {
      uint8_t flag;
      if (!reader.byte(flag))
        return std::nullopt;
    }
    break;
  }
  default:
    return std::nullopt;
  }
  if (!reader.varInt(rank))
    return std::nullopt;
  uint64_t count = 1;
  for (uint64_t i = 0; i < rank; ++i) {
    int64_t size;
    if (!reader.signedVarInt(size))
      return std::nullopt;
    // A dynamic or negative size has no elements to store.
    if (size < 0 ||
        __builtin_mul_overflow(count, static_cast<uint64_t>(size), &count))
      return std::nullopt;
  }
  if (!reader.varInt(element))
    return std::nullopt;
  return std::make_pair(count, static_cast<size_t>(element));
}

void Scan::checkDenseData(size_t node, uint64_t kind, size_t type,
                          Bytes &reader) {
  size_t at = reader.offset();
  auto unsized = [&](llvm::StringRef what) {
    fail(entryOffset(node),
         entryName(node) + ": a dense " + what +
             " whose type this check cannot size: refused (MLIR 19 builds "
             "it without comparing its data with its type)");
  };
  if (kind == 17) { // DenseArrayAttr: its element type, size, data
    std::optional<uint64_t> bits = elementBits(type);
    uint64_t size, bytes, expected;
    llvm::ArrayRef<uint8_t> data;
    if (!bits || (*bits != 1 && *bits % 8 != 0))
      return unsized("array");
    if (!reader.varInt(size) || !reader.varInt(bytes) ||
        !reader.bytes(bytes, data))
      return; // the reader refuses it
    // An i1 element takes a byte.
    if (__builtin_mul_overflow(size, *bits == 1 ? 1 : *bits / 8, &expected) ||
        expected != bytes)
      fail(at, entryName(node) + ": a dense array of " + llvm::Twine(size) +
                   " elements of " + llvm::Twine(*bits) + " bits has " +
                   llvm::Twine(bytes) +
                   " bytes of data (MLIR 19 builds it unchecked)");
    return;
  }
  std::optional<std::pair<uint64_t, size_t>> shaped = shape(type);
  if (!shaped)
    return unsized("elements attribute");
  uint64_t count = shaped->first;
  if (kind == 19) { // DenseStringElementsAttr: a splat flag, the strings
    uint64_t splat;
    if (!reader.varInt(splat))
      return;
    // The reader sizes a vector of `count` strings first.
    if (!splat)
      checkCount(count, reader.remaining(), at, "string");
    return;
  }
  // DenseIntOrFPElementsAttr: a blob, valid as DenseElementsAttr::
  // isValidRawBuffer says: one element (a splat) or all of them; booleans
  // packed by the bit.
  std::optional<uint64_t> bits = elementBits(shaped->second);
  if (!bits)
    return unsized("elements attribute");
  uint64_t bytes;
  llvm::ArrayRef<uint8_t> data;
  if (!reader.varInt(bytes) || !reader.bytes(bytes, data))
    return;
  uint64_t storage = *bits == 1 ? 1 : llvm::alignTo(*bits, 8);
  uint64_t all;
  bool valid;
  if (storage == 1)
    valid = (bytes == 1 && (data[0] == 0 || data[0] == 0xff)) ||
            (count <= UINT64_MAX - 7 && bytes == llvm::alignTo(count, 8) / 8);
  else
    valid = bytes * 8 == storage ||
            (!__builtin_mul_overflow(storage / 8, count, &all) && bytes == all);
  if (!valid)
    fail(at, entryName(node) + ": a dense elements attribute of " +
                 llvm::Twine(count) + " elements of " + llvm::Twine(*bits) +
                 " bits has " + llvm::Twine(bytes) +
                 " bytes of data, neither one element nor all (MLIR 19 "
                 "builds it unchecked and reads past it)");
}

/// Depth-first over the references, on a heap stack: a reference back to
/// an entry being resolved is a cycle; an entry deeper than `limit`
/// (itself included) is too deep for the reader's recursion.
bool Scan::entryDepths() {
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(table.size(), kNew);
  std::vector<uint32_t> depth(table.size(), 0);
  struct Frame {
    size_t node;
    std::vector<size_t> refs;
    size_t next = 0;
    uint32_t deepest = 0;
  };
  std::vector<Frame> stack;
  for (size_t root = 0; root < table.size(); ++root) {
    if (state[root] != kNew)
      continue;
    stack.push_back({root, {}});
    state[root] = kOpen;
    if (!entryReferences(root, stack.back().refs))
      return false;
    while (!stack.empty()) {
      Frame &top = stack.back();
      if (top.next < top.refs.size()) {
        size_t child = top.refs[top.next++];
        if (state[child] == kDone) {
          top.deepest = std::max(top.deepest, depth[child]);
          continue;
        }
        if (state[child] == kOpen) {
          std::string through =
              child == top.node ? "" : " through " + entryName(top.node);
          return fail(entryOffset(child),
                      entryName(child) + " refers to itself" + through +
                          ": refused before parsing (the reader would "
                          "recurse without end)");
        }
        if (stack.size() >= limit)
          return fail(entryOffset(stack.front().node),
                      llvm::Twine(entryName(stack.front().node)) +
                          " nests more than " + llvm::Twine(limit) +
                          " attributes and types deep: refused before "
                          "parsing (the reader recurses once per level)");
        state[child] = kOpen;
        stack.push_back({child, {}});
        if (!entryReferences(child, stack.back().refs))
          return false;
        continue;
      }
      uint32_t own = top.deepest + 1;
      if (own > limit)
        return fail(entryOffset(top.node),
                    llvm::Twine(entryName(top.node)) + " nests more than " +
                        llvm::Twine(limit) +
                        " attributes and types deep: refused before "
                        "parsing (the reader recurses once per level)");
      depth[top.node] = own;
      state[top.node] = kDone;
      stack.pop_back();
      if (!stack.empty())
        stack.back().deepest = std::max(stack.back().deepest, own);
    }
  }
  return true;
}

/// The IR section, as BytecodeReader::Impl::parseRegions reads it (not
/// lazily: Memwall's tools read everything), regions on a stack: one level
/// per operation whose regions are being read.
bool Scan::irSection(llvm::ArrayRef<uint8_t> data) {
  struct Level {
    Bytes *reader;
    std::unique_ptr<Bytes> owned; // an isolated region's own section
    uint64_t regionsLeft = 0;
    uint64_t blocksLeft = 0;
    uint64_t opsLeft = 0;
    bool inBlock = false;
  };
  Bytes top(data, file.data());
  std::vector<Level> stack;

  // parseUseListOrderForRange.
  auto useLists = [&](Bytes &reader, uint64_t numValues) {
    uint64_t ranges = 1;
    if (numValues > 1 && !reader.varInt(ranges))
      return false;
    for (uint64_t i = 0; i < ranges; ++i) {
      uint64_t ignored, count;
      bool pairs;
      if ((numValues > 1 && !reader.varInt(ignored)) ||
          !reader.varIntWithFlag(count, pairs) || !reader.skipVarInts(count))
        return false;
    }
    return true;
  };
  // parseBlockHeader and parseBlockArguments.
  auto blockHeader = [&](Level &level) {
    Bytes &reader = *level.reader;
    bool hasArgs;
    if (!reader.varIntWithFlag(level.opsLeft, hasArgs))
      return false;
    uint64_t numArgs = 0;
    if (hasArgs) {
      if (!readCount(reader, numArgs, "block argument"))
        return false;
      for (uint64_t i = 0; i < numArgs; ++i) {
        if (version >= bc::kElideUnknownBlockArgLocation) {
          uint64_t typeIndex;
          bool hasLoc;
          if (!reader.varIntWithFlag(typeIndex, hasLoc) ||
              (hasLoc && !reader.skipVarInts(1)))
            return false;
        } else if (!reader.skipVarInts(2)) {
          return false;
        }
      }
    }
    if (version < bc::kUseListOrdering)
      return true;
    uint8_t hasUseLists = 0;
    if (hasArgs && !reader.byte(hasUseLists))
      return false;
    return !hasUseLists || useLists(reader, numArgs);
  };

  // The top-level block: the reader defines block arguments in a value
  // scope it makes only after this header (an empty std::vector's back()).
  stack.push_back({&top});
  {
    Bytes peek = top;
    uint64_t numOps;
    bool hasArgs;
    if (peek.varIntWithFlag(numOps, hasArgs) && hasArgs)
      return fail(top.offset(), "the top-level block has arguments (the "
                                "reader would define them before it has a "
                                "scope for them)");
  }
  if (!blockHeader(stack.back()))
    return false;
  stack.back().inBlock = true;
  while (!stack.empty()) {
    Level &level = stack.back();
    Bytes &reader = *level.reader;
    if (!level.inBlock) {
      // parseRegion: the next region of the operation, if any.
      if (level.regionsLeft == 0) {
        stack.pop_back();
        continue;
      }
      --level.regionsLeft;
      uint64_t numBlocks, numValues;
      if (!readCount(reader, numBlocks, "block"))
        return false;
      if (numBlocks == 0)
        continue;
      if (!readCount(reader, numValues, "value"))
        return false;
      level.blocksLeft = numBlocks - 1;
      if (!blockHeader(level))
        return false;
      level.inBlock = true;
      continue;
    }
    if (level.opsLeft == 0) {
      if (level.blocksLeft == 0) {
        level.inBlock = false;
        continue;
      }
      --level.blocksLeft;
      if (!blockHeader(level))
        return false;
      continue;
    }
    --level.opsLeft;
    // parseOpWithoutRegions.
    size_t opOffset = reader.offset();
    uint64_t name;
    uint8_t mask;
    if (!reader.varInt(name) || name >= opNames.size() || !reader.byte(mask) ||
        !reader.skipVarInts(1)) // the location
      return false;
    if ((mask & bc::OpEncodingMask::kHasAttrs) && !reader.skipVarInts(1))
      return false;
    if (mask & bc::OpEncodingMask::kHasProperties) {
      // An index into the properties section, or the attribute of an
      // unregistered operation's properties.
      if (!opNames[name].registered || !reader.skipVarInts(1))
        return false;
    }
    uint64_t numResults = 0;
    for (uint8_t part :
         {bc::OpEncodingMask::kHasResults, bc::OpEncodingMask::kHasOperands,
          bc::OpEncodingMask::kHasSuccessors}) {
      if (!(mask & part))
        continue;
      uint64_t count;
      size_t at = reader.offset();
      if (!reader.varInt(count))
        return false;
      if (!checkCount(count, reader.remaining(), at,
                      part == bc::OpEncodingMask::kHasResults    ? "result"
                      : part == bc::OpEncodingMask::kHasOperands ? "operand"
                                                                 : "successor"))
        return false;
      if (!reader.skipVarInts(count))
        return false;
      if (part == bc::OpEncodingMask::kHasResults)
        numResults = count;
    }
    if (version >= bc::kUseListOrdering &&
        (mask & bc::OpEncodingMask::kHasUseListOrders) &&
        !useLists(reader, numResults))
      return false;
    if (!(mask & bc::OpEncodingMask::kHasInlineRegions))
      continue;
    uint64_t numRegions;
    bool isolated;
    size_t at = reader.offset();
    if (!reader.varIntWithFlag(numRegions, isolated))
      return false;
    if (!checkCount(numRegions, reader.remaining(), at, "region"))
      return false;
    if (numRegions == 0)
      continue;
    Level child{&reader};
    child.regionsLeft = numRegions;
    if (version >= bc::kLazyLoading && isolated) {
      uint8_t id;
      llvm::ArrayRef<uint8_t> regionData;
      if (!reader.section(id, regionData) || id != bc::Section::kIR)
        return false;
      child.owned = std::make_unique<Bytes>(regionData, file.data());
      child.reader = child.owned.get();
    }
    // The stack holds the top-level block and one level per operation
    // whose regions are being read: `limit` such operations are as deep as
    // `limit` nested braces of text.
    if (stack.size() > limit)
      return fail(opOffset, "'" + opNames[name].name +
                                "' nests regions more than " +
                                llvm::Twine(limit) +
                                " levels deep: refused before parsing (the "
                                "verifier and the printer recurse once per "
                                "level)");
    stack.push_back(std::move(child));
  }
  return true;
}

std::optional<BytecodeProblem> Scan::run() {
  Bytes reader(file, file.data());
  llvm::ArrayRef<uint8_t> magic;
  if (!reader.bytes(4, magic) ||
      llvm::StringRef(reinterpret_cast<const char *>(magic.data()), 4) !=
          "ML\xefR")
    return std::nullopt;
  // A version the reader does not know it refuses first, with its own
  // message.
  if (!reader.varInt(version) || version > bc::kVersion)
    return std::nullopt;
  // Everything else this walk cannot read is refused rather than left to
  // the reader: where the walk stops, it can vouch for nothing after.
  auto malformed = [&](size_t offset, const llvm::Twine &what) {
    if (!problem)
      fail(offset, "malformed: " + what +
                       " cannot be read as MLIR 19 reads it (refused: "
                       "nothing after it could be checked)");
    return problem;
  };
  llvm::StringRef producer;
  if (!reader.nullTerminated(producer))
    return malformed(reader.offset(), "the producer");
  std::optional<llvm::ArrayRef<uint8_t>> sections[bc::Section::kNumSections];
  while (!reader.empty()) {
    uint8_t id;
    llvm::ArrayRef<uint8_t> data;
    size_t at = reader.offset();
    if (!reader.section(id, data))
      return malformed(at, "a section header");
    if (sections[id])
      return malformed(at, "section " + llvm::Twine(unsigned(id)) +
                               ", a second time,");
    sections[id] = data;
  }
  for (uint8_t id :
       {bc::Section::kString, bc::Section::kDialect, bc::Section::kAttrType,
        bc::Section::kAttrTypeOffset, bc::Section::kIR})
    if (!sections[id])
      return malformed(file.size(),
                       "missing section " + llvm::Twine(unsigned(id)) + ":");
  if (version >= bc::kNativePropertiesEncoding &&
      !sections[bc::Section::kProperties])
    return malformed(file.size(), "the missing properties section");
  auto start = [&](uint8_t id) {
    return static_cast<size_t>(sections[id]->data() - file.data());
  };
  // The reader's order: strings, properties, dialects, (resources),
  // attributes and types, the IR. Attributes and types resolve while the
  // IR is read; every entry is checked here first.
  if (!strings(*sections[bc::Section::kString]))
    return malformed(start(bc::Section::kString), "the string section");
  if (sections[bc::Section::kProperties] &&
      !properties(*sections[bc::Section::kProperties]))
    return malformed(start(bc::Section::kProperties), "the properties section");
  if (!dialects(*sections[bc::Section::kDialect]))
    return malformed(start(bc::Section::kDialect), "the dialect section");
  if (!entries(*sections[bc::Section::kAttrType],
               *sections[bc::Section::kAttrTypeOffset]))
    return malformed(start(bc::Section::kAttrTypeOffset),
                     "the attribute and type table");
  // Within an entry the walk stops where the reader's decoding fails too,
  // having resolved the same references.
  if (!entryTexts() || !entryDepths())
    return problem;
  if (!irSection(*sections[bc::Section::kIR]))
    return malformed(start(bc::Section::kIR), "the IR section");
  return problem;
}

std::optional<BytecodeProblem>
memwall::findBytecodeProblem(llvm::ArrayRef<uint8_t> file, unsigned limit) {
  return Scan(file, limit).run();
}
