//===- RematRevolve.cpp - Binomial checkpointing for --mw-remat -----------===//
//
// See RematRevolve.h and docs/remat.md ("revolve").
//
//===----------------------------------------------------------------------===//

#include "RematRevolve.h"

#include "memwall/Analysis/StepStructure.h"
#include "memwall/Dialect/MW/IR/MWDialect.h"
#include "memwall/Dialect/MW/IR/MWOps.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::mw;
using namespace mlir::mw::remat;

//===----------------------------------------------------------------------===//
// The schedule
//===----------------------------------------------------------------------===//

namespace {

/// The dynamic programme. F(n, c): the fewest links recomputed to reverse n
/// links whose first input is held (a snapshot, or on the sweep that is
/// going on), with c snapshot slots free. G(n, c): the same for the last n
/// links of the step while the forward pass still runs (its sweep is free,
/// and the last link's internals are its own with lastFromForward).
/// split[n][c] is the m of the best split (advance m links, snapshot,
/// reverse the other n - m with c - 1 slots, then the m with c), 0 for none
/// (c = 0 or n = 1), -1 where c - 1 slots do as well.
struct Programme {
  int64_t slots;
  bool last;
  std::vector<int64_t> f, g;
  std::vector<int64_t> splitF, splitG;
  size_t at(int64_t n, int64_t c) const { return n * (slots + 1) + c; }

  Programme(int64_t links, int64_t slots, bool last)
      : slots(slots), last(last) {
    size_t size = (links + 1) * (slots + 1);
    f.assign(size, 0);
    g.assign(size, 0);
    splitF.assign(size, 0);
    splitG.assign(size, 0);
    for (int64_t c = 0; c <= slots; ++c) {
      for (int64_t n = 1; n <= links; ++n) {
        if (c == 0) {
          // Each link recomputed from the first input: 1 + 2 + ... + n.
          f[at(n, 0)] = n * (n + 1) / 2;
          // The last link (its internals from the forward pass, or its
          // sweep from the first input), the others from the first input.
          g[at(n, 0)] = (last ? 0 : n) + (n - 1) * n / 2;
          continue;
        }
        int64_t bestF = f[at(n, c - 1)], bestG = g[at(n, c - 1)];
        int64_t mF = -1, mG = -1;
        for (int64_t m = 1; m < n; ++m) {
          int64_t vf = m + f[at(n - m, c - 1)] + f[at(m, c)];
          if (vf < bestF)
            bestF = vf, mF = m;
          int64_t vg = g[at(n - m, c - 1)] + f[at(m, c)];
          if (vg < bestG)
            bestG = vg, mG = m;
        }
        f[at(n, c)] = bestF;
        g[at(n, c)] = bestG;
        splitF[at(n, c)] = mF;
        splitG[at(n, c)] = mG;
      }
    }
  }

  /// Fills the schedule of reversing links [a, a + n) with c slots;
  /// `origin` is where the sweep going on started, -1 for the forward pass.
  void reverse(RevolveSchedule &s, int64_t a, int64_t n, int64_t c,
               int64_t origin) const {
    bool forward = origin < 0;
    if (forward)
      s.keptInput[a] = true;
    const std::vector<int64_t> &split = forward ? splitG : splitF;
    while (c > 0 && split[at(n, c)] == -1)
      --c;
    if (n == 1) {
      s.origin[a] = forward ? (last ? -1 : a) : origin;
      return;
    }
    if (c == 0) {
      s.origin[a + n - 1] = forward ? (last ? -1 : a) : origin;
      for (int64_t j = a + n - 2; j >= a; --j)
        s.origin[j] = a;
      return;
    }
    int64_t m = split[at(n, c)];
    reverse(s, a + m, n - m, c - 1, origin);
    reverse(s, a, m, c, a);
  }
};

} // namespace

RevolveSchedule remat::revolveSchedule(int64_t links, int64_t snapshots,
                                       bool lastFromForward) {
  RevolveSchedule s;
  s.links = links;
  s.snapshots = snapshots = std::min(snapshots, std::max<int64_t>(links - 1, 0));
  s.lastFromForward = lastFromForward;
  if (links <= 0)
    return s;
  s.origin.assign(links, -1);
  s.keptInput.assign(links, false);
  Programme p(links, snapshots, lastFromForward);
  p.reverse(s, 0, links, snapshots, -1);
  s.recomputedLinks = p.g[p.at(links, snapshots)];
  return s;
}

//===----------------------------------------------------------------------===//
// On a step
//===----------------------------------------------------------------------===//

std::optional<RevolveLinks>
remat::findRevolveLinks(const StepGraph &g, const StepStructure &info,
                         bool regions, std::string &why) {
  int numNodes = g.nodes.size();
  // The link of each node by its layer path, numbered in forward order.
  llvm::StringMap<int> index;
  std::vector<int> blockOf(numNodes, -1);
  for (int i = 0; i < numNodes; ++i) {
    const StepGraph::Node &node = g.nodes[i];
    if (node.terminator)
      continue;
    auto split = splitLayerPath(getLayerPath(node.op));
    if (!split)
      continue;
    std::string key = split->first;
    if (regions && !split->second.empty())
      key += "." + split->second.substr(0, split->second.find('.'));
    auto it = index.find(key);
    if (it == index.end()) {
      if (!node.forward)
        continue; // no forward op: not a link revolve reverses
      it = index.try_emplace(key, static_cast<int>(index.size())).first;
    }
    blockOf[i] = it->second;
  }
  int numLinks = index.size();
  std::vector<std::string> names(numLinks);
  for (const auto &entry : index)
    names[entry.second] = entry.first().str();
  if (numLinks == 0) {
    why = "the step has no transformer blocks (mw.layer = \"h.N...\")";
    return std::nullopt;
  }
  // A link's forward after the backward started: gradient accumulation's
  // later micro-batches (the loss's own reduction across ranks may follow
  // the backward's seed; it is in no block).
  int lastForward = -1, firstBackward = numNodes;
  for (int i = 0; i < numNodes; ++i) {
    if (g.nodes[i].forward && blockOf[i] >= 0)
      lastForward = i;
    else if (g.isBackward(i))
      firstBackward = std::min(firstBackward, i);
  }
  if (lastForward > firstBackward) {
    why = ("forward op '" + g.nodes[lastForward].op->getName().getStringRef() +
           "' (" + getLayerPath(g.nodes[lastForward].op) +
           ") follows backward op '" +
           g.nodes[firstBackward].op->getName().getStringRef() + "' (" +
           getLayerPath(g.nodes[firstBackward].op) +
           "): gradient accumulation's micro-batches, or links whose "
           "forward and backward ops interleave")
              .str();
    return std::nullopt;
  }

  // Parameter-only forward nodes: computed from parameters, optimizer
  // state and constants alone.
  FunctionOpInterface func = info.func;
  std::vector<char> paramOnly(numNodes, 0);
  auto isState = [&](int v) {
    int def = g.vals[v].def;
    if (def >= 0)
      return paramOnly[def] != 0;
    auto arg = dyn_cast<BlockArgument>(g.values[v]);
    if (!arg)
      return false;
    auto role = func.getArgAttrOfType<RoleAttr>(arg.getArgNumber(),
                                                MWDialect::kRoleAttrName);
    return role && (role.getValue() == Role::param ||
                    role.getValue() == Role::optimizer_state);
  };
  for (int i = 0; i < numNodes; ++i) {
    const StepGraph::Node &node = g.nodes[i];
    if (node.forward && (node.constant || llvm::all_of(node.operands, isState)))
      paramOnly[i] = 1;
  }
  // Who reads each node's results in the forward pass.
  std::vector<llvm::SmallVector<int, 2>> readers(numNodes);
  for (int i = 0; i < numNodes; ++i) {
    if (!g.nodes[i].forward)
      continue;
    for (int v : g.nodes[i].operands) {
      int def = g.vals[v].def;
      if (def >= 0 && (readers[def].empty() || readers[def].back() != i))
        readers[def].push_back(i);
    }
  }
  // A parameter-only node outside the blocks joins the link that alone
  // reads it (through other such nodes); read by several links it is
  // shared. Readers come after their operands, so walk backwards.
  constexpr int kShared = -2, kNone = -1;
  std::vector<int> owner(blockOf);
  for (int i = numNodes - 1; i >= 0; --i) {
    if (owner[i] >= 0 || !paramOnly[i] || g.nodes[i].constant)
      continue;
    int o = kNone;
    bool outside = false;
    for (int r : readers[i]) {
      int b = owner[r];
      if (b == kShared) {
        o = kShared;
      } else if (b >= 0) {
        o = o == kNone ? b : (o == b ? o : kShared);
      } else {
        outside = true;
      }
    }
    if (o >= 0 && outside)
      o = kShared;
    owner[i] = o;
  }

  RevolveLinks rb;
  rb.nodes.resize(numLinks);
  for (int i = 0; i < numNodes; ++i) {
    if (!g.nodes[i].forward || g.nodes[i].constant)
      continue;
    if (owner[i] >= 0)
      rb.nodes[owner[i]].push_back(i);
    else if (owner[i] == kShared)
      rb.shared.push_back(i);
  }
  // Each link's backward starts at its first backward node; they must come
  // in reverse link order, after some backward node (the loss's).
  SmallVector<int> firstBwd(numLinks, numNodes);
  SmallVector<int> backward;
  for (int i = 0; i < numNodes; ++i) {
    if (!g.isBackward(i))
      continue;
    backward.push_back(i);
    if (blockOf[i] >= 0)
      firstBwd[blockOf[i]] = std::min(firstBwd[blockOf[i]], i);
  }
  for (int b = 0; b < numLinks; ++b) {
    if (firstBwd[b] == numNodes) {
      why = "a link (" + names[b] + ") has no backward ops";
      return std::nullopt;
    }
    if (b + 1 < numLinks && firstBwd[b] <= firstBwd[b + 1]) {
      why = "the backward pass does not run the links in reverse order (" +
            names[b + 1] + " before " + names[b] + ")";
      return std::nullopt;
    }
  }
  rb.stageStart.resize(numLinks);
  for (int b = 0; b < numLinks; ++b) {
    auto it = llvm::lower_bound(backward, firstBwd[b]);
    if (it == backward.begin()) {
      why = "no backward op precedes the last link's backward";
      return std::nullopt;
    }
    rb.stageStart[b] = *std::prev(it);
  }
  return rb;
}

RematPlan remat::planRevolve(const StepGraph &g, const StepStructure &info,
                             const RevolveLinks &links,
                             const RevolveSchedule &schedule, bool perUse,
                             llvm::BitVector &keep) {
  int64_t numLinks = links.count();
  assert(schedule.links == numLinks && "a schedule for another step");
  int numNodes = g.nodes.size();
  std::vector<char> isView = alwaysViews(g);
  SmallVector<int> times;
  SmallVector<SmallVector<int>> cloned;
  for (int64_t j = numLinks - 1; j >= 0; --j) {
    times.push_back(links.stageStart[j]);
    SmallVector<int> &stage = cloned.emplace_back();
    int64_t origin = schedule.origin[j];
    if (origin >= 0) {
      for (int64_t b = origin; b <= j; ++b)
        stage.append(links.nodes[b].begin(), links.nodes[b].end());
      stage.append(links.shared.begin(), links.shared.end());
    }
    if (!perUse)
      continue;
    // Per use: a stage of its own for each backward op of the link's
    // backward, after the first, that reads one of the link's internals
    // (through views too); it recomputes, from the link's input, what
    // that op reads, so each internal lives from where it is remade to
    // its reader, not across the link's whole backward.
    llvm::DenseSet<int> own(links.nodes[j].begin(), links.nodes[j].end());
    auto readsOwn = [&](int node) {
      return llvm::any_of(g.nodes[node].operands, [&](int v) {
        int d = g.vals[v].def;
        while (d >= 0 && isView[d])
          d = g.vals[g.nodes[d].operands[0]].def;
        return d >= 0 && own.contains(d);
      });
    };
    int end = j > 0 ? links.stageStart[j - 1] : numNodes - 1;
    bool first = true;
    int previous = links.stageStart[j];
    for (int k = links.stageStart[j] + 1; k <= end; ++k) {
      if (!g.isBackward(k))
        continue;
      if (readsOwn(k)) {
        if (!first && previous > times.back()) {
          times.push_back(previous);
          cloned.emplace_back(links.nodes[j].begin(), links.nodes[j].end());
        }
        first = false;
      }
      previous = k;
    }
  }
  return planStaged(g, info, times, cloned, keep);
}
