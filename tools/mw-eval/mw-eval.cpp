//===- mw-eval.cpp - Run an mw function with the reference evaluator ------===//
//
// mw-eval FILE.mlir [--entry NAME] [--ranks N]
//                   [--inputs IN.safetensors | --random-inputs SEED]
//                   [--rank-inputs PATTERN] [--outputs OUT.safetensors]
//                   [--save-inputs FILE] [--print]
//
// Binds inputs by argument name (mw.name, else argN), evaluates the function
// with the reference evaluator, and writes outputs by result name (mw.name,
// else resultN). Files are written only after a successful evaluation, each
// atomically, so a failed run writes nothing. With --ranks N, the N rank
// programs of an SPMD step (--mw-zero) run in one process, their collectives
// computed across the simulated ranks, and every file is per rank.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "memwall/Eval/Evaluator.h"
#include "memwall/InitMemwall.h"
#include "mwrt/formulas.h"
#include "mwrt/safetensors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Mesh/IR/MeshDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::eval;
namespace cl = llvm::cl;

static cl::OptionCategory category("mw-eval options");
// Optional so that mw-eval without one prints its usage (main), not LLVM's
// "Not enough positional command line arguments".
static cl::opt<std::string> inputFile(cl::Positional, cl::Optional,
                                      cl::desc("<input .mlir>"),
                                      cl::cat(category));
static cl::opt<std::string>
    entry("entry",
          cl::desc("Function to evaluate (default: the module's only "
                   "function with a body)"),
          cl::value_desc("NAME"), cl::cat(category));
static cl::list<std::string> inputsFiles(
    "inputs",
    cl::desc("Bind arguments by name from this safetensors file; may be "
             "repeated (e.g. a batch and the state a previous step wrote), a "
             "name in several files takes its value from the last"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<uint64_t> randomSeed(
    "random-inputs",
    cl::desc("Fill every argument deterministically from SEED: floats "
             "normal(0, 0.02) (rank-1 '*weight' arguments 1 + normal(0, "
             "0.02)), integers uniform over their valid range (see "
             "docs/mw-eval.md)"),
    cl::value_desc("SEED"), cl::cat(category));
static cl::opt<std::string>
    outputsFile("outputs",
                cl::desc("Write results by name to this safetensors file"),
                cl::value_desc("FILE"), cl::cat(category));
static cl::opt<std::string> saveInputsFile(
    "save-inputs",
    cl::desc("Write the inputs used (given or random) to this safetensors "
             "file, to reproduce the run"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<bool> printOutputs(
    "print",
    cl::desc("Print each output's dtype, shape, first values and checksum"),
    cl::cat(category));
static cl::opt<int64_t> numRanks(
    "ranks",
    cl::desc("Run the N rank programs of an SPMD step (mesh collectives "
             "computed across the simulated ranks); every file becomes one "
             "per rank (see docs/mw-eval.md)"),
    cl::value_desc("N"), cl::init(1), cl::cat(category));
static cl::list<std::string> rankInputsFiles(
    "rank-inputs",
    cl::desc("Bind arguments of rank r from this file, '%r' replaced by r "
             "(without '%r': '.rank<r>' before the extension), after any "
             "--inputs; may be repeated"),
    cl::value_desc("PATTERN"), cl::cat(category));

//===----------------------------------------------------------------------===//
// Conversions between evaluator tensors and safetensors
//===----------------------------------------------------------------------===//

static mwrt::DType toDType(ElemKind kind) {
  switch (kind) {
  case ElemKind::F32:
    return mwrt::DType::F32;
  case ElemKind::F16:
    return mwrt::DType::F16;
  case ElemKind::BF16:
    return mwrt::DType::BF16;
  case ElemKind::I32:
    return mwrt::DType::I32;
  case ElemKind::I64:
    return mwrt::DType::I64;
  case ElemKind::I8:
    return mwrt::DType::I8;
  case ElemKind::F8E4M3FN:
    return mwrt::DType::F8_E4M3;
  }
  return mwrt::DType::F32;
}

static std::optional<ElemKind> fromDType(mwrt::DType dtype) {
  switch (dtype) {
  case mwrt::DType::F32:
    return ElemKind::F32;
  case mwrt::DType::F16:
    return ElemKind::F16;
  case mwrt::DType::BF16:
    return ElemKind::BF16;
  case mwrt::DType::I32:
    return ElemKind::I32;
  case mwrt::DType::I64:
    return ElemKind::I64;
  case mwrt::DType::I8:
    return ElemKind::I8;
  case mwrt::DType::F8_E4M3:
    return ElemKind::F8E4M3FN;
  default:
    return std::nullopt;
  }
}

static_assert(llvm::sys::IsLittleEndianHost,
              "safetensors data is little-endian and copied as is");

/// Little-endian bytes of `t` in its own element type.
static mwrt::TensorData toTensorData(const Tensor &t) {
  mwrt::TensorData d;
  d.dtype = toDType(t.kind);
  d.shape.assign(t.shape.begin(), t.shape.end());
  int64_t n = t.numElements();
  auto append = [&](const void *p, size_t size) {
    const auto *b = static_cast<const uint8_t *>(p);
    d.bytes.insert(d.bytes.end(), b, b + size);
  };
  for (int64_t k = 0; k < n; ++k) {
    switch (t.kind) {
    case ElemKind::F32:
      append(&t.f[k], 4);
      break;
    case ElemKind::F16: {
      uint16_t h = floatToHalfBits(t.f[k]);
      append(&h, 2);
      break;
    }
    case ElemKind::BF16: {
      uint16_t h = floatToBFloatBits(t.f[k]);
      append(&h, 2);
      break;
    }
    case ElemKind::I32: {
      int32_t v = static_cast<int32_t>(t.i[k]);
      append(&v, 4);
      break;
    }
    case ElemKind::I64:
      append(&t.i[k], 8);
      break;
    case ElemKind::I8: {
      int8_t v = static_cast<int8_t>(t.i[k]);
      append(&v, 1);
      break;
    }
    case ElemKind::F8E4M3FN: {
      uint8_t v = mwrt::formulas::floatToF8E4M3Bits(t.f[k]);
      append(&v, 1);
      break;
    }
    }
  }
  return d;
}

static Tensor fromTensorData(const mwrt::TensorData &d, ElemKind kind) {
  Tensor t = Tensor::zeros(kind, d.shape);
  const uint8_t *p = d.bytes.data();
  for (int64_t k = 0, n = t.numElements(); k < n; ++k) {
    switch (kind) {
    case ElemKind::F32:
      std::memcpy(&t.f[k], p + 4 * k, 4);
      break;
    case ElemKind::F16:
    case ElemKind::BF16: {
      uint16_t h;
      std::memcpy(&h, p + 2 * k, 2);
      t.f[k] =
          kind == ElemKind::F16 ? halfBitsToFloat(h) : bfloatBitsToFloat(h);
      break;
    }
    case ElemKind::I32: {
      int32_t v;
      std::memcpy(&v, p + 4 * k, 4);
      t.i[k] = v;
      break;
    }
    case ElemKind::I64:
      std::memcpy(&t.i[k], p + 8 * k, 8);
      break;
    case ElemKind::I8:
      t.i[k] = static_cast<int8_t>(p[k]);
      break;
    case ElemKind::F8E4M3FN:
      t.f[k] = mwrt::formulas::f8E4M3BitsToFloat(p[k]);
      break;
    }
  }
  return t;
}

static std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + std::to_string(d);
  return s + "]";
}

/// FNV-1a over the tensor's bytes in its own element type: equal checksums
/// mean bit-identical tensors (with overwhelming probability).
static uint64_t checksum(const mwrt::TensorData &d) {
  uint64_t h = 1469598103934665603ull;
  for (uint8_t b : d.bytes) {
    h ^= b;
    h *= 1099511628211ull;
  }
  return h;
}

/// The shortest %g form of `v` that reads back as the same `kind` value, so
/// printed values are exact without 9-digit noise ("0.1", not "0.100000001";
/// "-10", not "-1e+01"). NaN never compares equal and prints as "nan".
static std::string shortestFloat(ElemKind kind, float v) {
  std::string best;
  for (int digits = 1; digits <= 9; ++digits) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.*g", digits, static_cast<double>(v));
    bool exact = roundToKind(kind, std::strtof(buf, nullptr)) == v;
    if ((exact || digits == 9) && (best.empty() || strlen(buf) < best.size()))
      best = buf;
  }
  return best;
}

static void printTensor(llvm::raw_ostream &os, StringRef name,
                        const Tensor &t) {
  mwrt::TensorData d = toTensorData(t);
  double sum = 0.0;
  for (int64_t k = 0, n = t.numElements(); k < n; ++k)
    sum += t.at(k);
  os << name << ": " << elemKindName(t.kind) << " " << shapeString(t.shape)
     << llvm::formatv(" checksum=0x{0:x-16} sum={1:e}", checksum(d), sum)
     << " values=[";
  int64_t shown = std::min<int64_t>(t.numElements(), 6);
  for (int64_t k = 0; k < shown; ++k) {
    if (k)
      os << ", ";
    if (t.isFloat())
      os << shortestFloat(t.kind, t.f[k]);
    else
      os << t.i[k];
  }
  if (t.numElements() > shown)
    os << ", ...";
  os << "]\n";
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

static FailureOr<FunctionOpInterface> findEntry(ModuleOp module) {
  SmallVector<FunctionOpInterface> candidates;
  for (auto f : module.getOps<FunctionOpInterface>())
    if (!f.isExternal())
      candidates.push_back(f);
  if (!entry.empty()) {
    for (FunctionOpInterface f : candidates)
      if (f.getName() == entry)
        return f;
    auto diag = module.emitError()
                << "no function '" << entry << "' with a body";
    diag << "; functions:";
    for (FunctionOpInterface f : candidates)
      diag << " @" << f.getName();
    return failure();
  }
  if (candidates.size() == 1)
    return candidates.front();
  auto diag = module.emitError()
              << "the module has " << candidates.size()
              << " functions with a body; choose one with --entry:";
  for (FunctionOpInterface f : candidates)
    diag << " @" << f.getName();
  return failure();
}

static LogicalResult fail(const Twine &message) {
  llvm::errs() << "mw-eval: error: " << message << "\n";
  return failure();
}

/// Checks that every input argument has a static tensor or memref type the
/// evaluator holds (the planned arena argument is not an input).
static LogicalResult checkSignature(FunctionOpInterface func) {
  for (unsigned i : inputArguments(func)) {
    Type type = func.getArgumentTypes()[i];
    auto t = dyn_cast<ShapedType>(type);
    if (!t || !isa<RankedTensorType, MemRefType>(t) || !t.hasStaticShape() ||
        failed(elemKindOf(t.getElementType())))
      return fail("argument #" + Twine(i) + " ('" + argumentName(func, i) +
                  "') has type " + llvm::formatv("{0}", type).str() +
                  "; mw-eval takes static tensors or memrefs of f32, f16, "
                  "bf16, i32, i64, i8, f8E4M3FN");
  }
  return success();
}

/// Checks that no two of `names` (arguments' or results' file names) are
/// equal: an explicit mw.name may repeat another's default "argN"/"resultN",
/// and two tensors cannot share a name in a file.
static LogicalResult checkUniqueNames(ArrayRef<std::string> names,
                                      StringRef what) {
  llvm::StringMap<unsigned> seen;
  for (auto [i, name] : llvm::enumerate(names)) {
    auto [it, inserted] = seen.try_emplace(name, i);
    if (!inserted)
      return fail(what + " #" + Twine(it->second) + " and " + what + " #" +
                  Twine(i) + " are both named '" + name +
                  "'; rename one with mw.name");
  }
  return success();
}

/// The arguments of `func` bound from `inputsFiles`; notes on unused tensors
/// are printed for the files from index `notedFrom` on (the files every rank
/// shares are noted once).
static FailureOr<SmallVector<Tensor>>
loadInputs(FunctionOpInterface func, ArrayRef<std::string> inputsFiles,
           size_t notedFrom = 0) {
  // Read every file first; each tensor name maps to the last file having it.
  std::vector<mwrt::SafeTensors> files(inputsFiles.size());
  llvm::StringMap<unsigned> source;
  for (auto [k, path] : llvm::enumerate(inputsFiles)) {
    std::string error;
    if (!mwrt::readSafeTensors(path, files[k], error))
      return fail(error);
    for (const std::string &name : files[k].names())
      source[name] = k;
  }
  auto fileList = [&] {
    std::string s;
    for (auto [k, path] : llvm::enumerate(inputsFiles))
      s += (k ? ", " : "") + path;
    return s;
  };
  SmallVector<Tensor> args;
  llvm::StringSet<> used;
  for (unsigned i : inputArguments(func)) {
    auto type = cast<ShapedType>(func.getArgumentTypes()[i]);
    ElemKind kind = *elemKindOf(type.getElementType());
    std::string name = argumentName(func, i);
    std::string expected =
        std::string(elemKindName(kind)) + " " + shapeString(type.getShape());
    auto it = source.find(name);
    if (it == source.end())
      return fail("missing input '" + name + "' (argument #" + Twine(i) + ", " +
                  expected + ") in " + fileList());
    const std::string &path = inputsFiles[it->second];
    const mwrt::TensorData *d = files[it->second].find(name);
    used.insert(name);
    std::optional<ElemKind> got = fromDType(d->dtype);
    std::string have =
        std::string(mwrt::dtypeName(d->dtype)) + " " + shapeString(d->shape);
    if (!got || *got != kind ||
        d->shape != std::vector<int64_t>(type.getShape().begin(),
                                         type.getShape().end()))
      return fail("input '" + name + "' in " + path + " is " + have +
                  ", but argument #" + Twine(i) + " is " + expected);
    args.push_back(fromTensorData(*d, kind));
  }
  for (auto [k, file] : llvm::enumerate(files))
    for (const std::string &name : file.names())
      if (k >= notedFrom && !used.contains(name))
        llvm::errs() << "mw-eval: note: ignoring '" << name << "' in "
                     << inputsFiles[k] << ": no argument has that name\n";
  return args;
}

static LogicalResult writeTensors(const std::string &path,
                                  ArrayRef<std::string> names,
                                  ArrayRef<Tensor> tensors) {
  mwrt::SafeTensors file;
  std::string error;
  for (auto [name, t] : llvm::zip(names, tensors))
    if (!file.add(name, toTensorData(t), error))
      return fail(path + ": " + error);
  if (!mwrt::writeSafeTensors(path, file, error))
    return fail(error);
  return success();
}

/// fail() for main: prints the message and gives the exit status.
static int exitWithError(const Twine &message) {
  (void)fail(message);
  return 1;
}

/// Whether files and printed lines are per rank: --ranks was given (even
/// --ranks 1, so that scripts over N name files alike); without it mw-eval
/// behaves as before --ranks existed.
static bool perRankMode() { return numRanks.getNumOccurrences() > 0; }

/// The file of rank `rank` for `path`: every "%r" replaced by the rank, or
/// without "%r" ".rank<r>" inserted before the extension of the file name
/// (out.safetensors -> out.rank1.safetensors, out -> out.rank1).
static std::string rankPath(StringRef path, int64_t rank) {
  std::string r = std::to_string(rank);
  if (path.contains("%r")) {
    std::string s;
    for (size_t k = 0; k < path.size(); ++k) {
      if (path.substr(k).starts_with("%r")) {
        s += r;
        ++k;
      } else {
        s += path[k];
      }
    }
    return s;
  }
  StringRef ext = llvm::sys::path::extension(path);
  return (path.drop_back(ext.size()) + ".rank" + r + ext).str();
}

/// The path mw-eval writes for `path` on rank `rank`.
static std::string outputPath(StringRef path, int64_t rank) {
  return perRankMode() ? rankPath(path, rank) : path.str();
}

/// Whether argument `index` differs between ranks under --random-inputs: the
/// data (roles input and label), drawn from SEED + rank; all other arguments
/// (parameters, optimizer state, unannotated) are drawn from SEED on every
/// rank.
static bool isPerRankData(FunctionOpInterface func, unsigned index) {
  auto role = func.getArgAttrOfType<RoleAttr>(index, MWDialect::kRoleAttrName);
  return role &&
         (role.getValue() == Role::input || role.getValue() == Role::label);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Short diagnostics (no module dump) unless
  // --mlir-print-op-on-diagnostic=true; --help shows mw-eval's options.
  mw::registerMemwallContextCLOptions();
  mw::hideUnrelatedToolOptions({&category});
  cl::ParseCommandLineOptions(
      argc, argv,
      "mw-eval: run an mw function with Memwall's reference evaluator\n");

  if (inputFile.empty()) {
    llvm::errs() << "usage: mw-eval FILE.mlir [--entry NAME] [--ranks N]\n"
                    "               [--inputs IN.safetensors | --random-inputs "
                    "SEED]\n"
                    "               [--rank-inputs PATTERN] [--outputs "
                    "OUT.safetensors] [--print]\n"
                    "mw-eval: no input file (run mw-eval --help for every "
                    "option)\n";
    return 2;
  }
  if (!inputsFiles.empty() && randomSeed.getNumOccurrences())
    return exitWithError("--inputs and --random-inputs are exclusive");
  if (!rankInputsFiles.empty() && randomSeed.getNumOccurrences())
    return exitWithError("--rank-inputs and --random-inputs are exclusive");
  if (numRanks < 1)
    return exitWithError("--ranks must be at least 1, got " +
                         Twine(numRanks.getValue()));
  const int64_t n = numRanks;

  DialectRegistry registry;
  // mw programs, bufferized (--mw-bufferize) or planned (--mw-static-arena),
  // and the collectives of SPMD steps (--mw-zero).
  registry.insert<MWDialect, func::FuncDialect, arith::ArithDialect,
                  tensor::TensorDialect, memref::MemRefDialect,
                  bufferization::BufferizationDialect, mesh::MeshDialect>();
  MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mw::LongLineDiagnosticHandler longLines(&context);
  std::string error;
  auto buffer = openInputFile(inputFile, &error);
  if (!buffer)
    return exitWithError(error);
  if (failed(mw::checkInputNesting(*buffer, llvm::errs())))
    return 1;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  uint64_t errsBefore = llvm::errs().tell();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module) {
    mw::reportUnexplainedFailure("mw-eval", errsBefore);
    return 1;
  }

  FailureOr<FunctionOpInterface> func = findEntry(*module);
  if (failed(func) || failed(checkSignature(*func)))
    return 1;
  FailureOr<std::optional<CollectiveMesh>> mesh = collectiveMesh(*func);
  if (failed(mesh))
    return 1;
  if (*mesh && (*mesh)->ranks != n)
    return exitWithError("the step was compiled for " +
                         Twine((*mesh)->ranks) + " ranks (mesh @" +
                         (*mesh)->name + "), --ranks " + Twine(n) +
                         (perRankMode() ? "" : " (the default)"));

  SmallVector<std::string> resultNames, argNames;
  for (unsigned i = 0, e = func->getNumResults(); i < e; ++i)
    resultNames.push_back(resultName(*func, i));
  SmallVector<unsigned> inputs = inputArguments(*func);
  for (unsigned i : inputs)
    argNames.push_back(argumentName(*func, i));
  // Before evaluating, so that a clash fails fast and writes nothing.
  if ((!inputsFiles.empty() || !rankInputsFiles.empty() ||
       !saveInputsFile.empty()) &&
      failed(checkUniqueNames(argNames, "argument")))
    return 1;
  if (!outputsFile.empty() && failed(checkUniqueNames(resultNames, "result")))
    return 1;

  SmallVector<SmallVector<Tensor>> args(n);
  if (!inputsFiles.empty() || !rankInputsFiles.empty()) {
    for (int64_t r = 0; r < n; ++r) {
      // The shared files, then this rank's: a name takes its value from the
      // last file having it.
      SmallVector<std::string> paths(inputsFiles.begin(), inputsFiles.end());
      for (const std::string &pattern : rankInputsFiles)
        paths.push_back(rankPath(pattern, r));
      FailureOr<SmallVector<Tensor>> loaded =
          loadInputs(*func, paths, r == 0 ? 0 : inputsFiles.size());
      if (failed(loaded))
        return 1;
      args[r] = std::move(*loaded);
    }
  } else if (randomSeed.getNumOccurrences() || inputs.empty()) {
    SmallVector<Tensor> shared = randomInputs(*func, randomSeed);
    for (int64_t r = 0; r < n; ++r) {
      args[r] = shared;
      if (r == 0)
        continue;
      SmallVector<Tensor> own =
          randomInputs(*func, randomSeed + static_cast<uint64_t>(r));
      for (auto [k, index] : llvm::enumerate(inputs))
        if (isPerRankData(*func, index))
          args[r][k] = std::move(own[k]);
    }
  } else {
    return exitWithError("@" + func->getName() + " takes " +
                         Twine(inputs.size()) +
                         " arguments: give --inputs FILE or --random-inputs "
                         "SEED");
  }

  FailureOr<SmallVector<SmallVector<Tensor>>> results =
      evaluateRanks(*func, args);
  if (failed(results))
    return 1;

  // A failed write takes back the files written before it: a failed run
  // writes nothing.
  SmallVector<std::string> written;
  auto writeOrUndo = [&](const std::string &path, ArrayRef<std::string> names,
                         ArrayRef<Tensor> tensors) {
    if (succeeded(writeTensors(path, names, tensors))) {
      written.push_back(path);
      return success();
    }
    for (const std::string &w : written)
      (void)llvm::sys::fs::remove(w);
    return failure();
  };
  for (int64_t r = 0; r < n; ++r) {
    if (!saveInputsFile.empty() &&
        failed(writeOrUndo(outputPath(saveInputsFile, r), argNames, args[r])))
      return 1;
    if (!outputsFile.empty() &&
        failed(writeOrUndo(outputPath(outputsFile, r), resultNames,
                           (*results)[r])))
      return 1;
  }
  if (printOutputs)
    for (int64_t r = 0; r < n; ++r)
      for (auto [name, t] : llvm::zip(resultNames, (*results)[r]))
        printTensor(llvm::outs(),
                    perRankMode() ? "rank " + std::to_string(r) + ": " + name
                                  : name,
                    t);
  return 0;
}
