//===- RematStrategy.h - The strategies of --mw-remat -----------*- C++ -*-===//
//
// The enum behind `--mw-remat=strategy=...` (Passes.td declares the option
// with its spellings), included by Passes.h before the generated pass
// declarations. The option's parser is llvm::cl's enum parser with one
// change: a value it does not know is an error that names the values it does.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_DIALECT_MW_TRANSFORMS_REMATSTRATEGY_H
#define MEMWALL_DIALECT_MW_TRANSFORMS_REMATSTRATEGY_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace mlir::mw {

/// How --mw-remat chooses the saved activations it keeps (docs/remat.md).
enum class RematStrategy {
  Auto,      ///< `none` without a budget; else the cheapest candidate that fits
  None,      ///< keep every saved activation
  All,       ///< keep none (only the function's arguments)
  EveryK,    ///< keep the outputs of every k-th transformer block
  Sqrt,      ///< Chen et al. 2016: every ceil(sqrt(n))-th articulation value
  Selective, ///< Megatron-LM: drop the core attention
  Optimal,   ///< Checkmate's MILP on the fixed op order
  Revolve,   ///< Griewank's binomial checkpointing over the blocks
};

/// The spelling of `strategy` in the option (`every-k`), as written into
/// the `mw.remat.strategy` attribute.
llvm::StringRef stringifyRematStrategy(RematStrategy strategy);

} // namespace mlir::mw

namespace llvm::cl {

/// llvm::cl's parser<DataType> for enums, with an error naming the allowed
/// values (the generic one says only "Cannot find option named 'x'!").
template <>
class parser<mlir::mw::RematStrategy> : public generic_parser_base {
protected:
  class OptionInfo : public GenericOptionInfo {
  public:
    OptionInfo(StringRef name, mlir::mw::RematStrategy v, StringRef helpStr)
        : GenericOptionInfo(name, helpStr), V(v) {}
    OptionValue<mlir::mw::RematStrategy> V;
  };
  SmallVector<OptionInfo, 8> Values;

public:
  parser(Option &o) : generic_parser_base(o) {}

  using parser_data_type = mlir::mw::RematStrategy;

  unsigned getNumOptions() const override { return unsigned(Values.size()); }
  StringRef getOption(unsigned n) const override { return Values[n].Name; }
  StringRef getDescription(unsigned n) const override {
    return Values[n].HelpStr;
  }
  const GenericOptionValue &getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  /// True on error.
  bool parse(Option &o, StringRef argName, StringRef arg,
             mlir::mw::RematStrategy &v) {
    StringRef argVal = Owner.hasArgStr() ? arg : argName;
    for (const OptionInfo &info : Values)
      if (info.Name == argVal) {
        v = info.V.getValue();
        return false;
      }
    std::string expected;
    for (auto [i, info] : llvm::enumerate(Values)) {
      if (i)
        expected += i + 1 == Values.size() ? " or " : ", ";
      expected += info.Name.str();
    }
    return o.error("mw-remat: unknown strategy '" + argVal + "' (expected " +
                   expected + ")");
  }

  template <class DT>
  void addLiteralOption(StringRef name, const DT &v, StringRef helpStr) {
    Values.push_back(
        OptionInfo(name, static_cast<mlir::mw::RematStrategy>(v), helpStr));
    AddLiteralOption(Owner, name);
  }

  void removeLiteralOption(StringRef name) {
    unsigned n = findOption(name);
    assert(n != Values.size() && "Option not found!");
    Values.erase(Values.begin() + n);
  }
};

} // namespace llvm::cl

#endif // MEMWALL_DIALECT_MW_TRANSFORMS_REMATSTRATEGY_H
