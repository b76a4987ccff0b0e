//===- MwKvPlan.cpp - --mw-kv-plan ----------------------------------------===//
//
// Sizes the paged KV cache of an inference module (@prefill and @decode,
// docs/inference.md) from the static plan: it plans a copy of the module
// with --mw-train-pipeline (as the memory report's verdict does), takes the
// weights and other persistent state, the larger step's arena and the
// runtime workspace from that plan, and gives every kv_cache argument and
// result as many blocks as the rest of the device memory holds. The caches
// are persistent state sized by their type, so the plan compiled from the
// resized module allocates exactly that.
//
//===----------------------------------------------------------------------===//

#include "MemoryVerdict.h"

#include "memwall/Analysis/BufferLiveness.h"
#include "memwall/Analysis/Targets.h"
#include "memwall/Analysis/Units.h"
#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Dialect/MW/Transforms/Pipelines.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <limits>

namespace mlir::mw {
#define GEN_PASS_DEF_MWKVPLAN
#include "memwall/Dialect/MW/Transforms/Passes.h.inc"
} // namespace mlir::mw

using namespace mlir;
using namespace mlir::mw;

namespace {

/// One function's kv_cache arguments.
struct StepCaches {
  func::FuncOp func;
  SmallVector<unsigned> args;
};

/// What the plan of the copy says, summed the way the runtime holds it: the
/// persistent buffers once by name, one arena for the larger step, one
/// workspace.
struct PlanFigures {
  int64_t arenaBytes = 0;
  std::string arenaFunction;
  /// Every persistent buffer but the caches: parameters, inputs, constants.
  int64_t persistentBytes = 0;
  int64_t weightBytes = 0;
  RuntimeOverhead overhead;
};

struct KvPlan {
  std::string device;
  int64_t deviceBytes = 0;
  PlanFigures plan;
  int64_t numCaches = 0, blockSize = 0, maxSeq = 0, seqLen = 0, maxBatch = 0;
  std::string kvDType;
  int64_t bytesPerToken = 0, scaleBytes = 0;
  int64_t oldBlocks = 0, blocks = 0;
  /// Whether the i32 slot numbers, not the memory, bound the blocks.
  bool cappedBySlots = false;
  int64_t cacheBytes() const { return blocks * blockSize * bytesPerToken; }
  int64_t fixedBytes() const {
    return plan.persistentBytes + plan.arenaBytes + plan.overhead.total();
  }
  int64_t blocksPerSequence(int64_t len) const {
    return (len + blockSize - 1) / blockSize;
  }
  int64_t maxSequences() const { return blocks / blocksPerSequence(seqLen); }
  /// Sequences of max-seq tokens each, reserved contiguously: the seeds'
  /// preallocation, for comparison.
  int64_t contiguousSequences() const {
    return (blocks * blockSize) / maxSeq;
  }
};

std::string kvDTypeName(Type t) {
  if (t.isF32())
    return "f32";
  if (t.isBF16())
    return "bf16";
  if (t.isF16())
    return "f16";
  if (t.isInteger(8))
    return "int8";
  if (isa<Float8E4M3FNType>(t))
    return "fp8e4m3";
  return "unknown";
}

std::string both(int64_t bytes) {
  return llvm::formatv("{0} ({1})", bytes, formatBothBytes(bytes)).str();
}

struct MwKvPlanPass : public mw::impl::MwKvPlanBase<MwKvPlanPass> {
  using MwKvPlanBase::MwKvPlanBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<Device> device = resolve(module);
    if (failed(device))
      return signalPassFailure();
    if (format != "text" && format != "json") {
      module.emitError() << "mw-kv-plan: format='" << format
                         << "' (expected text or json)";
      return signalPassFailure();
    }

    // The caches: every kv_cache argument of every function, one shape.
    SmallVector<StepCaches> steps;
    RankedTensorType cacheType;
    KvPlan p;
    for (auto func : module.getOps<func::FuncOp>()) {
      StepCaches s{func, {}};
      for (unsigned i = 0, e = func.getNumArguments(); i < e; ++i) {
        auto role =
            func.getArgAttrOfType<RoleAttr>(i, MWDialect::kRoleAttrName);
        if (!role || role.getValue() != Role::kv_cache)
          continue;
        auto t = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
        if (!t || t.getRank() != 4 || !t.hasStaticShape()) {
          func.emitError() << "mw-kv-plan: kv_cache argument " << i
                           << " is not a static [NB, BS, Hkv, D] tensor";
          return signalPassFailure();
        }
        if (cacheType && (t.getDimSize(0) != cacheType.getDimSize(0) ||
                          t.getDimSize(1) != cacheType.getDimSize(1))) {
          func.emitError() << "mw-kv-plan: kv_cache argument " << i << " has "
                           << t.getDimSize(0) << " blocks of "
                           << t.getDimSize(1) << " tokens, another cache "
                           << cacheType.getDimSize(0) << " of "
                           << cacheType.getDimSize(1)
                           << "; every cache must share one block table";
          return signalPassFailure();
        }
        cacheType = t;
        s.args.push_back(i);
        if (auto m = func->getAttrOfType<IntegerAttr>("mw.max_seq"))
          p.maxSeq = std::max(p.maxSeq, m.getInt());
      }
      if (!s.args.empty())
        steps.push_back(s);
    }
    if (steps.empty()) {
      module.emitError() << "mw-kv-plan: the module has no kv_cache "
                            "arguments to size (mw-models gpt|llama "
                            "--inference emits them)";
      return signalPassFailure();
    }
    func::FuncOp first = steps.front().func;
    p.device = device->name;
    p.deviceBytes = device->memoryBytes;
    p.blockSize = cacheType.getDimSize(1);
    p.oldBlocks = cacheType.getDimSize(0);
    p.kvDType = kvDTypeName(cacheType.getElementType());
    p.numCaches = steps.front().args.size();
    for (unsigned i : steps.front().args) {
      auto t = cast<RankedTensorType>(first.getArgument(i).getType());
      p.bytesPerToken += mw::detail::tensorBytes(t) / (t.getDimSize(0) *
                                                       t.getDimSize(1));
    }
    // The scales are attributes of the cache ops: compiled into the plan's
    // op records, no buffer and nothing per token.
    module.walk([&](KvCacheWriteOp w) {
      if (auto s = w.getScaleAttr())
        p.scaleBytes += 4 * s.size();
    });
    // Block tables [B, MB]: the batch and, without mw.max_seq, MB * BS.
    for (unsigned i = 0, e = first.getNumArguments(); i < e; ++i) {
      auto name = first.getArgAttrOfType<StringAttr>(i, MWDialect::kNameAttrName);
      auto t = dyn_cast<RankedTensorType>(first.getArgument(i).getType());
      if (name && name.getValue() == "block_tables" && t && t.getRank() == 2) {
        p.maxBatch = t.getDimSize(0);
        if (!p.maxSeq)
          p.maxSeq = t.getDimSize(1) * p.blockSize;
      }
    }
    if (!p.maxSeq) {
      module.emitError() << "mw-kv-plan: no mw.max_seq attribute and no "
                            "block_tables argument say how long a sequence "
                            "may be";
      return signalPassFailure();
    }
    if (block != 0 && block != p.blockSize) {
      module.emitError() << "mw-kv-plan: block=" << block.getValue()
                         << " but the caches hold blocks of " << p.blockSize
                         << " tokens (mw-models --block sets them)";
      return signalPassFailure();
    }
    if (p.maxSeq % p.blockSize != 0) {
      module.emitError() << "mw-kv-plan: the block size " << p.blockSize
                         << " does not divide max-seq " << p.maxSeq
                         << " (a full-length sequence would leave "
                         << p.blockSize - p.maxSeq % p.blockSize
                         << " slots of its last block unused)";
      return signalPassFailure();
    }
    if (!kvDType.empty() && kvDType != p.kvDType) {
      module.emitError() << "mw-kv-plan: kv-dtype=" << kvDType
                         << " but the caches are " << p.kvDType
                         << " (mw-models --kv-dtype sets them and their "
                            "scales)";
      return signalPassFailure();
    }
    p.seqLen = seqLen ? int64_t(seqLen) : p.maxSeq;
    if (p.seqLen <= 0 || p.seqLen > p.maxSeq) {
      module.emitError() << "mw-kv-plan: seq-len=" << p.seqLen
                         << " is outside 1.." << p.maxSeq << " (max-seq)";
      return signalPassFailure();
    }

    FailureOr<PlanFigures> figures = planCopy(module, steps);
    if (failed(figures))
      return signalPassFailure();
    p.plan = *figures;
    int64_t free = p.deviceBytes - p.fixedBytes();
    if (p.plan.weightBytes > p.deviceBytes) {
      module.emitError() << "mw-kv-plan: the weights alone ("
                         << formatBothBytes(p.plan.weightBytes)
                         << ") do not fit " << p.device << " ("
                         << formatBothBytes(p.deviceBytes) << "), short by "
                         << formatBothBytes(p.plan.weightBytes -
                                            p.deviceBytes);
      return signalPassFailure();
    }
    if (free < 0) {
      module.emitError() << "mw-kv-plan: the weights and the step do not fit "
                         << p.device << " (" << formatBothBytes(p.deviceBytes)
                         << ") before any KV cache: persistent "
                         << formatBothBytes(p.plan.persistentBytes)
                         << " + arena " << formatBothBytes(p.plan.arenaBytes)
                         << " + workspace "
                         << formatBothBytes(p.plan.overhead.total())
                         << ", short by " << formatBothBytes(-free);
      return signalPassFailure();
    }
    p.blocks = free / (p.blockSize * p.bytesPerToken);
    // Slots are i32 (slot_mapping): NB * BS stays below 2^31.
    int64_t maxBlocks = std::numeric_limits<int32_t>::max() / p.blockSize;
    if (p.blocks > maxBlocks) {
      p.blocks = maxBlocks;
      p.cappedBySlots = true;
    }
    if (p.blocks < p.blocksPerSequence(p.seqLen)) {
      module.emitError() << "mw-kv-plan: " << formatBothBytes(free)
                         << " left after the weights and the step hold "
                         << p.blocks << " blocks, fewer than the "
                         << p.blocksPerSequence(p.seqLen)
                         << " one sequence of " << p.seqLen << " tokens needs";
      return signalPassFailure();
    }

    resize(steps, p.blocks);
    if (failed(report(module, p)))
      return signalPassFailure();
  }

  FailureOr<Device> resolve(ModuleOp module) {
    Device d;
    if (targetName.empty() && deviceMemory.empty()) {
      module.emitError() << "mw-kv-plan: give target=NAME or "
                            "device-memory=SIZE";
      return failure();
    }
    if (!targetName.empty()) {
      const Target *t = lookupTarget(targetName);
      if (!t || t->memoryBytes == 0) {
        module.emitError() << "mw-kv-plan: unknown target '" << targetName
                           << "' (expected one with device memory: "
                           << getTargetNames() << ")";
        return failure();
      }
      d.name = t->name.str();
      d.memoryBytes = t->memoryBytes;
    }
    if (!deviceMemory.empty()) {
      std::optional<int64_t> bytes = parseByteSize(deviceMemory);
      if (!bytes) {
        module.emitError() << "mw-kv-plan: device-memory='" << deviceMemory
                           << "' is not a size (expected a positive number "
                              "with an optional unit: "
                           << getByteSizeUnits() << ", e.g. 80GB)";
        return failure();
      }
      d.memoryBytes = *bytes;
      d.name = "device-memory=" + deviceMemory;
    }
    return d;
  }

  /// Plans a copy with --mw-train-pipeline and sums its figures; the
  /// caches' own bytes are left out (they are what is being sized).
  FailureOr<PlanFigures> planCopy(ModuleOp module,
                                  ArrayRef<StepCaches> steps) {
    OwningOpRef<ModuleOp> copy(cast<ModuleOp>(module->clone()));
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    buildTrainPipeline(pm);
    if (failed(pm.run(*copy))) {
      module.emitError() << "mw-kv-plan: planning a copy of the module "
                            "with --mw-train-pipeline failed";
      return failure();
    }
    PlanFigures f;
    llvm::StringMap<int64_t> persistentByName;
    int64_t constants = 0;
    for (const StepCaches &s : steps) {
      auto func = copy->lookupSymbol<func::FuncOp>(func::FuncOp(s.func).getSymName());
      if (!func)
        continue;
      auto arena = func->getAttrOfType<IntegerAttr>("mw.arena_size");
      int64_t arenaBytes = arena ? arena.getInt() : 0;
      if (arenaBytes > f.arenaBytes) {
        f.arenaBytes = arenaBytes;
        f.arenaFunction = func.getSymName().str();
      }
      RuntimeOverhead o = computeRuntimeOverhead(func);
      if (o.total() > f.overhead.total())
        f.overhead = o;
      int64_t ownConstants = 0;
      Value arenaValue;
      for (BlockArgument arg : func.getArguments()) {
        if (func.getArgAttr(arg.getArgNumber(), "mw.arena")) {
          arenaValue = arg;
          continue;
        }
        auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                    MWDialect::kRoleAttrName);
        if (role && role.getValue() == Role::kv_cache)
          continue;
        auto name = func.getArgAttrOfType<StringAttr>(
            arg.getArgNumber(), MWDialect::kNameAttrName);
        std::string key = name ? name.getValue().str()
                               : "arg" + std::to_string(arg.getArgNumber());
        int64_t bytes = mw::detail::tensorBytes(arg.getType());
        int64_t &slot = persistentByName[key];
        if (bytes > slot) {
          if (role && role.getValue() == Role::param)
            f.weightBytes += bytes - slot;
          slot = bytes;
        }
      }
      func.walk([&](memref::AllocOp a) {
        if (a->hasAttr("mw.arena"))
          arenaValue = a.getResult();
      });
      BufferLiveness live(func);
      for (const LiveBuffer &b : live.getBuffers())
        if (!b.isTransient() && b.value != arenaValue)
          ownConstants += b.sizeInBytes;
      constants = std::max(constants, ownConstants);
    }
    for (const auto &e : persistentByName)
      f.persistentBytes += e.getValue();
    f.persistentBytes += constants;
    return f;
  }

  /// NB := blocks on every kv_cache argument, the cache writes' results and
  /// the functions' results.
  static void resize(ArrayRef<StepCaches> steps, int64_t blocks) {
    for (const StepCaches &s : steps) {
      func::FuncOp func = s.func;
      for (unsigned i : s.args) {
        BlockArgument arg = func.getArgument(i);
        auto t = cast<RankedTensorType>(arg.getType());
        SmallVector<int64_t> shape(t.getShape());
        shape[0] = blocks;
        arg.setType(RankedTensorType::get(shape, t.getElementType()));
      }
      func.walk([](KvCacheWriteOp w) {
        w.getResult().setType(cast<RankedTensorType>(w.getCache().getType()));
      });
      Operation *ret = func.getBody().front().getTerminator();
      func.setType(FunctionType::get(func.getContext(),
                                     func.getBody().getArgumentTypes(),
                                     ret->getOperandTypes()));
    }
  }

  LogicalResult report(ModuleOp module, const KvPlan &p) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (format == "json") {
      llvm::json::OStream j(os, 2);
      j.object([&] {
        j.attribute("device", p.device);
        j.attribute("device_memory_bytes", p.deviceBytes);
        j.attribute("persistent_bytes", p.plan.persistentBytes);
        j.attribute("weight_bytes", p.plan.weightBytes);
        j.attribute("arena_bytes", p.plan.arenaBytes);
        j.attribute("arena_function", p.plan.arenaFunction);
        j.attribute("workspace_bytes", p.plan.overhead.total());
        j.attribute("kv_dtype", p.kvDType);
        j.attribute("caches", p.numCaches);
        j.attribute("block_size", p.blockSize);
        j.attribute("bytes_per_token", p.bytesPerToken);
        j.attribute("bytes_per_block", p.bytesPerToken * p.blockSize);
        j.attribute("scale_bytes", p.scaleBytes);
        j.attribute("blocks", p.blocks);
        j.attribute("blocks_before", p.oldBlocks);
        j.attribute("capped_by_i32_slots", p.cappedBySlots);
        j.attribute("cache_bytes", p.cacheBytes());
        j.attribute("unused_bytes",
                    p.deviceBytes - p.fixedBytes() - p.cacheBytes());
        j.attribute("max_resident_tokens", p.blocks * p.blockSize);
        j.attribute("max_seq", p.maxSeq);
        j.attribute("seq_len", p.seqLen);
        j.attribute("blocks_per_sequence", p.blocksPerSequence(p.seqLen));
        j.attribute("max_sequences", p.maxSequences());
        j.attribute("max_batch", p.maxBatch);
        j.attribute("contiguous_max_seq_sequences", p.contiguousSequences());
      });
      os << "\n";
    } else {
      auto line = [&](StringRef label, const Twine &value) {
        os << llvm::formatv("  {0,-24}", label) << value << "\n";
      };
      os << "mw-kv-plan on " << p.device << " (" << formatBothBytes(p.deviceBytes)
         << ")\n";
      line("persistent", both(p.plan.persistentBytes) + "; weights " +
                             Twine(p.plan.weightBytes) +
                             ", the rest inputs and constants");
      line("arena", both(p.plan.arenaBytes) + "; @" + p.plan.arenaFunction +
                        "'s, the larger step");
      line("workspace", both(p.plan.overhead.total()) +
                            "; cuBLASLt workspace and attention scratch");
      line("kv cache", Twine(p.numCaches) + " caches of " + p.kvDType + ", " +
                           Twine(p.blockSize) + "-token blocks");
      line("bytes per token", Twine(p.bytesPerToken) +
                                  " (all layers, K and V; scales " +
                                  Twine(p.scaleBytes) +
                                  " bytes compiled in, none per token)");
      line("blocks", Twine(p.blocks) + " (was " + Twine(p.oldBlocks) + "), " +
                         both(p.cacheBytes()) +
                         (p.cappedBySlots ? "; capped: slots are i32" : ""));
      line("left over", both(p.deviceBytes - p.fixedBytes() - p.cacheBytes()));
      line("max resident tokens", Twine(p.blocks * p.blockSize));
      line("max sequences", Twine(p.maxSequences()) + " of " +
                                Twine(p.seqLen) + " tokens (" +
                                Twine(p.blocksPerSequence(p.seqLen)) +
                                " blocks each); a step batches " +
                                Twine(p.maxBatch));
      line("contiguous", Twine(p.contiguousSequences()) +
                             " sequences if each reserved max-seq " +
                             Twine(p.maxSeq) + " tokens");
    }
    if (output == "-") {
      llvm::outs() << text;
      llvm::outs().flush();
      return success();
    }
    std::error_code ec;
    llvm::raw_fd_ostream file(output, ec, llvm::sys::fs::OF_Text);
    if (ec)
      return module.emitError() << "mw-kv-plan: cannot write '" << output
                                << "': " << ec.message();
    file << text;
    return success();
  }
};

} // namespace
