//===- RuntimeTest.cpp - Unit tests of the runtime C API ------------------===//

#include "mwrt/mwrt.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <string>

TEST(Status, NamesEveryCode) {
  EXPECT_STREQ(mwrt_status_string(MWRT_OK), "ok");
  EXPECT_STREQ(mwrt_status_string(MWRT_INVALID_ARGUMENT), "invalid argument");
  EXPECT_STREQ(mwrt_status_string(MWRT_UNAVAILABLE), "unavailable");
  EXPECT_STREQ(mwrt_status_string(static_cast<mwrt_status>(99)),
               "unknown status");
}

TEST(Device, NullCountIsInvalid) {
  EXPECT_EQ(mwrt_cuda_device_count(nullptr), MWRT_INVALID_ARGUMENT);
  EXPECT_STREQ(mwrt_last_error(), "count is null");
}

TEST(Device, CountIsConsistentWithStatus) {
  int count = -1;
  mwrt_status st = mwrt_cuda_device_count(&count);
  if (st == MWRT_OK) {
    EXPECT_GT(count, 0);
  } else {
    // No GPU here: a clear message, never a crash.
    EXPECT_EQ(st, MWRT_UNAVAILABLE);
    EXPECT_EQ(count, 0);
    EXPECT_FALSE(std::string(mwrt_last_error()).empty());
  }
}

TEST(Version, IsSemantic) {
  std::string v = mwrt_version();
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2);
}
