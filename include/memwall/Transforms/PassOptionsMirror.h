//===- PassOptionsMirror.h - A pass's options in a pipeline ----*- C++ -*-===//
//
// A pipeline that takes the options of one of its passes (--mw-train-pipeline
// takes --mw-static-arena's) forwards its option text to that pass, which
// parses, defaults and checks it (Pass::initializeOptions), so the pipeline
// copies nothing. MLIR 19 prints a pipeline's options in --help only from a
// PassOptions object, and a pass keeps its own private: a PassOptionsMirror
// is that object, holding for each mirrored option a new option with the
// pass's flag, description, default and value type, read from an instance of
// the pass. It serves --help only; the values are parsed by the pass.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_TRANSFORMS_PASSOPTIONSMIRROR_H
#define MEMWALL_TRANSFORMS_PASSOPTIONSMIRROR_H

#include "mlir/Pass/PassOptions.h"

#include <memory>
#include <vector>

namespace mlir::mw {
/// Pipeline options that repeat, for --help, options of a pass.
class PassOptionsMirror : public PassPipelineOptions<PassOptionsMirror> {
public:
  /// Adds an option like `option` (a pass's): same flag, description,
  /// value name and default.
  template <typename DataType, typename Parser>
  void
  mirror(const ::mlir::detail::PassOptions::Option<DataType, Parser> &option) {
    auto copy = std::make_unique<Option<DataType, Parser>>(
        *this, option.ArgStr, llvm::cl::desc(option.HelpStr),
        llvm::cl::init(option.getDefault().getValue()));
    if (!option.ValueStr.empty())
      copy->setValueStr(option.ValueStr);
    mirrored.push_back(std::move(copy));
  }

  /// Adds a boolean option of the pipeline's own (not a pass's), for
  /// --help; the pipeline parses it itself.
  void addFlag(llvm::StringRef flag, llvm::StringRef description) {
    mirrored.push_back(std::make_unique<Option<bool>>(
        *this, flag, llvm::cl::desc(description), llvm::cl::init(false)));
  }

  /// Adds an integer option of the pipeline's own, for --help.
  void addCount(llvm::StringRef flag, llvm::StringRef description) {
    mirrored.push_back(std::make_unique<Option<int64_t>>(
        *this, flag, llvm::cl::desc(description), llvm::cl::init(0)));
  }

private:
  std::vector<std::unique_ptr<llvm::cl::Option>> mirrored;
};

/// Mirrors every option of --mw-static-arena into `into`.
void mirrorMwStaticArenaOptions(PassOptionsMirror &into);
} // namespace mlir::mw

#endif // MEMWALL_TRANSFORMS_PASSOPTIONSMIRROR_H
