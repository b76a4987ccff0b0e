//===- NestingTest.cpp - The bracket depth readers check before parsing ---===//
//
// memwall/Support/Nesting.h: what counts as a level in MLIR text and in
// JSON, what does not (strings, comments, `->`, `>=`), and where the excess
// is reported.
//
//===----------------------------------------------------------------------===//

#include "memwall/Support/Nesting.h"

#include <gtest/gtest.h>

#include <string>

using memwall::findExcessNesting;
using memwall::NestingSyntax;

namespace {

std::string repeat(const std::string &s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += s;
  return out;
}

TEST(Nesting, EveryBracketKindOfMlirCounts) {
  for (const char *open : {"(", "[", "{", "<"}) {
    std::string text = repeat(open, 3);
    EXPECT_FALSE(findExcessNesting(text, NestingSyntax::Mlir, 3)) << open;
    std::optional<memwall::NestingExcess> deep =
        findExcessNesting(text + open, NestingSyntax::Mlir, 3);
    ASSERT_TRUE(deep) << open;
    EXPECT_EQ(deep->offset, 3u);
    EXPECT_EQ(deep->line, 1u);
    EXPECT_EQ(deep->column, 4u);
  }
}

TEST(Nesting, ClosingBracketsGiveTheLevelBack) {
  // Ten levels, one after the other: never more than one deep.
  EXPECT_FALSE(findExcessNesting(repeat("tensor<4xf32> ", 10),
                                 NestingSyntax::Mlir, 1));
  EXPECT_FALSE(findExcessNesting(repeat("([{}])", 10), NestingSyntax::Mlir, 3));
  EXPECT_TRUE(findExcessNesting("([{<>}])([{<", NestingSyntax::Mlir, 3));
}

TEST(Nesting, ArrowsAndComparisonsAreNotBrackets) {
  // `->` and `>=` do not close; `<=` does not open.
  std::string arrows = "func.func private @f(tensor<4xf32>) -> (tensor<4xf32>)";
  EXPECT_FALSE(findExcessNesting(arrows, NestingSyntax::Mlir, 2));
  std::string set = "#set = affine_set<(d0) : (d0 - 10 >= 0, d0 <= 4)>";
  EXPECT_FALSE(findExcessNesting(set, NestingSyntax::Mlir, 2));
  // Were `->` a close, this would fall back to one level and pass.
  EXPECT_TRUE(findExcessNesting("<<<->", NestingSyntax::Mlir, 2));
}

TEST(Nesting, StringsAndCommentsAreSkipped) {
  std::string deep = repeat("[", 100);
  EXPECT_FALSE(findExcessNesting("\"" + deep + "\"", NestingSyntax::Mlir, 1));
  EXPECT_FALSE(findExcessNesting("// " + deep + "\n{}", NestingSyntax::Mlir, 1));
  // An escaped quote does not end the string.
  EXPECT_FALSE(
      findExcessNesting("\"\\\"" + deep + "\"", NestingSyntax::Mlir, 1));
  EXPECT_FALSE(findExcessNesting("\"" + deep + "\"", NestingSyntax::Json, 1));
}

TEST(Nesting, MinusSignsInARowAreLevels) {
  // The affine parser recurses once per unary minus; blanks, newlines and
  // comments between the signs do not end the run.
  EXPECT_FALSE(findExcessNesting("(- - -d0)", NestingSyntax::Mlir, 3));
  std::optional<memwall::NestingExcess> deep =
      findExcessNesting("(- -\n -d0)", NestingSyntax::Mlir, 2);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->line, 2u);
  EXPECT_EQ(deep->column, 2u);
  EXPECT_TRUE(findExcessNesting("- -// c\n-", NestingSyntax::Mlir, 2));
  // Anything else ends it: `-1 -> -2` and `a - b - c` stay one deep.
  EXPECT_FALSE(findExcessNesting(repeat("x -> -1 - y ", 100),
                                 NestingSyntax::Mlir, 1));
  // Not in JSON.
  EXPECT_FALSE(findExcessNesting(repeat("-", 100), NestingSyntax::Json, 1));
}

TEST(Nesting, CommentsEndWhereMlirsLexerEndsThem) {
  // A '\r' ends a `//` comment for MLIR's lexer, and a NUL inside the
  // buffer is a blank: what follows is parsed (ir_fuzzer's second find).
  std::string deep = repeat("[", 10);
  EXPECT_TRUE(findExcessNesting("// c\r" + deep, NestingSyntax::Mlir, 5));
  EXPECT_TRUE(findExcessNesting(std::string("// c\r\0\0", 7) + deep,
                                NestingSyntax::Mlir, 5));
  EXPECT_FALSE(findExcessNesting("// c " + deep, NestingSyntax::Mlir, 5));
  // NULs between minus signs do not end their run.
  EXPECT_TRUE(findExcessNesting(std::string("-\0-\0-", 5),
                                NestingSyntax::Mlir, 2));
}

TEST(Nesting, AffineSumsCountTheirTerms) {
  // The affine parser recurses once per term of a sum: inside
  // affine_map<...> and affine_set<...> each binary + or - is a level.
  std::string sum = "#m = affine_map<(d0, d1) -> (d0" +
                    repeat(" + d1 - d0", 10) + ")>";
  EXPECT_FALSE(findExcessNesting(sum, NestingSyntax::Mlir, 20));
  std::optional<memwall::NestingExcess> deep =
      findExcessNesting(sum, NestingSyntax::Mlir, 19);
  ASSERT_TRUE(deep);
  EXPECT_EQ(sum[deep->offset], '-');
  // The terms of one map only: the count starts again at the next.
  EXPECT_FALSE(findExcessNesting(sum + "\n" + sum, NestingSyntax::Mlir, 20));
  // Outside an affine attribute + and - are not terms.
  EXPECT_FALSE(findExcessNesting(repeat("1.0e+05, -2 + 3 ", 50),
                                 NestingSyntax::Mlir, 20));
  EXPECT_FALSE(findExcessNesting("my_affine_map<" + repeat("+", 50) + ">",
                                 NestingSyntax::Mlir, 20));
  EXPECT_TRUE(findExcessNesting("affine_set<(d0) : (" + repeat("d0 + ", 30) +
                                    "1 >= 0)>",
                                NestingSyntax::Mlir, 20));
}

TEST(Nesting, ReportsTheLineAndColumn) {
  std::optional<memwall::NestingExcess> deep =
      findExcessNesting("{\n  \"a\\n{\":\n   [[", NestingSyntax::Json, 2);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->line, 3u);
  EXPECT_EQ(deep->column, 5u);
  // A newline inside a string still counts as a line.
  deep = findExcessNesting("\"a\nb\" ((", NestingSyntax::Mlir, 1);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->line, 2u);
  EXPECT_EQ(deep->column, 5u);
}

TEST(Nesting, JsonCountsOnlyArraysAndObjects) {
  EXPECT_FALSE(findExcessNesting(repeat("(", 10) + repeat("<", 10),
                                 NestingSyntax::Json, 0));
  // Four levels: the object, its array, the object in it, its array.
  EXPECT_FALSE(findExcessNesting("{\"a\": [1, {\"b\": []}]}",
                                 NestingSyntax::Json, 4));
  EXPECT_TRUE(findExcessNesting("{\"a\": [1, {\"b\": []}]}",
                                NestingSyntax::Json, 3));
  // Unbalanced closes are the parser's to report, not a level below zero.
  EXPECT_FALSE(findExcessNesting("]]]]{}", NestingSyntax::Json, 1));
}

TEST(Nesting, TheDefaultLimitIs256) {
  EXPECT_FALSE(findExcessNesting(repeat("[", 256), NestingSyntax::Json));
  std::optional<memwall::NestingExcess> deep =
      findExcessNesting(repeat("[", 257), NestingSyntax::Json);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->offset, 256u);
}

} // namespace
