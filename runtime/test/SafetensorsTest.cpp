//===- SafetensorsTest.cpp - Unit tests of safetensors I/O ----------------===//
//
// Tests mwrt/safetensors.h: round trips of every dtype, byte-exact
// determinism, a file assembled by hand from the spec, one test per
// validation error (each checking the part of the message that tells it
// apart), truncation and corruption of a valid file at every byte, and the
// guarantees of the atomic write. Hand-built files are the point: a reader
// tested only against its own writer could share the writer's mistakes.
//
//===---------------------------------------------------------------------===//

#include "mwrt/safetensors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <sys/stat.h>

using namespace mwrt;
namespace fs = std::filesystem;

namespace {
const DType allDTypes[] = {DType::F32, DType::F16, DType::BF16,
                           DType::I32, DType::I64, DType::F64,
                           DType::I8,  DType::U8,  DType::BOOL};

/// A tensor whose bytes are a pattern derived from `seed`, so that tensors
/// (and misplaced bytes) differ from each other.
TensorData makeTensor(DType dtype, std::vector<int64_t> shape, int seed = 0) {
  TensorData tensor;
  tensor.dtype = dtype;
  tensor.shape = std::move(shape);
  tensor.bytes.resize(tensor.numElements() * dtypeSize(dtype));
  for (size_t i = 0; i < tensor.bytes.size(); ++i)
    tensor.bytes[i] = static_cast<uint8_t>(i * 7 + seed * 31 + 1);
  if (dtype == DType::BOOL)
    for (uint8_t &b : tensor.bytes)
      b &= 1;
  return tensor;
}

void addOrFail(SafeTensors &st, const std::string &name, TensorData tensor) {
  std::string error;
  ASSERT_TRUE(st.add(name, std::move(tensor), error)) << error;
}

std::vector<uint8_t> le64(uint64_t value) {
  std::vector<uint8_t> bytes(8);
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  return bytes;
}

/// A file as the spec lays it out: length, header (plus `padding` spaces,
/// counted in the length), then the data buffer.
std::vector<uint8_t> buildFile(const std::string &header,
                               const std::vector<uint8_t> &buffer,
                               size_t padding = 0) {
  std::vector<uint8_t> file = le64(header.size() + padding);
  file.insert(file.end(), header.begin(), header.end());
  file.insert(file.end(), padding, ' ');
  file.insert(file.end(), buffer.begin(), buffer.end());
  return file;
}

std::vector<uint8_t> readBytes(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void writeBytes(const fs::path &path, const std::vector<uint8_t> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::string> listDirectory(const fs::path &dir) {
  std::vector<std::string> names;
  for (const auto &entry : fs::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// Parses `file` from memory and expects it rejected with a one-line message
/// containing each of `parts`.
void expectRejected(const std::vector<uint8_t> &file,
                    std::initializer_list<std::string> parts) {
  SafeTensors st;
  std::string error;
  EXPECT_FALSE(parseSafeTensors(file.data(), file.size(), st, error));
  EXPECT_EQ(error.rfind("<memory>: ", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  for (const std::string &part : parts)
    EXPECT_NE(error.find(part), std::string::npos)
        << "message: " << error << "\nmissing: " << part;
  EXPECT_EQ(st.size(), 0u);
}

/// A header with one tensor "t" built from raw JSON fragments.
std::string oneTensor(const std::string &body) {
  return "{\"t\":" + body + "}";
}

/// Each test gets a fresh directory, removed afterwards.
class SafetensorsFileTest : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern =
        (fs::temp_directory_path() / "mwrt-safetensors-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  fs::path dir;
};

/// Content covering every dtype, rank 0, zero-size tensors and metadata.
SafeTensors sampleContent() {
  SafeTensors st;
  int seed = 0;
  for (DType dtype : allDTypes) {
    std::string base = dtypeName(dtype);
    addOrFail(st, base + ".matrix", makeTensor(dtype, {2, 3}, ++seed));
    addOrFail(st, base + ".scalar", makeTensor(dtype, {}, ++seed));
    addOrFail(st, base + ".empty", makeTensor(dtype, {0, 4}, ++seed));
    addOrFail(st, base + ".rank3", makeTensor(dtype, {2, 1, 3}, ++seed));
  }
  st.metadata()["format"] = "pt";
  st.metadata()["note"] = "caf\xc3\xa9 \"quoted\"\n";
  return st;
}

void expectSameContent(const SafeTensors &a, const SafeTensors &b) {
  ASSERT_EQ(a.size(), b.size());
  for (const std::string &name : a.names()) {
    const TensorData *x = a.find(name);
    const TensorData *y = b.find(name);
    ASSERT_NE(y, nullptr) << name;
    EXPECT_EQ(x->dtype, y->dtype) << name;
    EXPECT_EQ(x->shape, y->shape) << name;
    EXPECT_EQ(x->bytes, y->bytes) << name;
  }
  EXPECT_EQ(a.metadata(), b.metadata());
}
} // namespace

//===----------------------------------------------------------------------===//
// DType, TensorData and SafeTensors
//===----------------------------------------------------------------------===//

TEST(SafetensorsDType, NamesParseBackAndSizesMatchTheSpec) {
  const std::pair<const char *, size_t> expected[] = {
      {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I32", 4}, {"I64", 8},
      {"F64", 8}, {"I8", 1},  {"U8", 1},   {"BOOL", 1}};
  for (size_t i = 0; i < std::size(allDTypes); ++i) {
    EXPECT_STREQ(dtypeName(allDTypes[i]), expected[i].first);
    EXPECT_EQ(dtypeSize(allDTypes[i]), expected[i].second);
    DType parsed = DType::U8;
    ASSERT_TRUE(parseDType(expected[i].first, parsed));
    EXPECT_EQ(parsed, allDTypes[i]);
  }
  DType dtype = DType::I8;
  EXPECT_FALSE(parseDType("f32", dtype));
  EXPECT_FALSE(parseDType("I16", dtype));
  EXPECT_FALSE(parseDType("", dtype));
  EXPECT_EQ(dtype, DType::I8);
}

TEST(SafetensorsTensorData, NumElements) {
  TensorData t;
  EXPECT_EQ(t.numElements(), 1); // rank 0
  t.shape = {2, 3, 4};
  EXPECT_EQ(t.numElements(), 24);
  t.shape = {5, 0, int64_t(1) << 62};
  EXPECT_EQ(t.numElements(), 0);
  t.shape = {2, -1};
  EXPECT_EQ(t.numElements(), -1);
  t.shape = {int64_t(1) << 32, int64_t(1) << 32};
  EXPECT_EQ(t.numElements(), -1);
}

TEST(SafetensorsContainer, AddFindAndOrder) {
  SafeTensors st;
  addOrFail(st, "z", makeTensor(DType::F32, {2}));
  addOrFail(st, "a", makeTensor(DType::I8, {}));
  const TensorData *z = st.find("z");
  addOrFail(st, "m", makeTensor(DType::U8, {3}));
  EXPECT_EQ(st.names(), (std::vector<std::string>{"z", "a", "m"}));
  EXPECT_EQ(st.find("z"), z) << "pointers stay valid across add()";
  EXPECT_EQ(z->shape, std::vector<int64_t>{2});
  EXPECT_EQ(st.find("missing"), nullptr);
}

TEST(SafetensorsContainer, AddRejectsBadTensors) {
  SafeTensors st;
  addOrFail(st, "w", makeTensor(DType::F32, {2}));
  std::string error;
  EXPECT_FALSE(st.add("w", makeTensor(DType::F32, {2}), error));
  EXPECT_NE(error.find("duplicate tensor 'w'"), std::string::npos) << error;

  TensorData shortData = makeTensor(DType::F32, {2, 3});
  shortData.bytes.pop_back();
  EXPECT_FALSE(st.add("x", shortData, error));
  EXPECT_NE(error.find("has 23 bytes"), std::string::npos) << error;
  EXPECT_NE(error.find("needs 24"), std::string::npos) << error;

  TensorData negative = makeTensor(DType::F32, {});
  negative.shape = {-2};
  EXPECT_FALSE(st.add("n", negative, error));
  EXPECT_NE(error.find("negative dimension -2"), std::string::npos) << error;

  EXPECT_FALSE(st.add("__metadata__", makeTensor(DType::U8, {}), error));
  EXPECT_NE(error.find("reserved"), std::string::npos) << error;

  EXPECT_FALSE(st.add("bad\xff", makeTensor(DType::U8, {}), error));
  EXPECT_NE(error.find("UTF-8"), std::string::npos) << error;

  EXPECT_EQ(st.names(), std::vector<std::string>{"w"});
}

//===----------------------------------------------------------------------===//
// Round trips and determinism
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsFileTest, RoundTripsEveryDTypeRankZeroEmptyAndMetadata) {
  SafeTensors in = sampleContent();
  std::string error;
  fs::path path = dir / "all.safetensors";
  ASSERT_TRUE(writeSafeTensors(path.string(), in, error)) << error;

  SafeTensors out;
  ASSERT_TRUE(readSafeTensors(path.string(), out, error)) << error;
  expectSameContent(in, out);
  // Our writer lays data out by name, so that is the order read back.
  std::vector<std::string> sorted = in.names();
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(out.names(), sorted);

  // The same bytes parsed from memory give the same result.
  std::vector<uint8_t> bytes = readBytes(path);
  SafeTensors fromMemory;
  ASSERT_TRUE(parseSafeTensors(bytes.data(), bytes.size(), fromMemory, error))
      << error;
  expectSameContent(in, fromMemory);
}

TEST_F(SafetensorsFileTest, ValuesSurviveExactly) {
  const float values[] = {1.5f, -0.0f, 3.4028235e38f, 1e-45f};
  TensorData t;
  t.dtype = DType::F32;
  t.shape = {4};
  t.bytes.resize(sizeof(values));
  std::memcpy(t.bytes.data(), values, sizeof(values));
  SafeTensors in;
  addOrFail(in, "v", t);
  std::string error;
  fs::path path = dir / "v.safetensors";
  ASSERT_TRUE(writeSafeTensors(path.string(), in, error)) << error;
  SafeTensors out;
  ASSERT_TRUE(readSafeTensors(path.string(), out, error)) << error;
  float back[4];
  std::memcpy(back, out.find("v")->bytes.data(), sizeof(back));
  EXPECT_EQ(std::memcmp(back, values, sizeof(values)), 0);
}

TEST_F(SafetensorsFileTest, EmptyContentIsAValidFile) {
  std::string error;
  fs::path path = dir / "empty.safetensors";
  ASSERT_TRUE(writeSafeTensors(path.string(), SafeTensors(), error)) << error;
  std::vector<uint8_t> expected = buildFile("{}", {}, 6);
  EXPECT_EQ(readBytes(path), expected);
  SafeTensors out;
  addOrFail(out, "stale", makeTensor(DType::U8, {}));
  ASSERT_TRUE(readSafeTensors(path.string(), out, error)) << error;
  EXPECT_EQ(out.size(), 0u) << "reading replaces the previous contents";
}

TEST_F(SafetensorsFileTest, ExactBytesOfASmallFile) {
  SafeTensors st;
  addOrFail(st, "b", makeTensor(DType::I32, {2}));
  addOrFail(st, "a", makeTensor(DType::U8, {}));
  st.metadata()["k"] = "v";
  std::string error;
  fs::path path = dir / "small.safetensors";
  ASSERT_TRUE(writeSafeTensors(path.string(), st, error)) << error;

  // Sorted keys, no whitespace, data by name: a first, then b.
  std::string header =
      "{\"__metadata__\":{\"k\":\"v\"},"
      "\"a\":{\"data_offsets\":[0,1],\"dtype\":\"U8\",\"shape\":[]},"
      "\"b\":{\"data_offsets\":[1,9],\"dtype\":\"I32\",\"shape\":[2]}}";
  std::vector<uint8_t> buffer = st.find("a")->bytes;
  const std::vector<uint8_t> &b = st.find("b")->bytes;
  buffer.insert(buffer.end(), b.begin(), b.end());
  size_t padding = (8 - header.size() % 8) % 8;
  std::vector<uint8_t> expected = buildFile(header, buffer, padding);
  std::vector<uint8_t> actual = readBytes(path);
  EXPECT_EQ(actual, expected);
  ASSERT_GE(actual.size(), 8u);
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, actual.data(), 8);
  EXPECT_EQ((8 + headerSize) % 8, 0u) << "data buffer starts 8-aligned";
}

TEST_F(SafetensorsFileTest, BytesAreDeterministicAndIgnoreInsertionOrder) {
  SafeTensors forward = sampleContent();
  SafeTensors backward;
  for (auto it = forward.names().rbegin(); it != forward.names().rend(); ++it)
    addOrFail(backward, *it, *forward.find(*it));
  backward.metadata()["note"] = forward.metadata().at("note");
  backward.metadata()["format"] = forward.metadata().at("format");

  std::string error;
  fs::path first = dir / "first.safetensors";
  fs::path second = dir / "second.safetensors";
  fs::path third = dir / "third.safetensors";
  ASSERT_TRUE(writeSafeTensors(first.string(), forward, error)) << error;
  ASSERT_TRUE(writeSafeTensors(second.string(), forward, error)) << error;
  ASSERT_TRUE(writeSafeTensors(third.string(), backward, error)) << error;
  std::vector<uint8_t> bytes = readBytes(first);
  ASSERT_FALSE(bytes.empty());
  EXPECT_EQ(bytes, readBytes(second));
  EXPECT_EQ(bytes, readBytes(third));

  // The header's only whitespace is the trailing padding (the one space
  // inside a metadata string value aside, which is content).
  uint64_t headerSize = 0;
  std::memcpy(&headerSize, bytes.data(), 8);
  std::string header(bytes.begin() + 8, bytes.begin() + 8 + headerSize);
  size_t last = header.find_last_not_of(' ');
  EXPECT_EQ(header[last], '}');
  EXPECT_EQ(header.find('\n'), std::string::npos);
  EXPECT_EQ(header.find(": "), std::string::npos);
  EXPECT_EQ(header.find(", "), std::string::npos);
}

//===----------------------------------------------------------------------===//
// Files built by hand from the spec
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsFileTest, ParsesAHandBuiltFile) {
  // Keys deliberately unsorted, data out of name order, header padded with
  // more spaces than alignment needs.
  std::string header =
      "{\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"__metadata__\":{\"format\":\"pt\"},"
      "\"a\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[8,12]},"
      "\"e\":{\"dtype\":\"BF16\",\"shape\":[3,0],\"data_offsets\":[12,12]},"
      "\"h\":{\"dtype\":\"F16\",\"shape\":[1,1],\"data_offsets\":[12,14]}}";
  std::vector<uint8_t> buffer = {
      0x07, 0x00, 0x00, 0x00, // b[0] = 7
      0xff, 0xff, 0xff, 0xff, // b[1] = -1
      0x00, 0x00, 0x50, 0x40, // a = 3.25f
      0x00, 0x3c,             // h = 1.0 in half precision
  };
  size_t padding = (8 - header.size() % 8) % 8 + 16;
  std::vector<uint8_t> file = buildFile(header, buffer, padding);

  SafeTensors st;
  std::string error;
  ASSERT_TRUE(parseSafeTensors(file.data(), file.size(), st, error)) << error;
  EXPECT_EQ(st.names(), (std::vector<std::string>{"b", "a", "e", "h"}));
  EXPECT_EQ(st.metadata(),
            (std::map<std::string, std::string>{{"format", "pt"}}));

  const TensorData *b = st.find("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->dtype, DType::I32);
  EXPECT_EQ(b->shape, std::vector<int64_t>{2});
  int32_t ints[2];
  ASSERT_EQ(b->bytes.size(), sizeof(ints));
  std::memcpy(ints, b->bytes.data(), sizeof(ints));
  EXPECT_EQ(ints[0], 7);
  EXPECT_EQ(ints[1], -1);

  const TensorData *a = st.find("a");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->dtype, DType::F32);
  EXPECT_TRUE(a->shape.empty());
  float scalar = 0;
  ASSERT_EQ(a->bytes.size(), sizeof(scalar));
  std::memcpy(&scalar, a->bytes.data(), sizeof(scalar));
  EXPECT_EQ(scalar, 3.25f);

  const TensorData *e = st.find("e");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->dtype, DType::BF16);
  EXPECT_EQ(e->shape, (std::vector<int64_t>{3, 0}));
  EXPECT_TRUE(e->bytes.empty());

  const TensorData *h = st.find("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->bytes, (std::vector<uint8_t>{0x00, 0x3c}));

  // The same file from disk.
  fs::path path = dir / "hand.safetensors";
  writeBytes(path, file);
  SafeTensors fromDisk;
  ASSERT_TRUE(readSafeTensors(path.string(), fromDisk, error)) << error;
  expectSameContent(st, fromDisk);
}

TEST(SafetensorsParse, AcceptsPrettyPrintedHeaderAndExtraFields) {
  std::string header = "{\n  \"t\": {\"dtype\": \"U8\", \"shape\": [2],\n"
                       "    \"data_offsets\": [0, 2], \"extra\": true}\n}\n";
  std::vector<uint8_t> file = buildFile(header, {1, 2});
  SafeTensors st;
  std::string error;
  ASSERT_TRUE(parseSafeTensors(file.data(), file.size(), st, error)) << error;
  EXPECT_EQ(st.find("t")->bytes, (std::vector<uint8_t>{1, 2}));
}

//===----------------------------------------------------------------------===//
// Validation errors, one per check
//===----------------------------------------------------------------------===//

TEST(SafetensorsError, FileShorterThanLengthField) {
  expectRejected({1, 0, 0, 0, 0}, {"5 bytes", "shorter than the 8-byte"});
  expectRejected({}, {"0 bytes"});
}

TEST(SafetensorsError, HeaderLengthOverLimit) {
  std::vector<uint8_t> file = le64(100ull * 1024 * 1024 + 1);
  file.insert(file.end(), {'{', '}'});
  expectRejected(file, {"header length 104857601", "100 MiB limit"});
  expectRejected(le64(~0ull), {"100 MiB limit"});
}

TEST(SafetensorsError, HeaderLengthBeyondFile) {
  std::vector<uint8_t> file = le64(1000);
  file.insert(file.end(), {'{', '}'});
  expectRejected(file, {"header length 1000", "larger than the 2 bytes"});
}

TEST(SafetensorsError, HeaderNotJson) {
  expectRejected(buildFile("{\"t\":", {}), {"not valid JSON"});
  expectRejected(buildFile("{} x", {}), {"not valid JSON"});
  expectRejected(buildFile("", {}), {"not valid JSON"});
  expectRejected(buildFile("{\"bad\xff\":1}", {}), {"not valid JSON"});
  expectRejected(buildFile(std::string("{}\0 {\"x\":1}", 11), {}),
                 {"not valid JSON (NUL byte at header byte 2)"});
}

TEST(SafetensorsError, NameWithNul) {
  expectRejected(buildFile("{\"x\\u0000\":{\"dtype\":\"F32\",\"shape\":[],"
                           "\"data_offsets\":[0,4]}}",
                           std::vector<uint8_t>(4, 0)),
                 {"contains a NUL byte"});
}

TEST(SafetensorsError, EmptyHeader) {
  // A length field of 0 and nothing after it: rejected before any scan of
  // the (empty) header; UBSan once saw a null pointer reach memchr here.
  expectRejected(le64(0), {"not valid JSON", "empty"});
  expectRejected(buildFile("", {}), {"empty: its length field is 0"});
}

TEST(SafetensorsError, HeaderNotObject) {
  expectRejected(buildFile("[1,2]", {}), {"header is not a JSON object"});
  expectRejected(buildFile("\"x\"", {}), {"header is not a JSON object"});
}

TEST(SafetensorsError, DuplicateKey) {
  std::string entry = "{\"dtype\":\"U8\",\"shape\":[],\"data_offsets\":[0,1]}";
  expectRejected(buildFile("{\"t\":" + entry + ",\"t\":" + entry + "}", {1}),
                 {"duplicate key 't'"});
  expectRejected(
      buildFile(oneTensor("{\"dtype\":\"U8\",\"dtype\":\"U8\",\"shape\":[],"
                          "\"data_offsets\":[0,1]}"),
                {1}),
      {"duplicate key 'dtype'"});
}

TEST(SafetensorsError, EntryNotObject) {
  expectRejected(buildFile(oneTensor("[1]"), {}),
                 {"tensor 't'", "entry is not a JSON object"});
}

TEST(SafetensorsError, MissingFields) {
  expectRejected(
      buildFile(oneTensor("{\"shape\":[1],\"data_offsets\":[0,1]}"), {1}),
      {"tensor 't'", "missing \"dtype\""});
  expectRejected(
      buildFile(oneTensor("{\"dtype\":\"U8\",\"data_offsets\":[0,1]}"), {1}),
      {"tensor 't'", "missing \"shape\""});
  expectRejected(buildFile(oneTensor("{\"dtype\":\"U8\",\"shape\":[1]}"), {1}),
                 {"tensor 't'", "missing \"data_offsets\""});
}

TEST(SafetensorsError, WrongJsonTypes) {
  expectRejected(
      buildFile(oneTensor("{\"dtype\":5,\"shape\":[1],\"data_offsets\":[0,1]}"),
                {1}),
      {"tensor 't'", "\"dtype\" is not a string"});
  for (const char *shape :
       {"3", "\"3\"", "[1.5]", "[\"1\"]", "[[1]]", "null", "[1e400]"}) {
    std::string body = std::string("{\"dtype\":\"U8\",\"shape\":") + shape +
                       ",\"data_offsets\":[0,1]}";
    SCOPED_TRACE(shape);
    std::vector<uint8_t> file = buildFile(oneTensor(body), {1});
    if (std::string(shape) == "[1e400]")
      expectRejected(file, {"not valid JSON"}); // out-of-range number
    else
      expectRejected(file, {"tensor 't'", "\"shape\" is not an array"});
  }
  for (const char *offsets :
       {"0", "[0]", "[0,1,2]", "[-1,1]", "[0,\"1\"]", "[0.0,1]", "{\"a\":0}"}) {
    std::string body = std::string("{\"dtype\":\"U8\",\"shape\":[1],"
                                   "\"data_offsets\":") +
                       offsets + "}";
    SCOPED_TRACE(offsets);
    expectRejected(buildFile(oneTensor(body), {1}),
                   {"tensor 't'", "\"data_offsets\" is not [begin, end]"});
  }
}

TEST(SafetensorsError, UnknownDType) {
  expectRejected(
      buildFile(
          oneTensor("{\"dtype\":\"I16\",\"shape\":[1],\"data_offsets\":[0,2]}"),
          {1, 2}),
      {"tensor 't'", "unsupported dtype 'I16'"});
}

TEST(SafetensorsError, NegativeDimension) {
  expectRejected(
      buildFile(
          oneTensor(
              "{\"dtype\":\"U8\",\"shape\":[2,-3],\"data_offsets\":[0,6]}"),
          std::vector<uint8_t>(6)),
      {"tensor 't'", "negative dimension -3 at index 1"});
}

TEST(SafetensorsError, ElementCountOverflow) {
  expectRejected(
      buildFile(oneTensor("{\"dtype\":\"U8\",\"shape\":[4294967296,4294967296],"
                          "\"data_offsets\":[0,1]}"),
                {1}),
      {"tensor 't'", "element count of shape [4294967296, 4294967296] "
                     "overflows"});
  // The element count fits but its byte size does not.
  expectRejected(
      buildFile(oneTensor("{\"dtype\":\"I64\",\"shape\":[2305843009213693952],"
                          "\"data_offsets\":[0,1]}"),
                {1}),
      {"tensor 't'", "overflows"});
  expectRejected(
      buildFile(oneTensor("{\"dtype\":\"U8\",\"shape\":[18446744073709551615],"
                          "\"data_offsets\":[0,1]}"),
                {1}),
      {"tensor 't'", "dimension 18446744073709551615 at index 0", "too large"});
}

TEST(SafetensorsError, BeginAfterEnd) {
  expectRejected(
      buildFile(
          oneTensor("{\"dtype\":\"U8\",\"shape\":[0],\"data_offsets\":[4,2]}"),
          std::vector<uint8_t>(4)),
      {"tensor 't'", "begin 4 is after end 2"});
}

TEST(SafetensorsError, EndBeyondBuffer) {
  expectRejected(
      buildFile(
          oneTensor("{\"dtype\":\"U8\",\"shape\":[5],\"data_offsets\":[0,5]}"),
          std::vector<uint8_t>(4)),
      {"tensor 't'", "end 5 is beyond the 4-byte data buffer"});
}

TEST(SafetensorsError, ByteSizeMismatch) {
  expectRejected(
      buildFile(
          oneTensor(
              "{\"dtype\":\"F32\",\"shape\":[2,3],\"data_offsets\":[0,8]}"),
          std::vector<uint8_t>(8)),
      {"tensor 't'", "span 8 bytes", "needs 24 bytes"});
}

TEST(SafetensorsError, OverlappingTensors) {
  std::string header =
      "{\"a\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"U8\",\"shape\":[8],\"data_offsets\":[4,12]}}";
  expectRejected(buildFile(header, std::vector<uint8_t>(12)),
                 {"tensors 'a' [0, 8) and 'b' [4, 12) overlap"});
  // Identical ranges overlap too.
  header = "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
           "\"b\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[0,4]}}";
  expectRejected(buildFile(header, std::vector<uint8_t>(4)), {"overlap"});
}

TEST(SafetensorsError, BytesNotCovered) {
  std::string gap =
      "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]},"
      "\"b\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[8,12]}}";
  expectRejected(buildFile(gap, std::vector<uint8_t>(12)),
                 {"bytes [4, 8) of the data buffer are not covered"});
  std::string tail =
      "{\"a\":{\"dtype\":\"U8\",\"shape\":[4],\"data_offsets\":[0,4]}}";
  expectRejected(buildFile(tail, std::vector<uint8_t>(6)),
                 {"bytes [4, 6) of the data buffer are not covered"});
  expectRejected(buildFile("{}", {0}), {"bytes [0, 1)", "not covered"});
}

TEST(SafetensorsError, MetadataNotObjectOfStrings) {
  expectRejected(buildFile("{\"__metadata__\":[\"a\"]}", {}),
                 {"\"__metadata__\" is not an object of strings"});
  expectRejected(buildFile("{\"__metadata__\":{\"k\":1}}", {}),
                 {"\"__metadata__\" value of 'k' is not a string"});
}

TEST(SafetensorsError, HostileNamesStayOnOneLine) {
  expectRejected(buildFile("{\"a\\nb\":[]}", {}),
                 {"tensor 'a\\x0ab'", "not a JSON object"});
}

TEST(SafetensorsError, NullDataPointer) {
  SafeTensors st;
  std::string error;
  EXPECT_FALSE(parseSafeTensors(nullptr, 16, st, error));
  EXPECT_NE(error.find("null"), std::string::npos) << error;
  EXPECT_FALSE(parseSafeTensors(nullptr, 0, st, error));
  EXPECT_NE(error.find("shorter"), std::string::npos) << error;
}

TEST_F(SafetensorsFileTest, FileErrorsNameTheFile) {
  SafeTensors st;
  std::string error;
  fs::path missing = dir / "missing.safetensors";
  EXPECT_FALSE(readSafeTensors(missing.string(), st, error));
  EXPECT_EQ(error,
            missing.string() + ": cannot open: No such file or directory");

  EXPECT_FALSE(readSafeTensors(dir.string(), st, error));
  EXPECT_EQ(error, dir.string() + ": not a regular file");

  fs::path bad = dir / "bad.safetensors";
  writeBytes(bad, buildFile(oneTensor("{\"dtype\":\"X\",\"shape\":[],"
                                      "\"data_offsets\":[0,1]}"),
                            {1}));
  EXPECT_FALSE(readSafeTensors(bad.string(), st, error));
  EXPECT_EQ(error, bad.string() + ": tensor 't': unsupported dtype 'X'");
}

//===----------------------------------------------------------------------===//
// Truncation and corruption
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsFileTest, EveryTruncationFailsCleanly) {
  SafeTensors content;
  addOrFail(content, "w", makeTensor(DType::F32, {3, 2}, 1));
  addOrFail(content, "s", makeTensor(DType::I64, {}, 2));
  addOrFail(content, "e", makeTensor(DType::F16, {0}, 3));
  addOrFail(content, "b", makeTensor(DType::BOOL, {5}, 4));
  content.metadata()["k"] = "v";
  std::string error;
  fs::path path = dir / "full.safetensors";
  ASSERT_TRUE(writeSafeTensors(path.string(), content, error)) << error;
  std::vector<uint8_t> full = readBytes(path);
  ASSERT_GT(full.size(), 100u);

  fs::path cut = dir / "cut.safetensors";
  for (size_t length = 0; length < full.size(); ++length) {
    SCOPED_TRACE("length " + std::to_string(length));
    // An exactly sized heap copy, so any read past the end is out of bounds
    // (and caught by sanitizers).
    std::vector<uint8_t> prefix(full.begin(), full.begin() + length);
    SafeTensors st;
    EXPECT_FALSE(parseSafeTensors(prefix.data(), prefix.size(), st, error));
    EXPECT_FALSE(error.empty());
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;

    writeBytes(cut, prefix);
    EXPECT_FALSE(readSafeTensors(cut.string(), st, error));
    EXPECT_EQ(error.rfind(cut.string() + ": ", 0), 0u) << error;
  }
  SafeTensors st;
  EXPECT_TRUE(parseSafeTensors(full.data(), full.size(), st, error)) << error;
}

TEST_F(SafetensorsFileTest, CorruptingAnyByteNeverCrashes) {
  SafeTensors content;
  addOrFail(content, "w", makeTensor(DType::F32, {2, 2}, 1));
  addOrFail(content, "i", makeTensor(DType::I8, {3}, 2));
  std::string error;
  fs::path path = dir / "c.safetensors";
  ASSERT_TRUE(writeSafeTensors(path.string(), content, error)) << error;
  const std::vector<uint8_t> full = readBytes(path);
  uint64_t headerEnd = 0;
  std::memcpy(&headerEnd, full.data(), 8);
  headerEnd += 8;
  for (size_t i = 0; i < full.size(); ++i) {
    const uint8_t values[] = {0x00, 0x01, 0x20, 0x22, 0x2c,
                              0x5d, 0x7d, 0x80, 0xff};
    for (uint8_t value : values) {
      std::vector<uint8_t> bytes = full;
      bytes[i] = value;
      SafeTensors st;
      bool ok = parseSafeTensors(bytes.data(), bytes.size(), st, error);
      // Corrupt data bytes are still a valid file; corrupt structure fails
      // with a message. Either way, no crash.
      if (!ok) {
        EXPECT_FALSE(error.empty());
      }
      if (i >= headerEnd) {
        EXPECT_TRUE(ok) << error;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Atomic write
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsFileTest, WriteIntoMissingDirectoryFailsAndLeavesNothing) {
  fs::path path = dir / "no-such-dir" / "x.safetensors";
  std::string error;
  EXPECT_FALSE(writeSafeTensors(path.string(), sampleContent(), error));
  EXPECT_EQ(error.rfind(path.string() + ": cannot create temporary file", 0),
            0u)
      << error;
  EXPECT_NE(error.find("No such file or directory"), std::string::npos)
      << error;
  EXPECT_FALSE(fs::exists(dir / "no-such-dir"));
  EXPECT_TRUE(listDirectory(dir).empty());
}

TEST_F(SafetensorsFileTest, FailedRenameLeavesTargetAndNoTemporary) {
  // The target is a non-empty directory: everything up to the rename works,
  // so this checks the late cleanup path.
  fs::path target = dir / "target";
  fs::create_directory(target);
  writeBytes(target / "keep", {1, 2, 3});
  std::string error;
  EXPECT_FALSE(writeSafeTensors(target.string(), sampleContent(), error));
  EXPECT_EQ(error.rfind(target.string() + ": cannot rename", 0), 0u) << error;
  EXPECT_TRUE(fs::is_directory(target));
  EXPECT_EQ(readBytes(target / "keep"), (std::vector<uint8_t>{1, 2, 3}));
  EXPECT_EQ(listDirectory(dir), std::vector<std::string>{"target"});
  EXPECT_EQ(listDirectory(target), std::vector<std::string>{"keep"});
}

TEST_F(SafetensorsFileTest, FailedWriteLeavesExistingFileIntact) {
  fs::path path = dir / "model.safetensors";
  std::string error;
  ASSERT_TRUE(writeSafeTensors(path.string(), sampleContent(), error)) << error;
  std::vector<uint8_t> before = readBytes(path);

  SafeTensors bad = sampleContent();
  bad.metadata()["key"] = "not utf-8 \xc3";
  EXPECT_FALSE(writeSafeTensors(path.string(), bad, error));
  EXPECT_EQ(error.rfind(path.string() + ": metadata key 'key'", 0), 0u)
      << error;
  EXPECT_NE(error.find("not valid UTF-8"), std::string::npos) << error;
  EXPECT_EQ(readBytes(path), before);
  EXPECT_EQ(listDirectory(dir), std::vector<std::string>{"model.safetensors"});
}

TEST_F(SafetensorsFileTest, OverwriteReplacesWholeFile) {
  fs::path path = dir / "model.safetensors";
  std::string error;
  ASSERT_TRUE(writeSafeTensors(path.string(), sampleContent(), error)) << error;
  SafeTensors small;
  addOrFail(small, "only", makeTensor(DType::U8, {1}));
  ASSERT_TRUE(writeSafeTensors(path.string(), small, error)) << error;
  SafeTensors out;
  ASSERT_TRUE(readSafeTensors(path.string(), out, error)) << error;
  expectSameContent(small, out);
  EXPECT_EQ(listDirectory(dir), std::vector<std::string>{"model.safetensors"});
  // Created with the usual permissions (0666 less the umask), not the 0600
  // a mkstemp temporary would have carried over.
  mode_t mask = ::umask(0);
  ::umask(mask);
  struct stat info;
  ASSERT_EQ(::stat(path.c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0666 & ~mask);
}

//===----------------------------------------------------------------------===//
// Reading parts of tensors (SafeTensorsFile)
//===----------------------------------------------------------------------===//

TEST_F(SafetensorsFileTest, PartsReadByOffsetWithoutTheRest) {
  SafeTensors in;
  std::string error;
  TensorData w;
  w.dtype = DType::F32;
  w.shape = {2, 3};
  const float values[] = {1, 2, 3, 4, 5, 6};
  w.bytes.assign(reinterpret_cast<const uint8_t *>(values),
                 reinterpret_cast<const uint8_t *>(values) + sizeof values);
  ASSERT_TRUE(in.add("w", w, error)) << error;
  ASSERT_TRUE(in.add("b", makeTensor(DType::I32, {4}), error)) << error;
  fs::path path = dir / "parts.safetensors";
  ASSERT_TRUE(writeSafeTensors(path.string(), in, error)) << error;

  SafeTensorsFile file;
  ASSERT_TRUE(file.open(path.string(), error)) << error;
  const SafeTensorsFile::Tensor *t = file.find("w");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dtype, DType::F32);
  EXPECT_EQ(t->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t->bytes, sizeof values);
  EXPECT_EQ(file.find("nope"), nullptr);
  EXPECT_EQ(file.names().size(), 2u);

  // The second row, by offset.
  float row[3] = {0, 0, 0};
  ASSERT_TRUE(file.read("w", 3 * sizeof(float), row, sizeof row, error))
      << error;
  EXPECT_EQ(row[0], 4.0f);
  EXPECT_EQ(row[2], 6.0f);

  EXPECT_FALSE(file.read("w", 4 * sizeof(float), row, sizeof row, error));
  EXPECT_NE(error.find("outside tensor 'w'"), std::string::npos) << error;
  EXPECT_FALSE(file.read("nope", 0, row, 4, error));
  EXPECT_NE(error.find("no tensor 'nope'"), std::string::npos) << error;
}

TEST_F(SafetensorsFileTest, PartsRejectTheFilesTheReaderRejects) {
  fs::path path = dir / "bad.safetensors";
  std::ofstream(path) << "not safetensors at all";
  SafeTensorsFile file;
  std::string error;
  EXPECT_FALSE(file.open(path.string(), error));
  EXPECT_NE(error.find("exceeds the 100 MiB limit"), std::string::npos)
      << error;
  EXPECT_FALSE(file.open((dir / "missing.safetensors").string(), error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;
}
