//===- PlanLoadTest.cpp - Reading and rejecting .mwplan files -------------===//
//
// Plans built by hand with flatbuffers' builder: a valid one decodes field
// by field; each kind of damage (truncation, identifier, version, an arena
// or persistent view out of bounds, an unknown op or dtype, inconsistent
// strides, clashing names) is rejected at load with a message naming the
// kernel, op and operand.
//
//===----------------------------------------------------------------------===//

#include "PlanTestHelpers.h"

#include "mwrt/mwrt.h"
#include "mwrt/runtime.h"

#include <gtest/gtest.h>

#include <cstring>

namespace mwrt::test {

namespace {

/// Loads `bytes`; returns the status and leaves the message in `error`.
mwrt_status parse(const std::vector<uint8_t> &bytes, std::string &error,
                  std::shared_ptr<const Plan> *out = nullptr) {
  std::shared_ptr<const Plan> plan;
  mwrt_status st = Plan::parse(bytes.data(), bytes.size(), plan, "t.mwplan");
  error = st == MWRT_OK ? "" : mwrt_last_error();
  if (out)
    *out = plan;
  return st;
}

std::string rejection(const PlanBuilder &b) {
  std::string error;
  EXPECT_EQ(parse(b.finish(), error), MWRT_INVALID_ARGUMENT);
  return error;
}

} // namespace

TEST(PlanLoad, DecodesEveryField) {
  std::string error;
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(parse(denseReluPlan().finish(), error, &plan), MWRT_OK) << error;
  EXPECT_EQ(plan->function(), "dense");
  EXPECT_EQ(plan->arenaSize(), 128u);
  EXPECT_EQ(plan->arenaAlignment(), 64u);
  EXPECT_EQ(plan->lowerBound(), 32u);
  ASSERT_EQ(plan->persistents().size(), 4u);
  const PersistentDesc &w = plan->persistents()[1];
  EXPECT_EQ(w.name, "fc.weight");
  EXPECT_EQ(w.dtype, mwrt::DType::F32);
  EXPECT_EQ(w.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(w.role, mwrt::Role::Param);
  EXPECT_EQ(w.argument, 1);
  EXPECT_EQ(w.bytes, 24u);
  EXPECT_EQ(plan->persistents()[3].argument, -1);
  ASSERT_EQ(plan->kernels().size(), 4u);
  const KernelDesc &add = plan->kernels()[2];
  EXPECT_EQ(add.kind, OpKind::Add);
  EXPECT_EQ(add.loc, "dense.py:3");
  ASSERT_EQ(add.ins.size(), 2u);
  EXPECT_TRUE(add.ins[0].inArena);
  EXPECT_FALSE(add.ins[1].inArena);
  EXPECT_EQ(add.ins[1].persistent, 2);
  EXPECT_EQ(add.outs[0].arenaOffset, 64u);
  EXPECT_EQ(add.outs[0].strides, (std::vector<int64_t>{2, 1}));
  const AttrValue *axes = plan->kernels()[3].attrs.find("axes");
  ASSERT_TRUE(axes);
  EXPECT_EQ(std::get<std::vector<int64_t>>(*axes),
            (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(plan->results().size(), 2u);
  EXPECT_EQ(plan->lossResult(), 1);
  EXPECT_EQ(plan->describeKernel(0), "kernel 0 ('mw.matmul' at dense.py:1)");
}

/// denseReluPlan with fc.weight offloaded to `placement`: fetched into the
/// arena at byte 96 and waited for there, the matmul reading the slot.
PlanBuilder offloadedDensePlan(mwplan::Placement placement) {
  PlanBuilder b = denseReluPlan();
  b.arenaSize = 128;
  b.offloadPath = placement == mwplan::Placement::File ? "/tmp/w" : "";
  b.offloadPrefetch = 1;
  b.persistents[1].placement = placement;
  KernelSpec fetch{"mw.fetch", {persistent(1, {3, 2})}, {arena(96, {3, 2})},
                   {intAttr("layer", 0)}, "dense.py:0"};
  KernelSpec wait{"mw.wait", {arena(96, {3, 2})}, {arena(96, {3, 2})}, {},
                  "dense.py:0"};
  b.kernels[0].ins[1] = arena(96, {3, 2});
  b.kernels.insert(b.kernels.begin(), {fetch, wait});
  return b;
}

TEST(PlanLoad, DecodesOffloadedWeights) {
  std::string error;
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(parse(offloadedDensePlan(mwplan::Placement::File).finish(), error,
                  &plan),
            MWRT_OK)
      << error;
  EXPECT_EQ(plan->persistents()[1].placement, mwrt::Placement::File);
  EXPECT_EQ(plan->persistents()[0].placement, mwrt::Placement::Device);
  EXPECT_EQ(plan->offloadPath(), "/tmp/w");
  EXPECT_EQ(plan->offloadPrefetch(), 1u);
  EXPECT_EQ(plan->kernels()[0].kind, OpKind::Fetch);
  ASSERT_EQ(parse(offloadedDensePlan(mwplan::Placement::Host).finish(), error,
                  &plan),
            MWRT_OK)
      << error;
  EXPECT_EQ(plan->persistents()[1].placement, mwrt::Placement::Host);
  EXPECT_EQ(plan->offloadPath(), "");
  // A plan without offload.
  ASSERT_EQ(parse(denseReluPlan().finish(), error, &plan), MWRT_OK) << error;
  EXPECT_EQ(plan->offloadPrefetch(), 0u);
  EXPECT_EQ(plan->persistents()[1].placement, mwrt::Placement::Device);
}

TEST(PlanLoad, OnlyAFetchReadsAnOffloadedWeight) {
  PlanBuilder b = offloadedDensePlan(mwplan::Placement::Host);
  b.kernels[2].ins[1] = persistent(1, {3, 2}); // the matmul reads the host
  EXPECT_CONTAINS(rejection(b),
                  "t.mwplan: kernel 2 ('mw.matmul' at dense.py:1): reads "
                  "'fc.weight', which is offloaded (Host): only an mw.fetch "
                  "may read it");
  // A fetch of a device tensor.
  b = offloadedDensePlan(mwplan::Placement::Host);
  b.kernels[0].ins[0] = persistent(0, {2, 3});
  b.kernels[0].outs[0] = arena(96, {2, 3});
  EXPECT_CONTAINS(rejection(b),
                  "kernel 0 ('mw.fetch' at dense.py:0): an mw.fetch whose "
                  "input is not an offloaded (Host or File) persistent");
  // Only parameters are offloaded.
  b = offloadedDensePlan(mwplan::Placement::Host);
  b.persistents[0].placement = mwplan::Placement::File;
  EXPECT_CONTAINS(rejection(b),
                  "persistent 0 ('x'): is offloaded (placement File) but is "
                  "not a parameter argument");
}

TEST(PlanLoad, MissingStridesMeanRowMajor) {
  PlanBuilder b = denseReluPlan();
  b.kernels[0].outs[0].strides.clear();
  std::string error;
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(parse(b.finish(), error, &plan), MWRT_OK) << error;
  EXPECT_EQ(plan->kernels()[0].outs[0].strides, (std::vector<int64_t>{2, 1}));
}

TEST(PlanLoad, LossIsTheScalarOutputWhenNoneIsNamedLoss) {
  PlanBuilder b = denseReluPlan();
  b.results[1].name = "objective";
  std::string error;
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(parse(b.finish(), error, &plan), MWRT_OK) << error;
  EXPECT_EQ(plan->lossResult(), 1); // "y" is an output but not a scalar
  b.results[1].role = Role::None;
  ASSERT_EQ(parse(b.finish(), error, &plan), MWRT_OK) << error;
  EXPECT_EQ(plan->lossResult(), -1);
}

TEST(PlanLoad, RejectsWrongVersion) {
  PlanBuilder b = denseReluPlan();
  b.version = 1; // before the checksum trailer
  EXPECT_EQ(rejection(b), "t.mwplan: plan version 1, this runtime reads 3");
}

TEST(PlanLoad, RejectsTruncatedFile) {
  std::vector<uint8_t> bytes = denseReluPlan().finish();
  std::string error;
  std::vector<uint8_t> half(bytes.begin(), bytes.begin() + bytes.size() / 2);
  EXPECT_EQ(parse(half, error), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error, "t.mwplan: corrupt or truncated plan");
  std::vector<uint8_t> tiny(bytes.begin(), bytes.begin() + 5);
  EXPECT_EQ(parse(tiny, error), MWRT_INVALID_ARGUMENT);
  EXPECT_EQ(error, "t.mwplan: truncated: 5 bytes, not a .mwplan file");
  EXPECT_EQ(parse({}, error), MWRT_INVALID_ARGUMENT);
}

TEST(PlanLoad, RejectsWrongIdentifier) {
  std::vector<uint8_t> bytes = denseReluPlan().finish();
  bytes[4] = 'X';
  bytes[5] = 'Y';
  bytes[6] = 0x01;
  std::string error;
  EXPECT_EQ(parse(bytes, error), MWRT_INVALID_ARGUMENT);
  EXPECT_EQ(error, "t.mwplan: not a .mwplan file (identifier 'XY\\x01L', "
                   "expected 'MWPL')");
}

TEST(PlanLoad, RejectsGarbageWithTheIdentifier) {
  std::vector<uint8_t> bytes(256);
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  bytes[0] = 0xf0; // a root offset far outside the buffer
  bytes[1] = 0xff;
  std::memcpy(bytes.data() + 4, "MWPL", 4);
  std::string error;
  EXPECT_EQ(parse(bytes, error), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(error, "corrupt or truncated plan");
}

TEST(PlanLoad, EveryTruncationIsRejectedCleanly) {
  // Whatever the cut, loading reports an error and never reads past it;
  // only the builder's final alignment padding may go unnoticed.
  std::vector<uint8_t> bytes = adamPlan().finish();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    std::string error;
    std::shared_ptr<const Plan> plan;
    if (parse(cut, error, &plan) == MWRT_OK) {
      EXPECT_GE(n + 8, bytes.size()) << n;
      EXPECT_EQ(plan->kernels().size(), 6u);
    }
  }
}

TEST(PlanLoad, RejectsArenaOffsetOutOfRange) {
  PlanBuilder b = denseReluPlan();
  b.kernels[0].outs[0].arenaOffset = 1000;
  EXPECT_EQ(rejection(b),
            "t.mwplan: kernel 0 ('mw.matmul' at dense.py:1): result #0: "
            "arena view at offset 1000 covers bytes [1000, 1016), outside "
            "the arena of 128 bytes");
  // One byte too far.
  b = denseReluPlan();
  b.kernels[2].outs[0].arenaOffset = 116;
  EXPECT_CONTAINS(rejection(b), "kernel 2 ('mw.add' at dense.py:3): "
                                "result #0: arena view at offset 116 "
                                "covers bytes [116, 132)");
}

TEST(PlanLoad, RejectsStridedViewLeavingTheArena) {
  PlanBuilder b = denseReluPlan();
  b.kernels[1].ins[0].strides = {100, 1};
  EXPECT_CONTAINS(rejection(b),
                  "kernel 1 ('mw.relu' at dense.py:2): operand #0: "
                  "arena view at offset 0 covers bytes [0, 408)");
  b = denseReluPlan();
  b.kernels[1].ins[0].offset = -1;
  EXPECT_CONTAINS(rejection(b), "covers bytes [-4, 12)");
  // Negative strides are fine when every element stays inside.
  b = denseReluPlan();
  b.kernels[1].ins[0].strides = {-2, 1};
  b.kernels[1].ins[0].offset = 2;
  b.kernels[1].outs[0].arenaOffset = 16;
  std::string error;
  EXPECT_EQ(parse(b.finish(), error), MWRT_OK) << error;
}

TEST(PlanLoad, RejectsMisalignedArenaOffset) {
  PlanBuilder b = denseReluPlan();
  b.kernels[0].outs[0].arenaOffset = 2;
  EXPECT_CONTAINS(rejection(b),
                  "result #0: arena offset 2 is not a multiple of the "
                  "element size 4");
}

TEST(PlanLoad, RejectsPersistentIndexOutOfRange) {
  PlanBuilder b = denseReluPlan();
  b.kernels[0].ins[1].persistent = 9;
  EXPECT_EQ(rejection(b),
            "t.mwplan: kernel 0 ('mw.matmul' at dense.py:1): operand #1: "
            "persistent index 9 out of range (the plan has 4 persistents)");
  b = denseReluPlan();
  b.results[1].value.persistent = -1;
  EXPECT_CONTAINS(rejection(b), "result 1 ('loss'): persistent index "
                                "-1 out of range");
}

TEST(PlanLoad, RejectsViewOutsideItsPersistent) {
  PlanBuilder b = denseReluPlan();
  b.kernels[0].ins[0].offset = 1;
  EXPECT_EQ(rejection(b),
            "t.mwplan: kernel 0 ('mw.matmul' at dense.py:1): operand #0: "
            "view covers elements [1, 6] of persistent 'x', which has 6");
}

TEST(PlanLoad, RejectsPersistentViewOfAnotherDtype) {
  PlanBuilder b = denseReluPlan();
  b.kernels[0].ins[0].dtype = DType::I32;
  EXPECT_CONTAINS(rejection(b), "operand #0: has dtype I32 but "
                                "persistent 'x' is F32");
}

TEST(PlanLoad, RejectsUnknownOp) {
  PlanBuilder b = denseReluPlan();
  b.kernels[1].op = "mw.frobnicate";
  EXPECT_EQ(rejection(b),
            "t.mwplan: kernel 1: unknown op 'mw.frobnicate' at dense.py:2");
}

TEST(PlanLoad, RejectsUnknownEnums) {
  PlanBuilder b = denseReluPlan();
  b.kernels[3].outs[0].dtype = static_cast<DType>(9);
  EXPECT_CONTAINS(rejection(b), "kernel 3 ('mw.reduce_sum' at "
                                "dense.py:4): result #0: unknown "
                                "dtype 9");
  b = denseReluPlan();
  b.persistents[0].dtype = static_cast<DType>(-3);
  EXPECT_EQ(rejection(b), "t.mwplan: persistent 0 ('x'): unknown dtype -3");
  b = denseReluPlan();
  b.persistents[0].role = static_cast<Role>(42);
  EXPECT_EQ(rejection(b), "t.mwplan: persistent 0 ('x'): unknown role 42");
  b = denseReluPlan();
  b.kernels[0].ins[0].space = static_cast<mwplan::Space>(7);
  EXPECT_CONTAINS(rejection(b), "operand #0: unknown space 7");
  b = denseReluPlan();
  b.kernels[3].attrs[0].kind = static_cast<mwplan::AttrKind>(12);
  EXPECT_CONTAINS(rejection(b), "attribute 'axes' has unknown kind 12");
}

TEST(PlanLoad, RejectsInconsistentShapes) {
  PlanBuilder b = denseReluPlan();
  b.kernels[2].ins[0].strides = {2, 1, 1};
  EXPECT_CONTAINS(rejection(b), "kernel 2 ('mw.add' at dense.py:3): "
                                "operand #0: has 3 strides for shape "
                                "[2, 2]");
  b = denseReluPlan();
  b.kernels[2].ins[0].shape = {2, -2};
  EXPECT_CONTAINS(rejection(b), "shape [2, -2] has a negative");
  b = denseReluPlan();
  b.persistents[1].shape = {int64_t(1) << 40, int64_t(1) << 30};
  EXPECT_CONTAINS(rejection(b), "persistent 1 ('fc.weight'): shape "
                                "[1099511627776, 1073741824] is too "
                                "large");
}

TEST(PlanLoad, RejectsPersistentsTooLargeTogether) {
  PlanBuilder b;
  for (int i = 0; i < 100; ++i)
    b.addPersistent("p" + std::to_string(i), DType::F32, {int64_t(1) << 48},
                    Role::Param, i);
  EXPECT_EQ(rejection(b), "t.mwplan: persistent 64 ('p64'): the persistents "
                          "up to this one take more than 2^56 bytes");
}

TEST(PlanLoad, RejectsDuplicateNames) {
  PlanBuilder b = denseReluPlan();
  b.persistents[2].name = "fc.weight";
  EXPECT_CONTAINS(rejection(b), "persistent 2 ('fc.weight'): the name "
                                "is also persistent 1's");
  b = denseReluPlan();
  b.results[0].name = "loss";
  EXPECT_CONTAINS(rejection(b), "result 1 ('loss'): another result "
                                "has the same name");
  b = denseReluPlan();
  b.kernels[3].attrs.push_back(intsAttr("axes", {0}));
  EXPECT_CONTAINS(rejection(b), "attribute 'axes' appears twice");
}

TEST(PlanLoad, NamesMustBePrintableUtf8) {
  PlanBuilder b = denseReluPlan();
  b.persistents[2].name = "fc.\xff";
  EXPECT_EQ(rejection(b), "t.mwplan: persistent 2 has a name that is not "
                          "printable UTF-8: 'fc.\\xff'");
  b = denseReluPlan();
  b.results[0].name = "y\n";
  EXPECT_CONTAINS(rejection(b), "result 0 has a name that is not printable "
                                "UTF-8: 'y\\x0a'");
  // Unknown ops and locations are shown escaped, UTF-8 kept.
  b = denseReluPlan();
  b.kernels[1].op = "mw.\x01";
  b.kernels[1].loc = "caf\xc3\xa9.py:\x80";
  EXPECT_EQ(rejection(b), "t.mwplan: kernel 1: unknown op 'mw.\\x01' at "
                          "caf\xc3\xa9.py:\\x80");
}

TEST(PlanLoad, ParsesAMisalignedBuffer) {
  std::vector<uint8_t> bytes = denseReluPlan().finish();
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(Plan::parse(shifted.data() + 1, bytes.size(), plan), MWRT_OK)
      << mwrt_last_error();
  EXPECT_EQ(plan->persistents()[1].shape, (std::vector<int64_t>{3, 2}));
}

TEST(PlanLoad, RejectsResultThatDoesNotFitItsParam) {
  PlanBuilder b = adamPlan();
  b.results[1].value = arena(0, {2});
  EXPECT_CONTAINS(rejection(b),
                  "result 1 ('w'): its value is F32 [2] but it updates "
                  "persistent 'w', which is F32 [3]");
}

TEST(PlanLoad, RejectsBadArenaAlignment) {
  PlanBuilder b = denseReluPlan();
  b.arenaAlignment = 48;
  EXPECT_CONTAINS(rejection(b), "arena_alignment 48 is not a power of "
                                "two");
}

TEST(PlanLoad, PeakBudget) {
  PlanBuilder b = denseReluPlan();
  std::shared_ptr<const Plan> plan;
  std::string error;
  ASSERT_EQ(parse(b.finish(), error, &plan), MWRT_OK) << error;
  EXPECT_EQ(plan->peakBudget(), 0u);
  uint64_t peak = plan->arenaSize();
  for (const PersistentDesc &d : plan->persistents())
    peak += d.bytes;
  b.peakBudget = peak;
  ASSERT_EQ(parse(b.finish(), error, &plan), MWRT_OK) << error;
  EXPECT_EQ(plan->peakBudget(), peak);
  b.peakBudget = peak - 1;
  EXPECT_CONTAINS(rejection(b), "the plan peaks at " + std::to_string(peak) +
                                    " bytes (arena ");
  EXPECT_CONTAINS(rejection(b),
                  "over its peak_budget " + std::to_string(peak - 1));
}

TEST(PlanLoad, FileErrors) {
  std::shared_ptr<const Plan> plan;
  std::string missing = tempPath("missing.mwplan");
  EXPECT_EQ(Plan::load(missing, plan), MWRT_NOT_FOUND);
  EXPECT_EQ(std::string(mwrt_last_error()),
            missing + ": cannot open: No such file or directory");

  std::string path = tempPath("dense.mwplan");
  writePlanFile(path, denseReluPlan().finish());
  ASSERT_EQ(Plan::load(path, plan), MWRT_OK) << mwrt_last_error();
  EXPECT_EQ(plan->source(), path);

  PlanBuilder b = denseReluPlan();
  b.version = 7;
  writePlanFile(path, b.finish());
  EXPECT_EQ(Plan::load(path, plan), MWRT_INVALID_ARGUMENT);
  EXPECT_EQ(std::string(mwrt_last_error()),
            path + ": plan version 7, this runtime reads 3");
}

TEST(PlanLoad, ResultsThatUpdateStateAreConsistent) {
  // The next value of fc.weight, under the name and role of a parameter.
  PlanBuilder ok = denseReluPlan();
  ok.addResult("fc.weight", Role::Param, arena(0, {3, 2}));
  std::string error;
  EXPECT_EQ(parse(ok.finish(), error), MWRT_OK) << error;

  // Renamed (a corrupted name): it would update nothing.
  PlanBuilder renamed = denseReluPlan();
  renamed.addResult("fc.weighs", Role::Param, arena(0, {3, 2}));
  EXPECT_EQ(rejection(renamed),
            "t.mwplan: result 2 ('fc.weighs') is the next value of a param, "
            "but no param argument is named 'fc.weighs': the update would be "
            "lost");

  // The right name with another role.
  PlanBuilder role = denseReluPlan();
  role.addResult("fc.weight", Role::OptimizerState, arena(0, {3, 2}));
  EXPECT_EQ(rejection(role), "t.mwplan: result 2 ('fc.weight'): it updates "
                             "param 'fc.weight' but its role is "
                             "optimizer_state");
}

TEST(PlanLoad, OptimizerUpdatesAreKept) {
  // Issue 20: an mw.adamw whose new parameter went to an arena range nothing
  // reads, or to a persistent that is no argument (a corrupted operand kind
  // or offset), trained on with the update silently dropped.
  std::string error;
  EXPECT_EQ(parse(adamPlan().finish(), error), MWRT_OK) << error;
  PlanBuilder toArena = adamPlan();
  toArena.arenaSize = 256;
  toArena.kernels.back().outs[0] = arena(192, {3});
  EXPECT_EQ(rejection(toArena),
            "t.mwplan: kernel 5 ('mw.adamw' at train.py:9): out 0 (a new "
            "parameter) goes to the arena at byte 192, which no later kernel "
            "reads and no result returns: the update would be lost");
  PlanBuilder toOutput = adamPlan();
  toOutput.kernels.back().outs[2] = persistent(4, {3});
  toOutput.persistents[4].shape = {3};
  EXPECT_CONTAINS(rejection(toOutput),
                  "out 2 (a new optimizer state) goes to persistent 'loss', "
                  "which holds no param or optimizer state");
  // Into the arena and returned under the parameter's name: kept.
  PlanBuilder returned = adamPlan();
  returned.arenaSize = 256;
  returned.kernels.back().outs[0] = arena(192, {3});
  returned.results[1].value = arena(192, {3});
  EXPECT_EQ(parse(returned.finish(), error), MWRT_OK) << error;
}

TEST(PlanLoad, ArenaBuffersAreCheckedIndependently) {
  // x -> exp -> a (buffer 0) -> neg -> b (buffer 1): a dies at kernel 1,
  // where b is born, so they may not share bytes; b lives to the end.
  auto plan = [](uint64_t bOffset) {
    PlanBuilder p;
    p.arenaSize = 64;
    int x = p.addPersistent("x", DType::F32, {4}, Role::Input, 0);
    p.arenaBuffers = {{0, 16}, {bOffset, 16}};
    OperandSpec a = arena(0, {4}), b = arena(bOffset, {4});
    a.buffer = 0;
    b.buffer = 1;
    p.addKernel("mw.exp", {persistent(x, {4})}, {a});
    p.addKernel("mw.neg", {a}, {b});
    p.addResult("y", Role::Output, b);
    return p;
  };
  std::string error;
  EXPECT_EQ(parse(plan(32).finish(), error), MWRT_OK) << error;
  // Overlapping while both live (a corrupted offset the arena bounds allow).
  EXPECT_EQ(rejection(plan(8)),
            "t.mwplan: arena buffers 0 at [0, 16) (kernels 0-1) and 1 at "
            "[8, 24) (kernels 1-2) share bytes while both are live");
  // A view reaching past its buffer.
  PlanBuilder past = plan(32);
  past.kernels[1].outs[0].arenaOffset = 40;
  EXPECT_CONTAINS(rejection(past), "outside its buffer 1 at [32, 48)");
  // A buffer index that does not exist.
  PlanBuilder missing = plan(32);
  missing.kernels[0].outs[0].buffer = 5;
  EXPECT_CONTAINS(rejection(missing), "arena buffer 5 of 2 does not exist");
}

TEST(PlanLoad, ChecksumCatchesEveryChangedByte) {
  // A file needs the trailer; any changed byte of the plan (here: each in
  // turn, including ones no field check would notice, like an AdamW
  // hyper-parameter or a stride) fails the checksum.
  std::shared_ptr<const Plan> plan;
  std::string path = tempPath("sum.mwplan");
  std::vector<uint8_t> bytes = denseReluPlan().finish();
  writeFile(path, bytes);
  EXPECT_EQ(Plan::load(path, plan), MWRT_INVALID_ARGUMENT);
  EXPECT_CONTAINS(mwrt_last_error(), "no checksum trailer");
  std::vector<uint8_t> file = withTrailer(bytes);
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::vector<uint8_t> bad = file;
    bad[i] ^= 0x20;
    writeFile(path, bad);
    ASSERT_EQ(Plan::load(path, plan), MWRT_INVALID_ARGUMENT) << "byte " << i;
    ASSERT_NE(std::string(mwrt_last_error()).find("checksum mismatch"), std::string::npos) << "byte " << i << ": " << mwrt_last_error();
  }
  writeFile(path, file);
  EXPECT_EQ(Plan::load(path, plan), MWRT_OK) << mwrt_last_error();
}

TEST(PlanLoad, CApi) {
  mwrt_plan *plan = nullptr;
  EXPECT_EQ(mwrt_plan_load(tempPath("none.mwplan").c_str(), &plan),
            MWRT_NOT_FOUND);
  EXPECT_EQ(plan, nullptr);
  EXPECT_EQ(mwrt_plan_load(nullptr, &plan), MWRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mwrt_last_error(), "path is null");
  std::vector<uint8_t> bytes = denseReluPlan().finish();
  ASSERT_EQ(mwrt_plan_load_memory(bytes.data(), bytes.size(), &plan), MWRT_OK)
      << mwrt_last_error();
  EXPECT_STREQ(mwrt_plan_function(plan), "dense");
  mwrt_plan_free(plan);
  bytes[4] = 'Z';
  plan = nullptr;
  EXPECT_EQ(mwrt_plan_load_memory(bytes.data(), bytes.size(), &plan),
            MWRT_INVALID_ARGUMENT);
  EXPECT_EQ(plan, nullptr);
  EXPECT_CONTAINS(std::string(mwrt_last_error()),
                  "<memory>: not a .mwplan file");
  mwrt_plan_free(nullptr);
}

} // namespace mwrt::test

//===----------------------------------------------------------------------===//
// Fused kernels: the loader's own checks of a program (docs/fusion.md)
//===----------------------------------------------------------------------===//

namespace mwrt::test {
namespace {

/// y = gelu(x + b) as one fused loop kernel: x [4, 8] and b [8] inputs, y
/// [4, 8] in a persistent the runtime allocates.
PlanBuilder fusedPlan() {
  PlanBuilder p;
  p.function = "fused";
  int x = p.addPersistent("x", DType::F32, {4, 8}, Role::Input, 0);
  int b = p.addPersistent("b", DType::F32, {8}, Role::Input, 1);
  int y = p.addPersistent("y", DType::F32, {4, 8}, Role::Output);
  KernelSpec &k = p.addKernel("mw.fusion", {persistent(x, {4, 8}), persistent(b, {8})},
                              {persistent(y, {4, 8})}, {}, "mlp.py:3");
  InstructionSpec add{"mw.add", {{-1, 0}, {-1, 1}}, {DType::F32}, {{4, 8}}, {}};
  InstructionSpec gelu{"mw.gelu", {{0, 0}}, {DType::F32}, {{4, 8}},
                       {stringAttr("approximate", "tanh")}};
  k.program = {add, gelu};
  k.yields = {{1, 0}};
  p.addResult("y", Role::Output, persistent(y, {4, 8}));
  return p;
}

} // namespace

TEST(PlanLoad, ReadsAFusedKernel) {
  std::string error;
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(parse(fusedPlan().finish(), error, &plan), MWRT_OK) << error;
  const KernelDesc &k = plan->kernels()[0];
  ASSERT_TRUE(k.program);
  EXPECT_EQ(k.program->kind, FusionKind::Loop);
  ASSERT_EQ(k.program->instructions.size(), 2u);
  EXPECT_EQ(k.program->instructions[1].kind, OpKind::Gelu);
  EXPECT_EQ(plan->describeKernel(0), "kernel 0 ('mw.fusion' at mlp.py:3)");
}

TEST(PlanLoad, RejectsBadFusedPrograms) {
  const std::string at = "t.mwplan: kernel 0 ('mw.fusion' at mlp.py:3): ";
  auto reject = [&](auto change) {
    PlanBuilder b = fusedPlan();
    change(b.kernels[0]);
    std::string error = rejection(b);
    EXPECT_EQ(error.rfind(at, 0), 0u) << error;
    return error.substr(std::min(error.size(), at.size()));
  };
  EXPECT_EQ(reject([](KernelSpec &k) { k.program[0].operands[1] = {-1, 5}; }),
            "instruction 0 ('mw.add'): operand #1 refers to kernel input 5 of 2");
  EXPECT_EQ(reject([](KernelSpec &k) { k.program[0].operands[0] = {1, 0}; }),
            "instruction 0 ('mw.add'): operand #0 refers to instruction 1, "
            "which does not come before it");
  EXPECT_EQ(reject([](KernelSpec &k) { k.program[1].operands[0] = {0, 2}; }),
            "instruction 1 ('mw.gelu'): operand #0 refers to result 2 of "
            "instruction 0, which has 1");
  EXPECT_EQ(reject([](KernelSpec &k) { k.program[0].shapes[0] = {4, 4}; }),
            "instruction 0 ('mw.add'): result shape [4, 4] should be [4, 8]");
  EXPECT_EQ(reject([](KernelSpec &k) { k.program[1].op = "mw.concat"; }),
            "instruction 1 ('mw.concat'): this op cannot be part of a fused "
            "kernel");
  EXPECT_EQ(reject([](KernelSpec &k) { k.program[1].op = "mw.frobnicate"; }),
            "instruction 1: unknown op 'mw.frobnicate'");
  EXPECT_EQ(reject([](KernelSpec &k) { k.program[0].dtypes[0] = DType::I32; }),
            "instruction 0 ('mw.add'): a fused kernel computes float values "
            "only, not i32");
  EXPECT_EQ(reject([](KernelSpec &k) { k.yields.push_back({0, 0}); }),
            "the program yields 2 values for a kernel with 1 outputs");
  EXPECT_EQ(reject([](KernelSpec &k) { k.programVersion = 9; }),
            "program version 9, this runtime reads 1");
  // No kind fits: a matmul that is not the first instruction.
  EXPECT_EQ(reject([](KernelSpec &k) {
              k.program[1] = {"mw.matmul", {{0, 0}, {0, 0}}, {DType::F32},
                              {{4, 4}}, {boolAttr("transpose_rhs", true)}};
              k.yields = {{0, 0}};
            }),
            "a matmul kernel has one mw.matmul, its first instruction");
  // A row op over another axis than the last.
  EXPECT_EQ(reject([](KernelSpec &k) {
              k.program[1] = {"mw.softmax", {{0, 0}}, {DType::F32}, {{4, 8}},
                              {intAttr("axis", 0)}};
            }),
            "instruction 1 ('mw.softmax'): a fused kernel normalizes over the "
            "last axis only");
  // A column sum read by another instruction instead of being yielded.
  EXPECT_EQ(reject([](KernelSpec &k) {
              k.program[1] = {"mw.reduce_sum", {{0, 0}}, {DType::F32}, {{8}},
                              {intsAttr("axes", {0})}};
              k.program.push_back({"mw.neg", {{1, 0}}, {DType::F32}, {{8}}, {}});
              k.yields = {{0, 0}};
            }),
            "instruction 1 ('mw.reduce_sum'): a column reduction may only be "
            "yielded, not read by another instruction");
  // A kernel of op mw.fusion needs its program; no other op has one.
  EXPECT_EQ(reject([](KernelSpec &k) { k.program.clear(); }),
            "a fused kernel without its program");
  PlanBuilder b = fusedPlan();
  b.kernels[0].op = "mw.add";
  EXPECT_EQ(rejection(b), "t.mwplan: kernel 0: op 'mw.add' with a fused "
                          "program (only 'mw.fusion' has one) at mlp.py:3");
}

TEST(PlanLoad, RunsAFusedKernel) {
  std::string error;
  std::shared_ptr<const Plan> plan;
  ASSERT_EQ(parse(fusedPlan().finish(), error, &plan), MWRT_OK) << error;
  std::unique_ptr<Session> session;
  ASSERT_EQ(Session::create(plan, "cpu", {}, session), MWRT_OK)
      << mwrt_last_error();
  std::vector<float> x(32), b(8);
  for (int i = 0; i < 32; ++i)
    x[i] = 0.1f * static_cast<float>(i - 16);
  for (int i = 0; i < 8; ++i)
    b[i] = 0.25f * static_cast<float>(i);
  ASSERT_EQ(session->setTensor("x", mwrt::DType::F32, {4, 8}, x.data(), 128), MWRT_OK);
  ASSERT_EQ(session->setTensor("b", mwrt::DType::F32, {8}, b.data(), 32), MWRT_OK);
  ASSERT_EQ(session->step(), MWRT_OK) << mwrt_last_error();
  TensorData y;
  ASSERT_EQ(session->readResult("y", y), MWRT_OK);
  const auto *v = reinterpret_cast<const float *>(y.bytes.data());
  for (int i = 0; i < 32; ++i) // the unfused ops' formulas, one by one
    EXPECT_EQ(v[i], formulas::gelu(x[i] + b[i % 8], formulas::kGeluTanh)) << i;
  // The scratch is part of the workspace the session allocated once.
  EXPECT_GT(session->stats().workspaceBytes, 0u);
  EXPECT_EQ(session->stats().plannedPeakBytes,
            session->stats().measuredPeakBytes);
}

namespace {

/// y = softmax_grad(t, t) * t with t = -x (kernel 0, at arena offset 0), as
/// one fused row kernel over rows of [4, 8] writing y at arena offset `out`:
/// 0 is over t, which the row kernel reads at the iteration index and along
/// its rows (docs/fusion.md, aliasing). `transposed` makes t [8, 8] and
/// reads it through a transpose first: another row's elements.
PlanBuilder rowInPlacePlan(uint64_t out, bool transposed = false) {
  std::vector<int64_t> shape = transposed ? std::vector<int64_t>{8, 8}
                                          : std::vector<int64_t>{4, 8};
  PlanBuilder p;
  p.function = "row";
  p.arenaSize = 512;
  int x = p.addPersistent("x", DType::F32, shape, Role::Input, 0);
  p.addKernel("mw.neg", {persistent(x, shape)}, {arena(0, shape)}, {}, "a.py:1");
  KernelSpec &k = p.addKernel("mw.fusion", {arena(0, shape)},
                              {arena(out, shape)}, {}, "a.py:2");
  std::pair<int, int> t{-1, 0};
  if (transposed) {
    k.program.push_back({"mw.transpose", {{-1, 0}}, {DType::F32}, {shape},
                         {intsAttr("permutation", {1, 0})}});
    t = {0, 0};
  }
  k.program.push_back({"mw.softmax_grad", {t, t}, {DType::F32}, {shape},
                       {intAttr("axis", 1)}});
  int g = static_cast<int>(k.program.size()) - 1;
  k.program.push_back({"mw.mul", {{g, 0}, t}, {DType::F32}, {shape}, {}});
  k.yields = {{g + 1, 0}};
  p.addResult("y", Role::Output, arena(out, shape));
  return p;
}

/// Runs `b`'s step on the CPU with input "x" = `x` (of the plan's first
/// persistent's shape) and returns its result "y", or nothing with `status`
/// the step's failure.
std::vector<float> runWithX(const PlanBuilder &b, const std::vector<float> &x,
                            mwrt_status &status) {
  std::string error;
  std::shared_ptr<const Plan> plan;
  EXPECT_EQ(parse(b.finish(), error, &plan), MWRT_OK) << error;
  std::unique_ptr<Session> session;
  EXPECT_EQ(Session::create(plan, "cpu", {}, session), MWRT_OK)
      << mwrt_last_error();
  EXPECT_EQ(session->setTensor("x", mwrt::DType::F32, b.persistents[0].shape,
                               x.data(), x.size() * 4),
            MWRT_OK);
  status = session->step();
  if (status != MWRT_OK)
    return {};
  TensorData y;
  EXPECT_EQ(session->readResult("y", y), MWRT_OK);
  const auto *v = reinterpret_cast<const float *>(y.bytes.data());
  return std::vector<float>(v, v + x.size());
}

/// Runs `inPlace` and `apart` (the same program, its result over an input
/// and in a buffer of its own) with `run`: both run, and give `n` values bit
/// for bit the same.
template <typename Run>
void expectInPlaceAsApart(Run run, const PlanBuilder &inPlace,
                          const PlanBuilder &apart, size_t n) {
  mwrt_status inPlaceStatus = MWRT_OK, apartStatus = MWRT_OK;
  std::vector<float> a = run(inPlace, inPlaceStatus);
  std::vector<float> b = run(apart, apartStatus);
  ASSERT_EQ(inPlaceStatus, MWRT_OK) << mwrt_last_error();
  ASSERT_EQ(apartStatus, MWRT_OK) << mwrt_last_error();
  ASSERT_EQ(a.size(), n);
  for (size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(a[i], b[i]) << i;
}

std::vector<float> runRow(const PlanBuilder &b, mwrt_status &status) {
  int64_t n = b.persistents[0].shape[0] * b.persistents[0].shape[1];
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    x[i] = 0.05f * static_cast<float>((i * 7) % 23 - 11);
  return runWithX(b, x, status);
}

} // namespace

// A row kernel may write its result over an input it reads only at the
// iteration index and along the rows: the CPU backend reads a tile's whole
// rows before writing them, so the result is bit for bit the one written
// into a buffer of its own.
TEST(PlanLoad, RunsARowKernelOverItsInput) {
  expectInPlaceAsApart(runRow, rowInPlacePlan(0), rowInPlacePlan(128), 32);
}

// ... but not over an input it reads through a transpose (another row's
// elements): the runtime refuses the binding before running the kernel,
// and runs the same program into a buffer of its own.
TEST(PlanLoad, RefusesAFusedKernelOverAnInputReadElsewhere) {
  mwrt_status st = MWRT_OK;
  runRow(rowInPlacePlan(0, /*transposed=*/true), st);
  EXPECT_TRUE(failsWith(st, "'mw.fusion' (row): result #0 overlaps operand "
                            "#0, which the program does not read at the "
                            "result's own index"));
  mwrt_status fresh = MWRT_OK;
  runRow(rowInPlacePlan(256, /*transposed=*/true), fresh);
  EXPECT_EQ(fresh, MWRT_OK) << mwrt_last_error();
}

namespace {

/// acc = -x (kernel 0, at arena offset 0), then one fused matmul kernel
/// y = acc + x x, writing y
/// at arena offset `out`: 0 is over acc, which only the epilogue reads, at
/// the output's own index (an accumulator, --mw-chunk-loss's weight
/// gradient). `overOperand` makes acc the matmul's left operand too.
PlanBuilder matmulAccumulatePlan(uint64_t out, bool overOperand = false) {
  std::vector<int64_t> shape{8, 8};
  PlanBuilder p;
  p.function = "acc";
  p.arenaSize = 1024;
  int x = p.addPersistent("x", DType::F32, shape, Role::Input, 0);
  p.addKernel("mw.neg", {persistent(x, shape)}, {arena(0, shape)}, {},
              "a.py:1");
  KernelSpec &k =
      p.addKernel("mw.fusion",
                  {overOperand ? arena(0, shape) : persistent(x, shape),
                   persistent(x, shape), arena(0, shape)},
                  {arena(out, shape)}, {}, "a.py:2");
  k.program.push_back(
      {"mw.matmul", {{-1, 0}, {-1, 1}}, {DType::F32}, {shape}, {}});
  k.program.push_back({"mw.add", {{-1, 2}, {0, 0}}, {DType::F32}, {shape}, {}});
  k.yields = {{1, 0}};
  p.addResult("y", Role::Output, arena(out, shape));
  return p;
}

std::vector<float> runAccumulate(const PlanBuilder &b, mwrt_status &status) {
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i)
    x[i] = 0.25f * static_cast<float>((i * 5) % 17 - 8);
  return runWithX(b, x, status);
}

} // namespace

// A matmul kernel's epilogue result may go over an input only the epilogue
// reads, at the output's own index: the product is made first, so the sum
// is bit for bit the one written into a buffer of its own.
TEST(PlanLoad, RunsAMatmulKernelOverItsAccumulator) {
  expectInPlaceAsApart(runAccumulate, matmulAccumulatePlan(0),
                       matmulAccumulatePlan(512), 64);
}

// ... but never over an operand of the matmul itself.
TEST(PlanLoad, RefusesAMatmulKernelOverItsOperand) {
  mwrt_status st = MWRT_OK;
  runAccumulate(matmulAccumulatePlan(0, /*overOperand=*/true), st);
  EXPECT_TRUE(failsWith(st, "'mw.fusion' (matmul): result #0 overlaps "
                            "operand #0, which the program does not read at "
                            "the result's own index"));
}

} // namespace mwrt::test
