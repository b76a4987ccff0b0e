//===- plan_fuzzer.cpp - libFuzzer harness of the plan loader -------------===//
//
// The loader's contract on any bytes: reject them with a message, or load a
// plan that passes its own checks (every operand inside its buffer, names
// unique, results consistent with the persistents they update), which the
// harness then re-checks independently: a loaded plan must describe every
// kernel, every operand's persistent index must be in range, and every
// value a fused kernel's program refers to must exist. Run by
// runtime/fuzz/run-sanitized.sh under AddressSanitizer and UBSan.
//
//===----------------------------------------------------------------------===//

#include "mwrt/runtime.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

using namespace mwrt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::shared_ptr<const Plan> plan;
  if (Plan::parse(data, size, plan, "fuzz.mwplan") != MWRT_OK) {
    if (!mwrt_last_error()[0])
      std::abort(); // a rejection always says why
    return 0;
  }
  auto check = [&](const OperandDesc &o) {
    if (!o.inArena &&
        (o.persistent < 0 ||
         o.persistent >= static_cast<int>(plan->persistents().size())))
      std::abort();
  };
  for (size_t k = 0; k < plan->kernels().size(); ++k) {
    if (plan->describeKernel(k).empty())
      std::abort();
    for (const OperandDesc &o : plan->kernels()[k].ins)
      check(o);
    for (const OperandDesc &o : plan->kernels()[k].outs)
      check(o);
    // A fused kernel's program: every reference names a kernel input or an
    // earlier instruction's result, one value yielded per output.
    const auto &program = plan->kernels()[k].program;
    if (!program)
      continue;
    auto ref = [&](const FusedValueRef &v, size_t before) {
      bool ok = v.instruction < 0
                    ? v.index >= 0 &&
                          v.index < static_cast<int>(plan->kernels()[k].ins.size())
                    : static_cast<size_t>(v.instruction) < before &&
                          v.index >= 0 &&
                          static_cast<size_t>(v.index) <
                              program->instructions[v.instruction].shapes.size();
      if (!ok)
        std::abort();
    };
    for (size_t i = 0; i < program->instructions.size(); ++i)
      for (const FusedValueRef &v : program->instructions[i].operands)
        ref(v, i);
    if (program->yields.size() != plan->kernels()[k].outs.size())
      std::abort();
    for (const FusedValueRef &v : program->yields)
      ref(v, program->instructions.size());
  }
  for (const ResultDesc &r : plan->results())
    check(r.value);
  return 0;
}
