//===- block_manager.cpp - KV cache blocks for continuous batching --------===//

#include "mwrt/block_manager.h"

#include <algorithm>
#include <cassert>

using namespace mwrt;

BlockManager::BlockManager(int64_t blocks, int64_t blockSize,
                           int64_t maxBlocks, bool contiguous)
    : total(blocks), bs(blockSize), mb(maxBlocks), contiguous(contiguous) {
  // Block 0 is taken first.
  for (int64_t b = blocks - 1; b >= 0; --b)
    freeList.push_back(static_cast<int32_t>(b));
}

int64_t BlockManager::blocksToAdmit(int64_t tokens) const {
  return contiguous ? mb : (tokens + bs - 1) / bs;
}

bool BlockManager::admit(int seq, int64_t tokens) {
  int64_t need = blocksToAdmit(tokens);
  if (need > freeBlocks())
    return false;
  if (static_cast<size_t>(seq) >= tables.size())
    tables.resize(seq + 1);
  assert(tables[seq].empty() && "admitting a sequence that holds blocks");
  for (int64_t i = 0; i < need; ++i) {
    tables[seq].push_back(freeList.back());
    freeList.pop_back();
  }
  return true;
}

bool BlockManager::grow(int seq, int64_t pos) {
  std::vector<int32_t> &t = tables[seq];
  if (static_cast<int64_t>(t.size()) > pos / bs)
    return true;
  assert(static_cast<int64_t>(t.size()) == pos / bs && pos / bs < mb);
  if (freeList.empty())
    return false;
  t.push_back(freeList.back());
  freeList.pop_back();
  return true;
}

void BlockManager::release(int seq) {
  if (static_cast<size_t>(seq) >= tables.size())
    return;
  std::vector<int32_t> &t = tables[seq];
  // Last taken, first back: a later admission takes them in a different
  // order than this sequence held them.
  freeList.insert(freeList.end(), t.begin(), t.end());
  t.clear();
}

int32_t BlockManager::slot(int seq, int64_t pos) const {
  return static_cast<int32_t>(tables[seq][pos / bs] * bs + pos % bs);
}

std::vector<int32_t> BlockManager::table(int seq) const {
  std::vector<int32_t> row(mb, -1);
  if (static_cast<size_t>(seq) < tables.size())
    std::copy(tables[seq].begin(), tables[seq].end(), row.begin());
  return row;
}

const std::vector<int32_t> &BlockManager::blocksOf(int seq) const {
  static const std::vector<int32_t> none;
  return static_cast<size_t>(seq) < tables.size() ? tables[seq] : none;
}
