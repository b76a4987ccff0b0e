//===- block_manager.h - KV cache blocks for continuous batching -*- C++ -*-===//
//
// mw-run --generate's bookkeeping of a paged KV cache (docs/inference.md,
// "Serving"): a free list of the cache's blocks and one block table per
// sequence. Paged: a sequence takes a block when its next token starts one
// and gives all of them back when it finishes or is preempted. Contiguous:
// a sequence reserves the blocks of max-seq tokens when it is admitted (the
// seeds' preallocation), for comparison. Pure bookkeeping: no device memory.
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_BLOCK_MANAGER_H
#define MWRT_BLOCK_MANAGER_H

#include <cstdint>
#include <vector>

namespace mwrt {

class BlockManager {
public:
  /// `blocks` blocks of `blockSize` token slots; a sequence holds at most
  /// `maxBlocks` (the block table's width). `contiguous` reserves all
  /// maxBlocks at admission.
  BlockManager(int64_t blocks, int64_t blockSize, int64_t maxBlocks,
               bool contiguous);

  /// Blocks a sequence of `tokens` cached tokens needs to be admitted.
  int64_t blocksToAdmit(int64_t tokens) const;
  /// Whether a new sequence of `tokens` tokens can be admitted now.
  bool canAdmit(int64_t tokens) const {
    return blocksToAdmit(tokens) <= freeBlocks();
  }
  /// Gives sequence `seq` (an id >= 0, not holding blocks) the blocks for
  /// `tokens` tokens; false (nothing changes) when there are too few.
  bool admit(int seq, int64_t tokens);
  /// Makes room for token position `pos` of `seq` (allocating a block when
  /// it starts one); false when no block is free.
  bool grow(int seq, int64_t pos);
  /// Returns every block of `seq` to the free list.
  void release(int seq);

  /// The slot (block * blockSize + offset) of position `pos` of `seq`,
  /// which must be inside its blocks.
  int32_t slot(int seq, int64_t pos) const;
  /// `seq`'s block table, padded with -1 to maxBlocks entries.
  std::vector<int32_t> table(int seq) const;
  const std::vector<int32_t> &blocksOf(int seq) const;

  int64_t freeBlocks() const { return static_cast<int64_t>(freeList.size()); }
  int64_t totalBlocks() const { return total; }
  int64_t reservedBlocks() const { return total - freeBlocks(); }
  int64_t blockSize() const { return bs; }
  int64_t maxBlocks() const { return mb; }

private:
  int64_t total, bs, mb;
  bool contiguous;
  /// Free blocks, taken from the back; released blocks go to the back, so
  /// the blocks a sequence holds are in general neither in order nor
  /// adjacent.
  std::vector<int32_t> freeList;
  std::vector<std::vector<int32_t>> tables; ///< by sequence id
};

} // namespace mwrt

#endif // MWRT_BLOCK_MANAGER_H
