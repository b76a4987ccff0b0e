//===- MemoryVerdict.cpp - The verdict of --mw-memory-report --------------===//
//
// The runtime overhead a step implies and the text and JSON forms of the
// verdict (MemoryVerdict.h).
//
//===----------------------------------------------------------------------===//

#include "MemoryVerdict.h"

#include "memwall/Analysis/Units.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::mw;

/// runtime/src/cuda/backend_cuda.cpp: kCublasWorkspace.
static constexpr int64_t kCublasWorkspaceBytes = 32 << 20;

RuntimeOverhead mlir::mw::computeRuntimeOverhead(FunctionOpInterface func) {
  RuntimeOverhead o;
  o.cublasWorkspaceBytes = kCublasWorkspaceBytes;
  auto consider = [&](Operation *op, Value query, Value key, bool backward) {
    auto q = dyn_cast<ShapedType>(query.getType());
    auto k = dyn_cast<ShapedType>(key.getType());
    if (!q || !k || !q.hasStaticShape() || !k.hasStaticShape() ||
        q.getRank() != 4 || k.getRank() != 4)
      return;
    int64_t bh = q.getDimSize(0) * q.getDimSize(1), s = q.getDimSize(2),
            sk = k.getDimSize(2);
    int64_t floats = backward ? 2 * bh * s * sk + bh * s + 1 : bh * s * sk;
    if (floats * 4 > o.attentionScratchBytes) {
      o.attentionScratchBytes = floats * 4;
      o.attentionScratchOp = op->getName().getStringRef().str();
    }
  };
  func.getFunctionBody().walk([&](Operation *op) {
    if (auto a = dyn_cast<AttentionOp>(op))
      consider(op, a.getQuery(), a.getKey(), false);
    else if (auto g = dyn_cast<AttentionGradOp>(op))
      consider(op, g.getQuery(), g.getKey(), true);
  });
  return o;
}

/// "21324697876 (21.32 GB = 19.86 GiB)".
static std::string bytesBoth(int64_t bytes) {
  return llvm::formatv("{0} ({1})", bytes, formatBothBytes(bytes)).str();
}

void mlir::mw::printVerdictText(llvm::raw_ostream &os, const Verdict &v) {
  const Device &d = v.device;
  os << "mw-memory-report verdict @" << v.function << " on " << d.name << " ("
     << formatBothBytes(d.memoryBytes);
  if (!d.description.empty())
    os << ", " << d.description;
  os << ")\n";
  auto line = [&](StringRef label, int64_t bytes, StringRef tail = "") {
    os << llvm::formatv("  {0,-24}{1}", label, bytesBoth(bytes));
    if (!tail.empty())
      os << "; " << tail;
    os << "\n";
  };
  line("step peak", v.peakBytes(),
       llvm::formatv("arena {0} + persistent {1}, {2}", v.arenaBytes,
                     v.persistentBytes, v.peakSource)
           .str());
  line("runtime overhead", v.overhead.total(),
       llvm::formatv("cuBLASLt workspace {0}, attention scratch {1}{2}",
                     formatBinaryBytes(v.overhead.cublasWorkspaceBytes),
                     formatBinaryBytes(v.overhead.attentionScratchBytes),
                     v.overhead.attentionScratchOp.empty()
                         ? std::string()
                         : " (" + v.overhead.attentionScratchOp + ")")
           .str());
  os << "  not counted             the CUDA context and loaded kernels, "
        "NCCL's buffers, the scratch of strided matmul operands\n";
  line("required", v.requiredBytes());
  int64_t margin = v.marginBytes();
  if (v.fits())
    os << llvm::formatv("  {0,-24}fits: {1} to spare ({2:P1} of the device)\n",
                        "verdict", formatBothBytes(margin),
                        double(margin) / double(d.memoryBytes));
  else
    os << llvm::formatv("  {0,-24}does not fit: short by {1}\n", "verdict",
                        formatBothBytes(-margin));
  if (v.suggestions.empty())
    return;
  os << "  changes (predicted peak + overhead; cost):\n";
  for (const Suggestion &s : v.suggestions) {
    os << llvm::formatv("    {0,-11}", s.kind);
    if (s.basis == "unavailable") {
      os << "not predicted: " << s.note << "\n";
      continue;
    }
    os << s.change << "\n";
    os << llvm::formatv("               {0}: {1} ({2})", s.fits ? "fits" : "does not fit",
                        formatBothBytes(s.requiredBytes), s.basis);
    if (s.kind == "remat" && s.fits)
      os << llvm::formatv("; +{0} recompute FLOPs ({1:P1} of the step)",
                          s.extraFlops, s.extraFlopsFraction);
    if (s.kind == "chunk-loss" && s.extraFlops > 0)
      os << llvm::formatv("; +{0} FLOPs ({1:P1} of the step)", s.extraFlops,
                          s.extraFlopsFraction);
    if (s.kind == "zero")
      os << llvm::formatv("; sends {0} per rank per step",
                          formatDecimalBytes(s.communicationBytes));
    os << "\n";
    if (!s.note.empty())
      os << "               " << s.note << "\n";
  }
}

void mlir::mw::printVerdictJson(llvm::json::OStream &j, const Verdict &v) {
  j.attributeObject("verdict", [&] {
    j.attribute("function", v.function);
    j.attribute("device", v.device.name);
    j.attribute("device_memory_bytes", v.device.memoryBytes);
    j.attribute("peak_bytes", v.peakBytes());
    j.attribute("peak_source", v.peakSource);
    j.attribute("arena_bytes", v.arenaBytes);
    j.attribute("persistent_bytes", v.persistentBytes);
    j.attributeObject("overhead", [&] {
      j.attribute("cublas_workspace_bytes", v.overhead.cublasWorkspaceBytes);
      j.attribute("attention_scratch_bytes", v.overhead.attentionScratchBytes);
      j.attribute("total_bytes", v.overhead.total());
    });
    j.attributeArray("not_counted", [&] {
      j.value("cuda_context");
      j.value("nccl_buffers");
      j.value("strided_matmul_scratch");
    });
    j.attribute("required_bytes", v.requiredBytes());
    j.attribute("margin_bytes", v.marginBytes());
    j.attribute("fits", v.fits());
    j.attributeArray("suggestions", [&] {
      for (const Suggestion &s : v.suggestions)
        j.object([&] {
          j.attribute("kind", s.kind);
          j.attribute("change", s.change);
          j.attribute("basis", s.basis);
          if (s.basis != "unavailable") {
            j.attribute("peak_bytes", s.peakBytes);
            j.attribute("required_bytes", s.requiredBytes);
            j.attribute("fits", s.fits);
            j.attribute("extra_flops", s.extraFlops);
            j.attribute("communication_bytes", s.communicationBytes);
          }
          j.attribute("note", s.note);
        });
    });
  });
}
