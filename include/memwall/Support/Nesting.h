//===- Nesting.h - Bracket depth of text before a recursive parser -*- C++ -*-===//
//
// MLIR's parser and llvm::json recurse once per level of nesting, so a text
// of a few kilobytes of `[[[[...` or `tuple<tuple<...` runs them out of stack
// (a segmentation fault; found by test/fuzz/ir_fuzzer). Memwall's readers
// measure the nesting first, in one pass without recursion, and refuse a
// text nested deeper than kMaxNesting with its line and column. Real inputs
// nest a few levels (a DeepSpeed configuration 4; planned gpt2-small, bert
// and GPT-3-width steps 6, measured);
// clang refuses brackets nested deeper than 256 by default as well
// (-fbracket-depth). Header-only: the DeepSpeed reader, the tools and the
// fuzz harnesses share it without another library.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_SUPPORT_NESTING_H
#define MEMWALL_SUPPORT_NESTING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

#include <cctype>
#include <cstddef>
#include <optional>
#include <string>

namespace memwall {

/// The deepest nesting Memwall's readers accept.
inline constexpr unsigned kMaxNesting = 256;

/// The syntax whose brackets are counted.
enum class NestingSyntax {
  /// `(`, `[`, `{` and `<` open; `)`, `]`, `}` and `>` close, except the `>`
  /// of `->` and `>=` (and the `<` of `<=`); `"..."` strings with backslash
  /// escapes and `//` comments (to a '\n' or '\r', as MLIR's lexer ends
  /// them) are skipped. A run of minus signs (blanks between them allowed)
  /// is as deep as it is long: the affine parser recurses once per unary
  /// minus. So is a sum of terms inside `affine_map<...>` or
  /// `affine_set<...>`: a level per `+` or `-`.
  Mlir,
  /// `[` and `{` open, `]` and `}` close; `"..."` strings skipped.
  Json,
};

/// Where a text first nests deeper than its limit.
struct NestingExcess {
  size_t offset = 0;  // of the character that goes one level too deep
  unsigned line = 1;  // 1-based
  unsigned column = 1; // 1-based, in bytes
};

/// The first bracket (or minus sign, or term of an affine sum) of `text`
/// that opens level `limit + 1`, or nothing when the text nests at most
/// `limit` deep. Unbalanced text is not an error here (the parser reports
/// it): a close without an open is ignored.
inline std::optional<NestingExcess>
findExcessNesting(llvm::StringRef text, NestingSyntax syntax,
                  unsigned limit = kMaxNesting) {
  const bool mlir = syntax == NestingSyntax::Mlir;
  unsigned depth = 0, line = 1;
  size_t lineStart = 0;
  unsigned minusRun = 0;
  // Inside `affine_map<...>` or `affine_set<...>` (from its `<`, level
  // `affineDepth`; 0 outside): the binary `+` and `-` seen. The affine
  // parser recurses once per term of a sum (100000 terms crashed mw-opt).
  unsigned affineDepth = 0, terms = 0;
  auto excess = [&](size_t i) {
    return NestingExcess{i, line, static_cast<unsigned>(i - lineStart + 1)};
  };
  for (size_t i = 0, e = text.size(); i < e; ++i) {
    const char c = text[i];
    const char next = i + 1 < e ? text[i + 1] : '\0';
    switch (c) {
    case '\n':
      ++line;
      lineStart = i + 1;
      continue; // a blank: does not end a run of minus signs
    case '"':
      // To the closing quote; a newline inside is counted.
      for (++i; i < e && text[i] != '"'; ++i) {
        if (text[i] == '\\')
          ++i;
        else if (text[i] == '\n') {
          ++line;
          lineStart = i + 1;
        }
      }
      break;
    case '/':
      // To the end of the line, as MLIR's lexer reads it: a '\r' ends a
      // comment too (and what follows it is parsed).
      if (mlir && next == '/') {
        while (i + 1 < e && text[i + 1] != '\n' && text[i + 1] != '\r')
          ++i;
        continue; // a comment is a blank
      }
      break;
    case ' ':
    case '\t':
    case '\r':
    case '\0': // MLIR's lexer skips a NUL inside the buffer as a blank
      continue; // blanks do not end a run of minus signs
    case '-':
      // Each sign of `- - - d0` is one more level of the affine parser's
      // recursion; no MLIR text repeats it (`->` and `-1` have one).
      if (mlir && ++minusRun > limit)
        return excess(i);
      if (mlir && affineDepth && next != '>' && ++terms > limit)
        return excess(i);
      continue;
    case '+':
      if (mlir && affineDepth && ++terms > limit)
        return excess(i);
      break;
    case 'a':
      if (mlir && !affineDepth &&
          (text.substr(i).starts_with("affine_map<") ||
           text.substr(i).starts_with("affine_set<")) &&
          (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) ||
                       text[i - 1] == '_' || text[i - 1] == '.'))) {
        affineDepth = depth + 1;
        terms = 0;
        i += 9; // to the `p` or `t` before the `<`, which opens the level
      }
      break;
    default: {
      const bool arrow = i > 0 && text[i - 1] == '-';
      const bool opens =
          c == '[' || c == '{' ||
          (mlir && (c == '(' || (c == '<' && next != '=')));
      const bool closes =
          c == ']' || c == '}' ||
          (mlir && (c == ')' || (c == '>' && next != '=' && !arrow)));
      if (opens && ++depth > limit)
        return excess(i);
      if (closes && depth > 0 && --depth < affineDepth)
        affineDepth = 0;
      break;
    }
    }
    minusRun = 0;
  }
  return std::nullopt;
}

/// The message for an excess: "nested more than N levels deep: ...".
inline std::string describeExcessNesting(unsigned limit = kMaxNesting) {
  return ("nested more than " + llvm::Twine(limit) +
          " levels deep: refused before parsing (the parser recurses once "
          "per level and would run out of stack)")
      .str();
}

} // namespace memwall

#endif // MEMWALL_SUPPORT_NESTING_H
