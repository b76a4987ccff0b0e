//===- Passes.cpp - Memwall's pass pipelines ------------------------------===//
//
// Builds and registers the pipelines of Pipelines.h. --mw-train-pipeline
// takes --mw-static-arena's options without copying them: its option text
// goes to the pass's own parser, and --help lists the pass's options through
// a PassOptionsMirror.
//
//===----------------------------------------------------------------------===//

#include "memwall/Dialect/MW/Transforms/Pipelines.h"

#include "memwall/Dialect/MW/IR/MWOps.h"
#include "memwall/Dialect/MW/Transforms/Passes.h"
#include "memwall/Transforms/PassOptionsMirror.h"
#include "memwall/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;
using namespace mlir::mw;

void mlir::mw::buildBufferizePipeline(OpPassManager &pm, bool foldViews) {
  pm.addPass(createMwFormKernels());
  pm.addPass(createMwOneShotBufferize());
  if (foldViews)
    pm.addPass(createMwFoldViews());
}

/// --mw-train-pipeline around a configured --mw-static-arena pass.
/// --mw-sink's search runs on the order --mw-autodiff made, then the updates
/// move up (sinking after them instead lands some steps in a worse local
/// optimum: docs/training.md), and --mw-fuse groups the updates that stand
/// together.
static void addTrainPipeline(OpPassManager &pm,
                             std::unique_ptr<Pass> staticArena,
                             const TrainPipelineFlags &flags) {
  if (flags.chunkLoss > 0) {
    MwChunkLossOptions chunkOptions;
    chunkOptions.chunks = flags.chunkLoss;
    chunkOptions.deferWeightGrad = flags.deferWeightGrad;
    // Its peaks as the kernels --mw-fuse forms below will hold them.
    chunkOptions.fused = flags.fuse;
    pm.addPass(createMwChunkLoss(chunkOptions));
  }
  if (flags.fuse)
    pm.addPass(createMwSink());
  if (flags.hoistUpdates)
    pm.addPass(createMwHoistUpdates());
  if (flags.fuse)
    pm.addPass(createMwFuse());
  buildBufferizePipeline(pm);
  pm.addPass(std::move(staticArena));
  pm.addNestedPass<func::FuncOp>(createMwVerifyPlan());
}

void mlir::mw::buildTrainPipeline(OpPassManager &pm,
                                  const MwStaticArenaOptions &arenaOptions,
                                  const TrainPipelineFlags &flags) {
  addTrainPipeline(pm, createMwStaticArena(arenaOptions), flags);
}

/// Takes the pipeline's own options out of --mw-train-pipeline's option
/// text: the booleans `fuse`, `hoist-updates` and `defer-weight-grad` (each
/// as `name`, `name=true`, `name=false`, `name=1` or `name=0`) and the count
/// `chunk-loss=N`; the rest is --mw-static-arena's.
static FailureOr<TrainPipelineFlags>
takePipelineFlags(std::string &options,
                  function_ref<LogicalResult(const Twine &)> errorHandler) {
  SmallVector<StringRef> words;
  StringRef(options).split(words, ' ', -1, /*KeepEmpty=*/false);
  std::string rest;
  TrainPipelineFlags flags;
  for (StringRef word : words) {
    auto [key, value] = word.split('=');
    if (key == "chunk-loss") {
      if (value.getAsInteger(10, flags.chunkLoss) || flags.chunkLoss < 0) {
        (void)errorHandler("mw-train-pipeline: chunk-loss=" + value +
                           " is not a count of chunks (0: off)");
        return failure();
      }
      continue;
    }
    bool *flag = key == "fuse"                ? &flags.fuse
                 : key == "hoist-updates"     ? &flags.hoistUpdates
                 : key == "defer-weight-grad" ? &flags.deferWeightGrad
                                              : nullptr;
    if (!flag) {
      rest += (rest.empty() ? "" : " ") + word.str();
      continue;
    }
    if (value.empty() || value == "true" || value == "1")
      *flag = true;
    else if (value == "false" || value == "0")
      *flag = false;
    else {
      (void)errorHandler("mw-train-pipeline: " + key + "=" + value +
                         " is not a boolean (true or false)");
      return failure();
    }
  }
  if (flags.deferWeightGrad && flags.chunkLoss == 0) {
    (void)errorHandler("mw-train-pipeline: defer-weight-grad is an option "
                       "of --mw-chunk-loss; give chunk-loss=N with it");
    return failure();
  }
  options = rest;
  return flags;
}

namespace {
/// --mw-bufferize's one option.
struct BufferizePipelineOptions
    : public PassPipelineOptions<BufferizePipelineOptions> {
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Run --mw-fuse first, so that fused "
                                   "kernels are formed and bufferized"),
                    llvm::cl::init(false)};
  Option<bool> foldViews{
      *this, "fold-views",
      llvm::cl::desc("Run --mw-fold-views last, so that kernels that only "
                     "transpose, slice or reshape become strided views"),
      llvm::cl::init(true)};
};
} // namespace

void mlir::mw::registerMWPipelines() {
  PassPipelineRegistration<BufferizePipelineOptions>(
      "mw-bufferize",
      "Bufferize an mw program: --mw-fuse (with fuse=true), "
      "--mw-form-kernels, --mw-one-shot-bufferize (One-Shot Bufferize across "
      "function boundaries, identity-layout memrefs, in-place decisions in "
      "linear time) and --mw-fold-views; every transient tensor "
      "becomes one memref.alloc or a view, ready for --mw-static-arena",
      [](OpPassManager &pm, const BufferizePipelineOptions &options) {
        if (options.fuse)
          pm.addPass(createMwFuse());
        buildBufferizePipeline(pm, options.foldViews);
      });
  registerPassPipeline(
      "mw-train-pipeline",
      "Compile a step for the runtime: --mw-chunk-loss (with "
      "chunk-loss=N), --mw-sink (with fuse=true), "
      "--mw-hoist-updates (unless hoist-updates=false), --mw-fuse (with "
      "fuse=true), "
      "--mw-bufferize, --mw-static-arena (with this pipeline's other "
      "options, which are that pass's) and --mw-verify-plan; the result is "
      "what mw-translate --mw-to-plan takes",
      [](OpPassManager &pm, StringRef optionText,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        std::string options = optionText.str();
        FailureOr<TrainPipelineFlags> flags =
            takePipelineFlags(options, errorHandler);
        if (failed(flags))
          return failure();
        std::unique_ptr<Pass> staticArena = createMwStaticArena();
        if (failed(staticArena->initializeOptions(options, errorHandler)))
          return failure();
        addTrainPipeline(pm, std::move(staticArena), *flags);
        return success();
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)>
             optionHandler) {
        PassOptionsMirror options;
        options.addFlag("fuse", "Run --mw-sink and --mw-fuse first, so the "
                                "plan has fused kernels and a memory-aware "
                                "order (default false: mw-translate exports "
                                "fused kernels only with the runtime's support "
                                "for them)");
        options.addFlag("hoist-updates",
                        "Run --mw-hoist-updates first, so each optimizer "
                        "update runs as soon as its gradient is final "
                        "(default true; hoist-updates=false keeps every "
                        "update after the backward pass)");
        options.addCount("chunk-loss",
                         "Run --mw-chunk-loss=chunks=N first, so the LM "
                         "head's logits, loss and their gradients are "
                         "computed N chunks of rows at a time (default 0: "
                         "off; the loss and the head's weight gradient then "
                         "sum in another order)");
        options.addFlag("defer-weight-grad",
                        "With chunk-loss=N: make a tied head's weight "
                        "gradient where the embedding's gradient is added "
                        "to it, recomputing the chunks' logits, when that "
                        "lowers the peak (default false: one more logits "
                        "product per step)");
        mirrorMwStaticArenaOptions(options);
        optionHandler(options);
      });
}
