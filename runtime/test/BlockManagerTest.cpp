//===- BlockManagerTest.cpp - mw-run --generate's block manager -----------===//

#include "mwrt/block_manager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

using namespace mwrt;

namespace {

TEST(BlockManager, PagedGrowsAndFrees) {
  BlockManager bm(/*blocks=*/6, /*blockSize=*/4, /*maxBlocks=*/3, false);
  EXPECT_EQ(bm.freeBlocks(), 6);
  EXPECT_EQ(bm.blocksToAdmit(5), 2);
  ASSERT_TRUE(bm.admit(0, 5)); // positions 0..4: 2 blocks
  EXPECT_EQ(bm.reservedBlocks(), 2);
  EXPECT_EQ(bm.blocksOf(0), (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(bm.slot(0, 0), 0);
  EXPECT_EQ(bm.slot(0, 6), 1 * 4 + 2);
  ASSERT_TRUE(bm.grow(0, 7));  // inside block 1: nothing new
  EXPECT_EQ(bm.reservedBlocks(), 2);
  ASSERT_TRUE(bm.grow(0, 8));  // starts block 2
  EXPECT_EQ(bm.table(0), (std::vector<int32_t>{0, 1, 2}));
  ASSERT_TRUE(bm.admit(1, 1));
  EXPECT_EQ(bm.table(1), (std::vector<int32_t>{3, -1, -1}));
  bm.release(0);
  EXPECT_EQ(bm.freeBlocks(), 5);
  EXPECT_TRUE(bm.blocksOf(0).empty());
  // The freed blocks come back in another order: a new sequence's blocks
  // are not adjacent or in order.
  ASSERT_TRUE(bm.admit(2, 12));
  std::vector<int32_t> got = bm.blocksOf(2);
  EXPECT_EQ(got, (std::vector<int32_t>{2, 1, 0}));
  EXPECT_EQ(bm.slot(2, 9), 0 * 4 + 1); // position 9: its third block, 0
}

TEST(BlockManager, RefusesWithoutChangingAnything) {
  BlockManager bm(3, 16, 2, false);
  ASSERT_TRUE(bm.admit(0, 32));
  EXPECT_FALSE(bm.canAdmit(17));
  EXPECT_FALSE(bm.admit(1, 17));
  EXPECT_EQ(bm.freeBlocks(), 1);
  EXPECT_TRUE(bm.blocksOf(1).empty());
  ASSERT_TRUE(bm.admit(1, 16));
  EXPECT_FALSE(bm.grow(1, 16)); // no block left
  EXPECT_EQ(bm.blocksOf(1).size(), 1u);
  bm.release(0);
  EXPECT_TRUE(bm.grow(1, 16));
  EXPECT_EQ(bm.reservedBlocks(), 2);
}

TEST(BlockManager, ContiguousReservesMaxSeq) {
  BlockManager bm(5, 4, 2, true);
  EXPECT_EQ(bm.blocksToAdmit(1), 2);
  ASSERT_TRUE(bm.admit(0, 1));
  ASSERT_TRUE(bm.admit(1, 3));
  EXPECT_FALSE(bm.admit(2, 1)); // 1 block free, 2 needed
  EXPECT_EQ(bm.reservedBlocks(), 4);
  EXPECT_TRUE(bm.grow(0, 7)); // already reserved
  EXPECT_EQ(bm.reservedBlocks(), 4);
}

TEST(BlockManager, NoBlockTwice) {
  BlockManager bm(8, 2, 4, false);
  std::set<int32_t> held;
  for (int s = 0; s < 4; ++s)
    ASSERT_TRUE(bm.admit(s, 3));
  bm.release(1);
  ASSERT_TRUE(bm.admit(4, 4));
  for (int s : {0, 2, 3, 4})
    for (int32_t b : bm.blocksOf(s)) {
      EXPECT_TRUE(held.insert(b).second) << "block " << b << " twice";
      EXPECT_GE(b, 0);
      EXPECT_LT(b, 8);
    }
  EXPECT_EQ(static_cast<int64_t>(held.size()) + bm.freeBlocks(), 8);
}

} // namespace
