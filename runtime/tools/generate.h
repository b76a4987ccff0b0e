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
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>

/// A decimal integer in [0, max] (mw-run.cpp's, shared by both modes).
bool parseUnsignedArg(const std::string &text, uint64_t max, uint64_t &out);

/// mw-run's command-line grammar, shared by both modes (mw-run.cpp):
/// `-h`/`--help` prints `help` and gives -1; the one positional argument
/// goes to `positional`; every option is `--flag VALUE` or `--flag=VALUE`
/// (`withValue`) or a bare flag (`flags`, passed with an empty value), each
/// at most once, and goes to `option`. Returns 0, -1, or the first non-zero
/// status of `usage` (bad syntax; `context` ends the unknown-option message)
/// or of `option`.
int splitCommandLine(
    int argc, char **argv, const char *help,
    std::initializer_list<std::string_view> flags,
    std::initializer_list<std::string_view> withValue,
    const std::string &context,
    const std::function<int(const std::string &)> &usage,
    std::string &positional,
    const std::function<int(const std::string &, const std::string &)> &option);

#endif // MWRT_TOOLS_GENERATE_H
