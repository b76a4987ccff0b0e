//===- OffloadTest.cpp - The reader and copy engine of offloaded weights --===//
//
// The pieces under an offloaded plan's fetches (src/offload.h), driven
// directly on the CPU backend: a weights file read one tensor's byte range
// at a time (through O_DIRECT and through its buffered fallback), refused
// naming the tensor once it was truncated or modified after it was opened;
// and the engine's fetches from the host store and from a file, more of
// them than it has staging buffers, each landing its exact bytes in its
// slot, with a failed read surfacing at the fetch's wait.
//
//===----------------------------------------------------------------------===//

#include "executor.h"
#include "offload.h"
#include "offload_reader.h"

#include "mwrt/runtime.h"
#include "mwrt/safetensors.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <memory>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace mwrt::test {
namespace {

using detail::FetchDesc;
using detail::OffloadEngine;
using detail::OffloadFile;

/// A temporary directory removed at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    char pattern[] = "/tmp/mwrt-offload-XXXXXX";
    path = ::mkdtemp(pattern);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

/// `count` f32 values start, start+1, ... as bytes.
TensorData floats(int64_t count, float start) {
  TensorData t;
  t.dtype = DType::F32;
  t.shape = {count};
  t.bytes.resize(static_cast<size_t>(count) * 4);
  for (int64_t i = 0; i < count; ++i) {
    float v = start + static_cast<float>(i);
    std::memcpy(t.bytes.data() + 4 * i, &v, 4);
  }
  return t;
}

/// Writes tensors "a" (1000 floats), "b" (3000) and "c" (17) to `path`.
SafeTensors writeWeights(const std::string &path) {
  SafeTensors st;
  std::string error;
  EXPECT_TRUE(st.add("a", floats(1000, 1), error)) << error;
  EXPECT_TRUE(st.add("b", floats(3000, 5000), error)) << error;
  EXPECT_TRUE(st.add("c", floats(17, -3), error)) << error;
  EXPECT_TRUE(writeSafeTensors(path, st, error)) << error;
  return st;
}

/// An aligned staging buffer for `bytes`.
struct Staging {
  void *data = nullptr;
  explicit Staging(uint64_t bytes) {
    EXPECT_EQ(posix_memalign(&data, detail::kDirectAlignment,
                             detail::stagingBytesFor(bytes)),
              0);
  }
  ~Staging() { std::free(data); }
  uint8_t *bytes() { return static_cast<uint8_t *>(data); }
};

std::vector<uint8_t> readTensor(OffloadFile &file, const std::string &name,
                                mwrt_status &status) {
  const SafeTensorsFile::Tensor *t = file.tensors().find(name);
  EXPECT_NE(t, nullptr);
  Staging staging(t->bytes);
  uint64_t delta = 0;
  status = file.read(name, t->offset, t->bytes, staging.bytes(), delta);
  if (status)
    return {};
  return std::vector<uint8_t>(staging.bytes() + delta,
                              staging.bytes() + delta + t->bytes);
}

TEST(OffloadFile, ReadsEachTensorsBytesDirectAndBuffered) {
  TempDir dir;
  std::string path = dir.path + "/w.safetensors";
  SafeTensors st = writeWeights(path);
  for (bool direct : {true, false}) {
    OffloadFile file;
    ASSERT_EQ(file.open(path, direct), MWRT_OK) << mwrt_last_error();
    // The filesystems here take O_DIRECT; one that refuses it falls back.
    if (!direct) {
      EXPECT_FALSE(file.direct());
    }
    for (const char *name : {"b", "c", "a"}) {
      mwrt_status status;
      std::vector<uint8_t> got = readTensor(file, name, status);
      ASSERT_EQ(status, MWRT_OK) << mwrt_last_error();
      EXPECT_EQ(got, st.find(name)->bytes) << name << " direct=" << direct;
    }
  }
}

TEST(OffloadFile, DirectRefusedFallsBackToBufferedReads) {
  TempDir dir;
  std::string path = dir.path + "/w.safetensors";
  SafeTensors st = writeWeights(path);
  ::setenv("MWRT_OFFLOAD_DIRECT", "0", 1);
  OffloadFile file;
  mwrt_status opened = file.open(path, /*direct=*/true);
  ::unsetenv("MWRT_OFFLOAD_DIRECT");
  ASSERT_EQ(opened, MWRT_OK) << mwrt_last_error();
  EXPECT_FALSE(file.direct());
  mwrt_status status;
  EXPECT_EQ(readTensor(file, "b", status), st.find("b")->bytes);
  EXPECT_EQ(status, MWRT_OK) << mwrt_last_error();
}

/// Opens the weights at a new file, lets `change` alter it, and expects the
/// read of `tensor` then to be refused with `reason`, naming the tensor.
template <typename Change>
void expectRefused(const std::string &tensor, const std::string &reason,
                   Change change) {
  TempDir dir;
  std::string path = dir.path + "/w.safetensors";
  writeWeights(path);
  OffloadFile file;
  ASSERT_EQ(file.open(path, true), MWRT_OK) << mwrt_last_error();
  change(path, file);
  mwrt_status status;
  readTensor(file, tensor, status);
  EXPECT_EQ(status, MWRT_INVALID_ARGUMENT);
  std::string message = mwrt_last_error();
  EXPECT_NE(message.find(reason), std::string::npos) << message;
  EXPECT_NE(message.find("tensor '" + tensor + "'"), std::string::npos)
      << message;
}

TEST(OffloadFile, TruncatedAfterOpenIsRefusedNamingTheTensor) {
  expectRefused("b", "was truncated", [](const std::string &path,
                                         OffloadFile &file) {
    const SafeTensorsFile::Tensor *b = file.tensors().find("b");
    ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(b->offset + 10)), 0);
  });
}

TEST(OffloadFile, ModifiedAfterOpenIsRefusedNamingTheTensor) {
  // Same size, new contents: only the modification time tells.
  expectRefused("c", "was modified since the session opened it",
                [](const std::string &path, OffloadFile &) {
                  struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
                  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
                });
}

/// A CPU backend with the engine's fetches of "a", "b", "c" from `path` (b
/// and c from the file, a from a host buffer), into slots.
struct EngineFixture {
  std::unique_ptr<detail::Backend> backend;
  std::unique_ptr<OffloadEngine> engine;
  std::vector<std::vector<uint8_t>> slots;
  std::vector<uint8_t> host;

  EngineFixture(const std::string &path, const SafeTensors &st, bool deferred) {
    backend = detail::createCpuBackend(SessionOptions());
    engine = std::make_unique<OffloadEngine>(*backend);
    const char *names[] = {"b", "a", "c", "b"};
    host = st.find("a")->bytes;
    std::vector<FetchDesc> list;
    for (int i = 0; i < 4; ++i) {
      FetchDesc d;
      d.kernel = static_cast<size_t>(10 + i);
      d.persistent = names[i][0] - 'a';
      d.tensor = names[i];
      d.fromFile = names[i][0] != 'a';
      d.deferred = deferred;
      d.bytes = st.find(names[i])->bytes.size();
      slots.emplace_back(d.bytes, 0);
      d.dst = slots.back().data();
      d.src = d.fromFile ? nullptr : host.data();
      list.push_back(d);
    }
    EXPECT_EQ(engine->prepare(std::move(list)), MWRT_OK) << mwrt_last_error();
    auto file = std::make_shared<OffloadFile>();
    EXPECT_EQ(file->open(path, true), MWRT_OK) << mwrt_last_error();
    EXPECT_EQ(engine->missingSources().size(), 2u);
    for (const char *n : {"b", "c"})
      engine->setSource(n[0] - 'a', file, file->tensors().find(n)->offset);
    EXPECT_TRUE(engine->ready());
  }
};

TEST(OffloadEngine, FetchesLandTheirBytesIssuedAheadOrInPlace) {
  TempDir dir;
  std::string path = dir.path + "/w.safetensors";
  SafeTensors st = writeWeights(path);
  for (bool ahead : {true, false}) {
    EngineFixture fx(path, st, ahead);
    EXPECT_EQ(fx.engine->fetchOfKernel(12), 2);
    EXPECT_EQ(fx.engine->fetchOfKernel(3), -1);
    for (int step = 0; step < 3; ++step) {
      for (auto &s : fx.slots)
        std::fill(s.begin(), s.end(), 0);
      ASSERT_EQ(fx.engine->beginStep(), MWRT_OK);
      if (ahead) {
        // Every fetch issued before any wait: four copies in flight over
        // two staging buffers.
        for (size_t f = 0; f < 4; ++f)
          ASSERT_EQ(fx.engine->issue(f), MWRT_OK) << mwrt_last_error();
        for (size_t f = 0; f < 4; ++f)
          ASSERT_EQ(fx.engine->wait(f), MWRT_OK) << mwrt_last_error();
      } else {
        for (size_t f = 0; f < 4; ++f) {
          ASSERT_EQ(fx.engine->issue(f), MWRT_OK) << mwrt_last_error();
          ASSERT_EQ(fx.engine->wait(f), MWRT_OK) << mwrt_last_error();
        }
      }
      ASSERT_EQ(fx.engine->endStep(false), MWRT_OK) << mwrt_last_error();
      const char *names[] = {"b", "a", "c", "b"};
      for (int i = 0; i < 4; ++i)
        EXPECT_EQ(fx.slots[i], st.find(names[i])->bytes) << i;
    }
    detail::OffloadCounters c = fx.engine->counters();
    EXPECT_EQ(c.steps, 3u);
    EXPECT_EQ(c.fetches, 12u);
    uint64_t perStep = (2 * 3000 + 1000 + 17) * 4;
    EXPECT_EQ(c.bytesStreamed, 3 * perStep);
    EXPECT_EQ(c.bytesRead, 3 * (perStep - 1000 * 4));
    EXPECT_TRUE(fx.engine->allDirect());
  }
}

TEST(OffloadEngine, AFailedReadStopsTheStepAtItsWait) {
  TempDir dir;
  std::string path = dir.path + "/w.safetensors";
  SafeTensors st = writeWeights(path);
  EngineFixture fx(path, st, true);
  ASSERT_EQ(::truncate(path.c_str(), 100), 0);
  ASSERT_EQ(fx.engine->beginStep(), MWRT_OK);
  ASSERT_EQ(fx.engine->issue(0), MWRT_OK);
  EXPECT_EQ(fx.engine->wait(0), MWRT_INVALID_ARGUMENT);
  std::string message = mwrt_last_error();
  EXPECT_NE(message.find("tensor 'b'"), std::string::npos) << message;
  EXPECT_EQ(fx.engine->endStep(true), MWRT_OK);
  // The next step fails the same way, and does not hang.
  ASSERT_EQ(fx.engine->beginStep(), MWRT_OK);
  for (size_t f = 0; f < 4; ++f)
    ASSERT_EQ(fx.engine->issue(f), MWRT_OK);
  EXPECT_EQ(fx.engine->wait(1), MWRT_OK); // from the host store
  EXPECT_EQ(fx.engine->wait(2), MWRT_INVALID_ARGUMENT);
  EXPECT_EQ(fx.engine->endStep(true), MWRT_OK);
  EXPECT_EQ(fx.engine->counters().steps, 0u);
}

} // namespace
} // namespace mwrt::test
