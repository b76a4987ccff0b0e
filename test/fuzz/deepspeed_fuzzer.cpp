//===- deepspeed_fuzzer.cpp - libFuzzer harness of the DeepSpeed reader ---===//
//
// The contract on any bytes: parseDeepSpeedConfig reports errors (each with
// a message), or returns a configuration whose stage is 0-3 and whose
// buckets are positive, and which the report writers print and serialize.
// The model facts vary with the first bytes, so "auto" and the batch
// arithmetic are exercised. Run by test/fuzz/run-fuzzers.sh under
// AddressSanitizer and UBSan.
//
//===----------------------------------------------------------------------===//

#include "memwall/Zero/DeepSpeedConfig.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace memwall::zero;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2)
    return 0;
  ModelFacts facts;
  facts.numParameters = int64_t(1) << (data[0] % 40);
  facts.ranks = 1 + data[1] % 16;
  if (data[0] & 0x80)
    facts.hiddenSize = 768;
  if (data[1] & 0x80) {
    facts.microBatchSize = 1 + data[1] % 8;
    facts.gradientAccumulation = 1 + data[0] % 4;
  }
  llvm::StringRef text(reinterpret_cast<const char *>(data) + 2, size - 2);
  DeepSpeedConfigResult result =
      parseDeepSpeedConfig(text, "fuzz.json", facts);
  std::string sink;
  llvm::raw_string_ostream os(sink);
  for (const ConfigDiagnostic &diagnostic : result.diagnostics)
    if (diagnostic.message.empty())
      std::abort(); // every diagnostic says something
  result.printDiagnostics(os);
  if (result.hasErrors())
    return 0;
  if (result.config.stage.value < 0 || result.config.stage.value > 3)
    std::abort();
  printZeroConfigReport(result.config, facts, os);
  os << zeroConfigToJson(result.config, facts);
  return 0;
}
