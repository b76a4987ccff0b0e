//===- PlanTestHelpers.h - Hand-built plans for the runtime's tests -------===//
//
// Shared by the runtime's tests (PlanLoadTest, RunSessionTest, RunToolTest,
// KvCacheTest; CpuKernelsTest uses failsWith): a PlanBuilder that
// collects persistents, kernels and results as plain structs (so a test can
// corrupt one field) and serializes them with flatbuffers' builder exactly as
// mw-translate would, plus small file helpers.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_TEST_PLANTESTHELPERS_H
#define MWRT_TEST_PLANTESTHELPERS_H

#include "mwrt/mwrt.h"
#include "mwrt/plan.h"

#include <flatbuffers/flatbuffers.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

/// Expects `text` (a string) to contain `part`, printing both otherwise.
#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_PRED_FORMAT2(::mwrt::test::assertContains, text, part)

namespace mwrt::test {

inline ::testing::AssertionResult assertContains(const char *textExpr,
                                                 const char *partExpr,
                                                 const std::string &text,
                                                 const std::string &part) {
  if (text.find(part) != std::string::npos)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << textExpr << " does not contain " << partExpr << "\n  text: " << text
         << "\n  part: " << part;
}

/// The call failed as a bad call (MWRT_INVALID_ARGUMENT), with `needle` in
/// its message (kernel and session tests).
inline ::testing::AssertionResult failsWith(mwrt_status status,
                                            const std::string &needle) {
  std::string message = mwrt_last_error();
  if (status != MWRT_INVALID_ARGUMENT)
    return ::testing::AssertionFailure()
           << "status " << status << ", message '" << message << "'";
  if (message.find(needle) == std::string::npos)
    return ::testing::AssertionFailure()
           << "message '" << message << "' lacks '" << needle << "'";
  return ::testing::AssertionSuccess();
}

using mwplan::DType;
using mwplan::Role;

struct OperandSpec {
  mwplan::Space space = mwplan::Space::Arena;
  uint64_t arenaOffset = 0;
  int persistent = -1;
  int64_t offset = 0;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides; ///< empty: row-major, written out
  int buffer = -1;              ///< PlanBuilder::arenaBuffers index
};

inline std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

/// A row-major view at byte `offset` of the arena.
inline OperandSpec arena(uint64_t offset, std::vector<int64_t> shape,
                         DType dtype = DType::F32) {
  OperandSpec o;
  o.arenaOffset = offset;
  o.dtype = dtype;
  o.strides = rowMajorStrides(shape);
  o.shape = std::move(shape);
  return o;
}

/// All of persistent `index` (row-major `shape`).
inline OperandSpec persistent(int index, std::vector<int64_t> shape,
                              DType dtype = DType::F32) {
  OperandSpec o;
  o.space = mwplan::Space::Persistent;
  o.persistent = index;
  o.dtype = dtype;
  o.strides = rowMajorStrides(shape);
  o.shape = std::move(shape);
  return o;
}

struct AttrSpec {
  std::string name;
  mwplan::AttrKind kind = mwplan::AttrKind::Int;
  int64_t i = 0;
  double f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

inline AttrSpec stringAttr(std::string name, std::string v) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = mwplan::AttrKind::String;
  a.s = std::move(v);
  return a;
}

inline AttrSpec intAttr(std::string name, int64_t v) {
  AttrSpec a;
  a.name = std::move(name);
  a.i = v;
  return a;
}
inline AttrSpec boolAttr(std::string name, bool v) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = mwplan::AttrKind::Bool;
  a.i = v;
  return a;
}
inline AttrSpec floatAttr(std::string name, double v) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = mwplan::AttrKind::Float;
  a.f = v;
  return a;
}
inline AttrSpec intsAttr(std::string name, std::vector<int64_t> v) {
  AttrSpec a;
  a.name = std::move(name);
  a.kind = mwplan::AttrKind::Ints;
  a.ints = std::move(v);
  return a;
}

/// One instruction of a fused kernel's program: operands as (instruction,
/// index) with instruction -1 for a kernel input.
struct InstructionSpec {
  std::string op;
  std::vector<std::pair<int, int>> operands;
  std::vector<DType> dtypes;
  std::vector<std::vector<int64_t>> shapes;
  std::vector<AttrSpec> attrs;
};

struct KernelSpec {
  std::string op;
  std::vector<OperandSpec> ins, outs;
  std::vector<AttrSpec> attrs;
  std::string loc;
  /// A fused kernel (op "mw.fusion"): its program.
  std::vector<InstructionSpec> program;
  std::vector<std::pair<int, int>> yields;
  uint32_t programVersion = kFusedProgramVersion;
};

struct PersistentSpec {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  Role role = Role::None;
  int argument = -1;
  mwplan::Placement placement = mwplan::Placement::Device;
};

struct ResultSpec {
  std::string name;
  Role role = Role::None;
  OperandSpec value;
};

/// A plan as plain data; finish() serializes it.
struct PlanBuilder {
  uint32_t version = kMwPlanVersion;
  std::string function = "step";
  uint64_t arenaSize = 0;
  uint64_t arenaAlignment = 64;
  uint64_t lowerBound = 0;
  uint64_t peakBudget = 0;
  uint32_t ranks = 1;
  /// The arena's buffers (offset, size); operands name them by index.
  std::vector<std::pair<uint64_t, uint64_t>> arenaBuffers;
  std::vector<PersistentSpec> persistents;
  std::vector<KernelSpec> kernels;
  std::vector<ResultSpec> results;
  /// --mw-offload's settings (Plan.offload_path, Plan.offload_prefetch).
  std::string offloadPath;
  uint32_t offloadPrefetch = 0;

  int addPersistent(std::string name, DType dtype, std::vector<int64_t> shape,
                    Role role, int argument = -1) {
    persistents.push_back(
        {std::move(name), dtype, std::move(shape), role, argument,
         mwplan::Placement::Device});
    return static_cast<int>(persistents.size()) - 1;
  }
  KernelSpec &addKernel(std::string op, std::vector<OperandSpec> ins,
                        std::vector<OperandSpec> outs,
                        std::vector<AttrSpec> attrs = {},
                        std::string loc = "") {
    kernels.push_back({std::move(op), std::move(ins), std::move(outs),
                       std::move(attrs), std::move(loc)});
    return kernels.back();
  }
  void addResult(std::string name, Role role, OperandSpec value) {
    results.push_back({std::move(name), role, std::move(value)});
  }

  std::vector<uint8_t> finish() const {
    flatbuffers::FlatBufferBuilder b;
    auto operand = [&](const OperandSpec &o) {
      return mwplan::CreateOperandDirect(b, o.space, o.arenaOffset,
                                         o.persistent, o.offset, o.dtype,
                                         &o.shape, &o.strides, o.buffer);
    };
    std::vector<flatbuffers::Offset<mwplan::ArenaBuffer>> bufs;
    for (auto [offset, size] : arenaBuffers)
      bufs.push_back(mwplan::CreateArenaBuffer(b, offset, size));
    std::vector<flatbuffers::Offset<mwplan::Persistent>> ps;
    for (const PersistentSpec &p : persistents)
      ps.push_back(mwplan::CreatePersistentDirect(
          b, p.name.c_str(), p.dtype, &p.shape, p.role, p.argument, nullptr,
          false, p.placement));
    std::vector<flatbuffers::Offset<mwplan::Kernel>> ks;
    auto attrList = [&](const std::vector<AttrSpec> &list) {
      std::vector<flatbuffers::Offset<mwplan::Attr>> attrs;
      for (const AttrSpec &a : list)
        attrs.push_back(mwplan::CreateAttrDirect(
            b, a.name.c_str(), a.kind, a.i, a.f,
            a.s.empty() ? nullptr : a.s.c_str(), nullptr,
            a.ints.empty() ? nullptr : &a.ints,
            a.floats.empty() ? nullptr : &a.floats));
      return attrs;
    };
    auto refs = [](const std::vector<std::pair<int, int>> &list) {
      std::vector<mwplan::ValueRef> out;
      for (auto [i, r] : list)
        out.emplace_back(i, r);
      return out;
    };
    for (const KernelSpec &k : kernels) {
      std::vector<flatbuffers::Offset<mwplan::Attr>> attrs = attrList(k.attrs);
      flatbuffers::Offset<mwplan::FusedProgram> program = 0;
      if (!k.program.empty()) {
        std::vector<flatbuffers::Offset<mwplan::Instruction>> list;
        for (const InstructionSpec &in : k.program) {
          std::vector<flatbuffers::Offset<mwplan::Shape>> shapes;
          for (const auto &s : in.shapes)
            shapes.push_back(mwplan::CreateShapeDirect(b, &s));
          std::vector<mwplan::DType> dtypes;
          for (DType t : in.dtypes)
            dtypes.push_back(static_cast<mwplan::DType>(t));
          auto operands = refs(in.operands);
          auto instAttrs = attrList(in.attrs);
          list.push_back(mwplan::CreateInstructionDirect(
              b, in.op.c_str(), &instAttrs, &operands, &dtypes, &shapes));
        }
        auto yields = refs(k.yields);
        program = mwplan::CreateFusedProgramDirect(b, k.programVersion, &list,
                                                   &yields);
      }
      std::vector<flatbuffers::Offset<mwplan::Operand>> ins, outs;
      for (const OperandSpec &o : k.ins)
        ins.push_back(operand(o));
      for (const OperandSpec &o : k.outs)
        outs.push_back(operand(o));
      ks.push_back(mwplan::CreateKernelDirect(
          b, k.op.c_str(), &attrs, &ins, &outs,
          k.loc.empty() ? nullptr : k.loc.c_str(), program));
    }
    std::vector<flatbuffers::Offset<mwplan::Result>> rs;
    for (const ResultSpec &r : results)
      rs.push_back(mwplan::CreateResultDirect(b, r.name.c_str(), r.role,
                                              operand(r.value)));
    auto plan =
        mwplan::CreatePlanDirect(b, version, function.c_str(), arenaSize,
                                 arenaAlignment, lowerBound, &ps, &ks, &rs,
                                 peakBudget, ranks,
                                 arenaBuffers.empty() ? nullptr : &bufs,
                                 offloadPath.empty() ? nullptr
                                                     : offloadPath.c_str(),
                                 offloadPrefetch);
    mwplan::FinishPlanBuffer(b, plan);
    return std::vector<uint8_t>(b.GetBufferPointer(),
                                b.GetBufferPointer() + b.GetSize());
  }
};

/// y = relu(x @ fc.weight) + fc.bias, loss = sum(y): x [2, 3], y [2, 2] in
/// the arena (h at byte 0, computed in place by relu; y at byte 64), the loss
/// in a persistent the runtime allocates.
inline PlanBuilder denseReluPlan() {
  PlanBuilder p;
  p.function = "dense";
  p.arenaSize = 128;
  p.lowerBound = 32;
  int x = p.addPersistent("x", DType::F32, {2, 3}, Role::Input, 0);
  int w = p.addPersistent("fc.weight", DType::F32, {3, 2}, Role::Param, 1);
  int b = p.addPersistent("fc.bias", DType::F32, {2}, Role::Param, 2);
  int loss = p.addPersistent("loss", DType::F32, {}, Role::Output);
  p.addKernel("mw.matmul", {persistent(x, {2, 3}), persistent(w, {3, 2})},
              {arena(0, {2, 2})}, {}, "dense.py:1");
  p.addKernel("mw.relu", {arena(0, {2, 2})}, {arena(0, {2, 2})}, {},
              "dense.py:2");
  p.addKernel("mw.add", {arena(0, {2, 2}), persistent(b, {2})},
              {arena(64, {2, 2})}, {}, "dense.py:3");
  p.addKernel("mw.reduce_sum", {arena(64, {2, 2})}, {persistent(loss, {})},
              {intsAttr("axes", {0, 1})}, "dense.py:4");
  p.addResult("y", Role::Output, arena(64, {2, 2}));
  p.addResult("loss", Role::Output, persistent(loss, {}));
  return p;
}

/// A training step as --mw-autodiff builds one, for loss = sum(w * w):
/// grad = w + w, t = optimizer.step + 1, then an in-place mw.adamw (lr 0.1,
/// weight decay 0.01) over w and its moments; results name the updated
/// values, so w and its moments are updated in place and optimizer.step is
/// copied back from the arena.
inline PlanBuilder adamPlan() {
  PlanBuilder p;
  p.function = "train_step";
  p.arenaSize = 192;
  int w = p.addPersistent("w", DType::F32, {3}, Role::Param, 0);
  int m =
      p.addPersistent("w.exp_avg", DType::F32, {3}, Role::OptimizerState, 1);
  int v =
      p.addPersistent("w.exp_avg_sq", DType::F32, {3}, Role::OptimizerState, 2);
  int step = p.addPersistent("optimizer.step", DType::I64, {},
                             Role::OptimizerState, 3);
  int loss = p.addPersistent("loss", DType::F32, {}, Role::Output);
  p.addKernel("mw.mul", {persistent(w, {3}), persistent(w, {3})},
              {arena(0, {3})});
  p.addKernel("mw.reduce_sum", {arena(0, {3})}, {persistent(loss, {})},
              {intsAttr("axes", {0})});
  p.addKernel("mw.add", {persistent(w, {3}), persistent(w, {3})},
              {arena(64, {3})});
  p.addKernel("mw.splat", {}, {arena(128, {}, DType::I64)},
              {intAttr("value", 1)});
  p.addKernel("mw.add",
              {persistent(step, {}, DType::I64), arena(128, {}, DType::I64)},
              {arena(136, {}, DType::I64)});
  p.addKernel("mw.adamw",
              {persistent(w, {3}), arena(64, {3}), persistent(m, {3}),
               persistent(v, {3}), arena(136, {}, DType::I64)},
              {persistent(w, {3}), persistent(m, {3}), persistent(v, {3})},
              {floatAttr("lr", 0.1), floatAttr("weight_decay", 0.01)},
              "train.py:9");
  p.addResult("loss", Role::Output, persistent(loss, {}));
  p.addResult("w", Role::Param, persistent(w, {3}));
  p.addResult("w.exp_avg", Role::OptimizerState, persistent(m, {3}));
  p.addResult("w.exp_avg_sq", Role::OptimizerState, persistent(v, {3}));
  p.addResult("optimizer.step", Role::OptimizerState,
              arena(136, {}, DType::I64));
  return p;
}

/// loss = sum(w * w) + sum(u * u), then two consecutive mw.adamw updates
/// with the same hyperparameters and step: the CUDA backend launches them as
/// one multi-tensor kernel.
inline PlanBuilder twoAdamPlan() {
  PlanBuilder p;
  p.function = "train_step";
  p.arenaSize = 640;
  int w = p.addPersistent("w", DType::F32, {3}, Role::Param, 0);
  int wm = p.addPersistent("w.exp_avg", DType::F32, {3}, Role::OptimizerState, 1);
  int wv =
      p.addPersistent("w.exp_avg_sq", DType::F32, {3}, Role::OptimizerState, 2);
  int u = p.addPersistent("u", DType::F32, {2, 4}, Role::Param, 3);
  int um =
      p.addPersistent("u.exp_avg", DType::F32, {2, 4}, Role::OptimizerState, 4);
  int uv = p.addPersistent("u.exp_avg_sq", DType::F32, {2, 4},
                           Role::OptimizerState, 5);
  int step = p.addPersistent("optimizer.step", DType::I64, {},
                             Role::OptimizerState, 6);
  int loss = p.addPersistent("loss", DType::F32, {}, Role::Output);
  p.addKernel("mw.mul", {persistent(w, {3}), persistent(w, {3})},
              {arena(0, {3})});
  p.addKernel("mw.reduce_sum", {arena(0, {3})}, {arena(192, {})},
              {intsAttr("axes", {0})});
  p.addKernel("mw.mul", {persistent(u, {2, 4}), persistent(u, {2, 4})},
              {arena(256, {2, 4})});
  p.addKernel("mw.reduce_sum", {arena(256, {2, 4})}, {arena(320, {})},
              {intsAttr("axes", {0, 1})});
  p.addKernel("mw.add", {arena(192, {}), arena(320, {})},
              {persistent(loss, {})});
  p.addKernel("mw.add", {persistent(w, {3}), persistent(w, {3})},
              {arena(384, {3})});
  p.addKernel("mw.add", {persistent(u, {2, 4}), persistent(u, {2, 4})},
              {arena(448, {2, 4})});
  p.addKernel("mw.splat", {}, {arena(512, {}, DType::I64)},
              {intAttr("value", 1)});
  p.addKernel("mw.add",
              {persistent(step, {}, DType::I64), arena(512, {}, DType::I64)},
              {arena(576, {}, DType::I64)});
  p.addKernel("mw.adamw",
              {persistent(w, {3}), arena(384, {3}), persistent(wm, {3}),
               persistent(wv, {3}), arena(576, {}, DType::I64)},
              {persistent(w, {3}), persistent(wm, {3}), persistent(wv, {3})},
              {floatAttr("lr", 0.1), floatAttr("weight_decay", 0.01)});
  p.addKernel("mw.adamw",
              {persistent(u, {2, 4}), arena(448, {2, 4}), persistent(um, {2, 4}),
               persistent(uv, {2, 4}), arena(576, {}, DType::I64)},
              {persistent(u, {2, 4}), persistent(um, {2, 4}),
               persistent(uv, {2, 4})},
              {floatAttr("lr", 0.1), floatAttr("weight_decay", 0.01)});
  p.addResult("loss", Role::Output, persistent(loss, {}));
  p.addResult("w", Role::Param, persistent(w, {3}));
  p.addResult("w.exp_avg", Role::OptimizerState, persistent(wm, {3}));
  p.addResult("w.exp_avg_sq", Role::OptimizerState, persistent(wv, {3}));
  p.addResult("u", Role::Param, persistent(u, {2, 4}));
  p.addResult("u.exp_avg", Role::OptimizerState, persistent(um, {2, 4}));
  p.addResult("u.exp_avg_sq", Role::OptimizerState, persistent(uv, {2, 4}));
  p.addResult("optimizer.step", Role::OptimizerState,
              arena(576, {}, DType::I64));
  return p;
}

/// loss = sum(log(p)), then p -= 2 * 1 by mw.sgd. p is "scale.weight", a
/// rank-1 weight the default initialization sets to 1, so the first loss is
/// 0 and the second NaN (p = -1).
inline PlanBuilder nanLossPlan() {
  PlanBuilder p;
  p.arenaSize = 128;
  int param = p.addPersistent("scale.weight", DType::F32, {2}, Role::Param, 0);
  int loss = p.addPersistent("loss", DType::F32, {}, Role::Output);
  p.addKernel("mw.log", {persistent(param, {2})}, {arena(0, {2})});
  p.addKernel("mw.reduce_sum", {arena(0, {2})}, {persistent(loss, {})},
              {intsAttr("axes", {0})});
  p.addKernel("mw.splat", {}, {arena(64, {2})}, {floatAttr("value", 1.0)});
  p.addKernel("mw.sgd", {persistent(param, {2}), arena(64, {2})},
              {persistent(param, {2})}, {floatAttr("lr", 2.0)});
  p.addResult("loss", Role::Output, persistent(loss, {}));
  p.addResult("scale.weight", Role::Param, persistent(param, {2}));
  return p;
}

/// A fresh path under the test temporary directory, private to this
/// process: ctest runs mwrt-unittests and its sanitized build (and other
/// checkouts run theirs) at the same time, under the same TempDir.
inline std::string tempPath(const std::string &name) {
  const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string path =
      ::testing::TempDir() + "mwrt-" + std::to_string(::getpid()) + "-" +
      (info ? std::string(info->test_suite_name()) + "-" + info->name() + "-"
            : std::string()) +
      name;
  std::remove(path.c_str());
  return path;
}

inline void writeFile(const std::string &path, const std::vector<uint8_t> &b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char *>(b.data()),
            static_cast<std::streamsize>(b.size()));
}

/// `plan` (PlanBuilder::finish()) as mw-translate writes it to a file: with
/// the checksum trailer of mwrt/plan.h.
inline std::vector<uint8_t> withTrailer(std::vector<uint8_t> plan) {
  uint8_t trailer[kPlanTrailerSize];
  planTrailer(plan.data(), plan.size(), trailer);
  plan.insert(plan.end(), trailer, trailer + kPlanTrailerSize);
  return plan;
}

/// Writes `plan` to `path` as a .mwplan file (with its trailer).
inline void writePlanFile(const std::string &path,
                          const std::vector<uint8_t> &plan) {
  writeFile(path, withTrailer(plan));
}

inline std::string readFileText(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

} // namespace mwrt::test

#endif // MWRT_TEST_PLANTESTHELPERS_H
