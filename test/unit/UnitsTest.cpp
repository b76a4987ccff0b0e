//===- UnitsTest.cpp - Byte sizes and the named devices -------------------===//
//
// parseByteSize and the GB/GiB formatters of memwall/Analysis/Units.h (GB is
// 10^9, GiB 2^30, everywhere), and the devices of the target table the
// memory report's verdict checks steps against.
//
//===----------------------------------------------------------------------===//

#include "memwall/Analysis/Targets.h"
#include "memwall/Analysis/Units.h"

#include <gtest/gtest.h>

using namespace mlir::mw;

namespace {

TEST(Units, ParsesDecimalAndBinaryUnits) {
  EXPECT_EQ(parseByteSize("123"), 123);
  EXPECT_EQ(parseByteSize("123B"), 123);
  EXPECT_EQ(parseByteSize("2KB"), 2000);
  EXPECT_EQ(parseByteSize("2KiB"), 2048);
  EXPECT_EQ(parseByteSize("500MB"), 500'000'000);
  EXPECT_EQ(parseByteSize("16GB"), 16'000'000'000);
  EXPECT_EQ(parseByteSize("16GiB"), 17'179'869'184);
  EXPECT_EQ(parseByteSize("1.5GiB"), 1'610'612'736);
  EXPECT_EQ(parseByteSize("16160MiB"), 16'944'988'160);
  EXPECT_EQ(parseByteSize("2TB"), 2'000'000'000'000);
  EXPECT_EQ(parseByteSize("1TiB"), 1'099'511'627'776);
  // Case-insensitive units, a space before the unit, fractions rounded down.
  EXPECT_EQ(parseByteSize("16 gb"), 16'000'000'000);
  EXPECT_EQ(parseByteSize(" 36.4MB "), 36'400'000);
  EXPECT_EQ(parseByteSize("1.9"), 1);
}

TEST(Units, RejectsMalformedSizes) {
  for (const char *bad : {"", "abc", "GB", "0", "0GB", "-1GB", "16XB", "16 G",
                          "1e9", "1.2.3MB", "0.1", "10000000TB"})
    EXPECT_EQ(parseByteSize(bad), std::nullopt) << "'" << bad << "'";
}

TEST(Units, FormatsGBAndGiB) {
  EXPECT_EQ(formatDecimalBytes(999), "999 B");
  EXPECT_EQ(formatDecimalBytes(16'000'000'000), "16.00 GB");
  EXPECT_EQ(formatBinaryBytes(16'000'000'000), "14.90 GiB");
  EXPECT_EQ(formatBinaryBytes(1023), "1023 B");
  EXPECT_EQ(formatBinaryBytes(33'554'432), "32.00 MiB");
  EXPECT_EQ(formatBothBytes(80'000'000'000), "80.00 GB = 74.51 GiB");
  EXPECT_EQ(formatBothBytes(-162'200), "-162.20 KB = -158.40 KiB");
  EXPECT_EQ(formatBothBytes(12), "12 B");
}

TEST(Targets, NamedDevicesCoverTheMemoryClasses) {
  struct Expected {
    const char *name;
    int64_t gb;
    bool bf16;
  } expected[] = {{"V100-16GB", 16, false}, {"RTX4090", 24, true},
                  {"V100-32GB", 32, false}, {"A100-40GB", 40, true},
                  {"A6000", 48, true},      {"L40S", 48, true},
                  {"A100-80GB", 80, true},  {"H100-80GB", 80, true},
                  {"H200-141GB", 141, true}, {"B200-192GB", 192, true}};
  for (const Expected &e : expected) {
    const Target *t = lookupTarget(e.name);
    ASSERT_NE(t, nullptr) << e.name;
    EXPECT_EQ(t->memoryBytes, e.gb * 1'000'000'000) << e.name;
    EXPECT_EQ(t->hasBf16, e.bf16) << e.name;
    EXPECT_GT(t->flopsPerSecond, 0) << e.name;
    EXPECT_GT(t->bytesPerSecond, 0) << e.name;
  }
  // Case-insensitive; the roofline targets are unchanged and h200 stays the
  // default.
  EXPECT_EQ(lookupTarget("v100-16gb"), lookupTarget("V100-16GB"));
  EXPECT_EQ(getDefaultTarget().name, "h200");
  EXPECT_EQ(lookupTarget("h100")->memoryBytes, 80'000'000'000);
  EXPECT_EQ(lookupTarget("cpu")->memoryBytes, 0);
  EXPECT_EQ(lookupTarget("tpu"), nullptr);
}

TEST(Targets, ShortNamesAndHostLinks) {
  // v100 is V100-32GB's figures; a6000 finds the A6000 row.
  const Target *v100 = lookupTarget("v100");
  ASSERT_NE(v100, nullptr);
  const Target *v100Row = lookupTarget("V100-32GB");
  EXPECT_EQ(v100->memoryBytes, v100Row->memoryBytes);
  EXPECT_EQ(v100->flopsPerSecond, v100Row->flopsPerSecond);
  EXPECT_EQ(v100->bytesPerSecond, v100Row->bytesPerSecond);
  EXPECT_FALSE(v100->hasBf16);
  ASSERT_NE(lookupTarget("a6000"), nullptr);
  EXPECT_EQ(lookupTarget("a6000")->memoryBytes, 48'000'000'000);
  // Effective pinned host-to-device rates of PCIe 3.0, 4.0 and 5.0 x16.
  EXPECT_EQ(v100->hostLinkBytesPerSecond, 12e9);
  EXPECT_EQ(lookupTarget("V100-16GB")->hostLinkBytesPerSecond, 12e9);
  EXPECT_EQ(lookupTarget("a100")->hostLinkBytesPerSecond, 25e9);
  EXPECT_EQ(lookupTarget("a6000")->hostLinkBytesPerSecond, 25e9);
  EXPECT_EQ(lookupTarget("h100")->hostLinkBytesPerSecond, 50e9);
  EXPECT_EQ(lookupTarget("h200")->hostLinkBytesPerSecond, 50e9);
  // Every target has one.
  for (const Target &t : getTargets())
    EXPECT_GT(t.hostLinkBytesPerSecond, 0) << t.name.str();
}

} // namespace
