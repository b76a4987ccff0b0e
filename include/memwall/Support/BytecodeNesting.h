//===- BytecodeNesting.h - MLIR bytecode measured before its reader -*- C++
//-*-===//
//
// MLIR 19's bytecode reader trusts its input where text's parser cannot be
// fooled: it resolves an attribute or type entry by recursing into the
// entries it refers to (an array of an array of ... 100000 deep is a 580 KB
// file that overflows the stack; an array that contains itself recurses
// without end), the verifier and the printer recurse once per level of
// nested regions (which the reader itself reads on a heap stack), and
// counts read from the file size vectors before the data behind them is
// checked (`reserve(2^60)` aborts). LLVM fixed the first later (a deferred
// worklist in AttrTypeReader); Debian's MLIR 19 does not have it.
//
// findBytecodeProblem walks the file the way MLIR 19's reader does, without
// recursion and without building anything, and names the first entry or
// operation that would take the reader, the verifier or the printer down
// one of those paths: entries that refer to themselves, attributes, types
// and regions nested deeper than kMaxNesting, text entries whose brackets
// nest deeper (memwall/Support/Nesting.h), counts larger than the bytes
// that follow them could hold, and a top-level block with arguments. The
// reader also builds builtin attributes and types with `get`, without their
// verifiers, so what a release build then accepts silently is checked here
// too: dense data against its type, type sizes, element types and layouts,
// duplicate dictionary names. It decodes the builtin dialect's custom
// encodings (mlir/IR/BuiltinDialectBytecode.td), the only ones registered
// in Memwall's tools (a unit test checks that no other dialect of theirs
// has a bytecode interface). What it does not understand (a newer version,
// a malformed section) it leaves to the reader, which refuses it before
// reaching any of those paths; it does not validate the contents of
// resources or operation properties.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_SUPPORT_BYTECODENESTING_H
#define MEMWALL_SUPPORT_BYTECODENESTING_H

#include "memwall/Support/Nesting.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace memwall {

/// What would crash MLIR 19's bytecode reader, or its verifier or printer
/// afterwards, and where.
struct BytecodeProblem {
  /// The byte of the file it starts at.
  size_t offset = 0;
  /// One sentence, without the file name: "attribute 7 refers to itself".
  std::string message;
};

/// The first problem of the MLIR bytecode `file` (which starts with the
/// magic `ML\xefR`), or nothing when MLIR 19's reader may read it: every
/// nesting at most `limit` deep.
std::optional<BytecodeProblem>
findBytecodeProblem(llvm::ArrayRef<uint8_t> file, unsigned limit = kMaxNesting);

} // namespace memwall

#endif // MEMWALL_SUPPORT_BYTECODENESTING_H
