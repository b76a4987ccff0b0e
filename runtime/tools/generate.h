//===- generate.h - mw-run --generate ----------------------------*- C++ -*-===//
//
// mw-run's serving mode (docs/inference.md, "Serving"): a decode plan and a
// prefill plan over one set of weights and one KV cache, a block manager,
// continuous batching and sampling.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_TOOLS_GENERATE_H
#define MWRT_TOOLS_GENERATE_H

/// Whether argv asks for --generate.
bool wantsGenerate(int argc, char **argv);
/// Runs mw-run --generate; returns the exit status (0, 1 run failed, 2 bad
/// command line).
int generateMain(int argc, char **argv);

#include <cstdint>
#include <string>

/// A decimal integer in [0, max] (mw-run.cpp's, shared by both modes).
bool parseUnsignedArg(const std::string &text, uint64_t max, uint64_t &out);

#endif // MWRT_TOOLS_GENERATE_H
