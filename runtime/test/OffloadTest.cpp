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

#include "PlanTestHelpers.h"
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
using Where = mwplan::Placement;

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
  t.dtype = mwrt::DType::F32;
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

/// y = x @ fc.weight + fc.bias with fc.weight at `placement`: fetched into
/// the arena (bytes 0..24) and waited on before the matmul; resident
/// (Device) it is read in place.
std::shared_ptr<const Plan> densePlan(Where placement,
                                      const std::string &dir = "") {
  PlanBuilder p;
  p.function = "offload_dense";
  p.arenaSize = 192;
  p.offloadPath = dir;
  int x = p.addPersistent("x", DType::F32, {2, 3}, Role::Input, 0);
  int w = p.addPersistent("fc.weight", DType::F32, {3, 2}, Role::Param, 1);
  int b = p.addPersistent("fc.bias", DType::F32, {2}, Role::Param, 2);
  p.persistents[w].placement = placement;
  OperandSpec weight = persistent(w, {3, 2});
  if (placement != Where::Device) {
    p.addKernel("mw.fetch", {persistent(w, {3, 2})}, {arena(0, {3, 2})},
                {intAttr("layer", 0)}, "dense.py:1");
    p.addKernel("mw.wait", {arena(0, {3, 2})}, {arena(0, {3, 2})}, {},
                "dense.py:2");
    weight = arena(0, {3, 2});
  }
  p.addKernel("mw.matmul", {persistent(x, {2, 3}), weight},
              {arena(64, {2, 2})}, {}, "dense.py:3");
  p.addKernel("mw.add", {arena(64, {2, 2}), persistent(b, {2})},
              {arena(128, {2, 2})}, {}, "dense.py:4");
  p.addResult("y", Role::Output, arena(128, {2, 2}));
  std::vector<uint8_t> bytes = p.finish();
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(Plan::parse(bytes.data(), bytes.size(), plan), MWRT_OK)
      << mwrt_last_error();
  return plan;
}

std::unique_ptr<Session> newSession(std::shared_ptr<const Plan> plan) {
  std::unique_ptr<Session> s;
  EXPECT_EQ(Session::create(std::move(plan), "cpu", SessionOptions(), s),
            MWRT_OK)
      << mwrt_last_error();
  return s;
}

std::vector<uint8_t> resultOf(Session &s) {
  TensorData y;
  EXPECT_EQ(s.readResult("y", y), MWRT_OK) << mwrt_last_error();
  return y.bytes;
}

/// fc.weight and fc.bias (not the defaults) in a weights file.
std::string writeDenseWeights(const std::string &dir) {
  SafeTensors st;
  std::string error;
  TensorData w = floats(6, 0.5f), b = floats(2, -1);
  w.shape = {3, 2};
  EXPECT_TRUE(st.add("fc.weight", w, error)) << error;
  EXPECT_TRUE(st.add("fc.bias", b, error)) << error;
  std::string path = dir + "/dense.safetensors";
  EXPECT_TRUE(writeSafeTensors(path, st, error)) << error;
  return path;
}

TEST(OffloadSession, HostAndFileWeightsGiveTheResidentOutputs) {
  TempDir dir;
  auto resident = newSession(densePlan(Where::Device));
  ASSERT_EQ(resident->step(), MWRT_OK) << mwrt_last_error();
  std::vector<uint8_t> expected = resultOf(*resident);
  for (Where placement : {Where::Host, Where::File}) {
    std::string where = dir.path + "/defaults";
    auto s = newSession(densePlan(placement, where));
    for (int step = 0; step < 2; ++step)
      ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
    EXPECT_EQ(resultOf(*s), expected);
    TensorData a, b;
    ASSERT_EQ(resident->readPersistent("fc.weight", a), MWRT_OK);
    ASSERT_EQ(s->readPersistent("fc.weight", b), MWRT_OK) << mwrt_last_error();
    EXPECT_EQ(a.bytes, b.bytes);
    // The weight is not device memory, and the plan's peak is measured.
    SessionStats st = s->stats();
    EXPECT_EQ(st.measuredPeakBytes, st.plannedPeakBytes);
    EXPECT_EQ(st.persistentBytes, resident->stats().persistentBytes - 64);
    EXPECT_GT(st.hostBytes, 0u);
    OffloadStats os = s->offloadStats();
    EXPECT_EQ(os.steps, 2u);
    EXPECT_EQ(os.fetches, 2u);
    EXPECT_EQ(os.bytesStreamed, 2u * 24);
    EXPECT_EQ(os.bytesRead, placement == Where::File ? 2u * 24 : 0u);
    if (placement == Where::File) {
      // The defaults' file, complete, and nothing else beside it.
      std::vector<std::string> names;
      for (const auto &e : std::filesystem::directory_iterator(where))
        names.push_back(e.path().filename());
      EXPECT_EQ(names,
                std::vector<std::string>{"offload_dense.weights.safetensors"});
      EXPECT_EQ(os.file, where + "/offload_dense.weights.safetensors");
    }
  }
}

TEST(OffloadSession, FileWeightsComeFromTheWeightsFileByOffset) {
  TempDir dir;
  std::string weights = writeDenseWeights(dir.path);
  auto resident = newSession(densePlan(Where::Device));
  ASSERT_EQ(resident->loadWeights(weights), MWRT_OK);
  ASSERT_EQ(resident->step(), MWRT_OK);
  for (Where placement : {Where::Host, Where::File}) {
    auto s = newSession(densePlan(placement, dir.path + "/unused"));
    ASSERT_EQ(s->loadWeights(weights), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
    EXPECT_EQ(resultOf(*s), resultOf(*resident));
    // No defaults file: the weights came from --weights.
    EXPECT_FALSE(std::filesystem::exists(dir.path + "/unused"));
    // Loaded into the host store, or bound to the file, never drawn: the
    // same bytes loaded and initialized as the resident session's.
    EXPECT_GE(s->stats().loadedBytes, 24u);
    EXPECT_EQ(s->stats().loadedBytes, resident->stats().loadedBytes);
    EXPECT_EQ(s->stats().initializedBytes,
              resident->stats().initializedBytes);
    if (placement == Where::File) {
      EXPECT_EQ(s->offloadStats().file, weights);
    }
  }
}

TEST(OffloadSession, AWeightsFileChangedAfterLoadingIsRefusedNamingTheTensor) {
  for (bool truncate : {false, true}) {
    TempDir dir;
    std::string weights = writeDenseWeights(dir.path);
    auto s = newSession(densePlan(Where::File));
    ASSERT_EQ(s->loadWeights(weights), MWRT_OK) << mwrt_last_error();
    ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
    if (truncate) {
      ASSERT_EQ(::truncate(weights.c_str(), 64), 0);
    } else {
      struct timespec times[2] = {{0, UTIME_OMIT}, {12345, 0}};
      ASSERT_EQ(::utimensat(AT_FDCWD, weights.c_str(), times, 0), 0);
    }
    EXPECT_EQ(s->step(), MWRT_INVALID_ARGUMENT);
    std::string message = mwrt_last_error();
    EXPECT_CONTAINS(message, "step 2, kernel 1 ('mw.wait' at dense.py:2)");
    EXPECT_CONTAINS(message, truncate ? "was truncated" : "was modified");
    EXPECT_CONTAINS(message, "cannot read tensor 'fc.weight'");
  }
}

TEST(OffloadSession, AFileTensorOfTheWrongShapeIsRefusedAtLoad) {
  TempDir dir;
  SafeTensors st;
  std::string error;
  TensorData w = floats(6, 0.5f);
  ASSERT_TRUE(st.add("fc.weight", w, error));
  ASSERT_TRUE(st.add("fc.bias", floats(2, 0), error));
  std::string path = dir.path + "/bad.safetensors";
  ASSERT_TRUE(writeSafeTensors(path, st, error));
  auto s = newSession(densePlan(Where::File));
  EXPECT_EQ(s->loadWeights(path), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(std::string(mwrt_last_error()),
                  "tensor 'fc.weight' is F32 [6], but the plan's param "
                  "'fc.weight' is F32 [3, 2]");
  EXPECT_EQ(s->setTensor("fc.weight", mwrt::DType::F32, {3, 2}, w.bytes.data(), 24),
            MWRT_INVALID_ARGUMENT);
}

TEST(OffloadSession, CudaStreamsOnItsCopyStreamLikeResident) {
  // The copy stream, events and pinned host memory: skipped without a GPU.
  std::unique_ptr<Session> probe;
  if (Session::create(densePlan(Where::Device), "cuda", SessionOptions(),
                      probe) != MWRT_OK)
    GTEST_SKIP() << mwrt_last_error();
  TempDir dir;
  std::string weights = writeDenseWeights(dir.path);
  // Against the same step resident on the GPU (cuBLAS need not round like
  // the CPU).
  ASSERT_EQ(probe->loadWeights(weights), MWRT_OK);
  ASSERT_EQ(probe->step(), MWRT_OK) << mwrt_last_error();
  for (Where placement : {Where::Host, Where::File}) {
    std::unique_ptr<Session> s;
    ASSERT_EQ(Session::create(densePlan(placement), "cuda", SessionOptions(),
                              s),
              MWRT_OK)
        << mwrt_last_error();
    ASSERT_EQ(s->loadWeights(weights), MWRT_OK) << mwrt_last_error();
    for (int step = 0; step < 3; ++step)
      ASSERT_EQ(s->step(), MWRT_OK) << mwrt_last_error();
    EXPECT_EQ(resultOf(*s), resultOf(*probe));
    SessionStats st = s->stats();
    EXPECT_EQ(st.measuredPeakBytes, st.plannedPeakBytes);
    EXPECT_EQ(s->offloadStats().bytesStreamed, 3u * 24);
  }
}

} // namespace
} // namespace mwrt::test
