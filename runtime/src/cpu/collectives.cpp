//===- collectives.cpp - The mesh collectives on one rank -----------------===//
//
// The CPU kernels of the collectives a ZeRO step runs (mesh.all_reduce,
// mesh.reduce_scatter, mesh.all_gather, mesh.all_slice) on a mesh of one
// rank, where each is the identity on its tensor: the reduction over one
// rank, the one rank's slice, the gather of one piece. So the result is a
// copy of the input into the collective's own buffer (a collective never
// writes in place), exact for every reduction kind. The executor reaches
// these through the single-process communicator (src/comm); an MPI or NCCL
// communicator exchanges data between ranks instead.
//
//===----------------------------------------------------------------------===//

#include "support.h"

using namespace mwrt;
using namespace mwrt::cpu;

namespace {
/// What every collective of one rank checks and computes: the result has
/// the input's type (the gather or scatter axis, when given, in range) and
/// receives a copy of it.
mwrt_status runOneRank(KernelCall &c, const char *axisName) {
  const TensorRef &in = c.in(0), &out = c.out(0);
  MWRT_TRY(c.expectSameType(out, "result", in, "input"));
  if (axisName) {
    int64_t axis;
    MWRT_TRY(c.getInt(axisName, axis, 0));
    if (axis < 0 || axis >= static_cast<int64_t>(in.shape.size()))
      return c.fail(axisName, " ", axis, " is out of range for rank ",
                    in.shape.size());
  }
  copyElements(out.data, stridesOf(out), in.data, stridesOf(in), 0, out.shape,
               dtypeSize(out.dtype));
  return MWRT_OK;
}
} // namespace

mwrt_status cpu::runAllReduce(KernelCall &c) { return runOneRank(c, nullptr); }
mwrt_status cpu::runReduceScatter(KernelCall &c) {
  return runOneRank(c, "scatter_axis");
}
mwrt_status cpu::runAllGather(KernelCall &c) {
  return runOneRank(c, "gather_axis");
}
mwrt_status cpu::runAllSlice(KernelCall &c) {
  return runOneRank(c, "slice_axis");
}
