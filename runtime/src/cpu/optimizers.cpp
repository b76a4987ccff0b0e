//===- optimizers.cpp - AdamW, SGD and dynamic loss scaling ---------------===//
//
// The evaluator's adamw, sgd and loss_scale_update: scalars in double (as
// PyTorch and DeepSpeed compute them on the host), elements in f32, results
// rounded to their type. Each element is read before it is written, so new
// parameters and state may be written over the old ones in place.
//
//===----------------------------------------------------------------------===//

#include "support.h"

#include <cmath>
#include <limits>

namespace mwrt::cpu {

/// Checks the update's grad (any float type, param's shape) and that `t`
/// (operand or result `name`) has the param's type.
static mwrt_status expectLikeParam(const KernelCall &c, const TensorRef &t,
                                   const char *name) {
  return c.expectSameType(t, name, c.in(0), "param");
}

static mwrt_status checkParamAndGrad(const KernelCall &c) {
  const TensorRef &p = c.in(0), &g = c.in(1);
  MWRT_TRY(c.expectFloat(p, "param"));
  MWRT_TRY(c.expectFloat(g, "grad"));
  if (g.shape != p.shape)
    return c.fail("grad shape ", shapeString(g.shape),
                  " differs from param shape ", shapeString(p.shape));
  return MWRT_OK;
}

mwrt_status readAdamWAttrs(KernelCall &c, AdamWAttrs &a) {
  MWRT_TRY(c.getFloat("lr", a.lr, 1e-3));
  MWRT_TRY(c.getFloat("beta1", a.beta1, 0.9));
  MWRT_TRY(c.getFloat("beta2", a.beta2, 0.999));
  MWRT_TRY(c.getFloat("eps", a.eps, 1e-8));
  return c.getFloat("weight_decay", a.weightDecay, 1e-2);
}

mwrt_status readSgdAttrs(KernelCall &c, SgdAttrs &a) {
  MWRT_TRY(c.getFloat("lr", a.lr));
  MWRT_TRY(c.getFloat("momentum", a.momentum, 0.0));
  MWRT_TRY(c.getFloat("dampening", a.dampening, 0.0));
  MWRT_TRY(c.getFloat("weight_decay", a.weightDecay, 0.0));
  return c.getBool("nesterov", a.nesterov);
}

mwrt_status runAdamW(KernelCall &c) {
  MWRT_TRY(checkParamAndGrad(c));
  MWRT_TRY(expectLikeParam(c, c.in(2), "exp_avg"));
  MWRT_TRY(expectLikeParam(c, c.in(3), "exp_avg_sq"));
  const TensorRef &step = c.in(4);
  if (!step.shape.empty() ||
      (step.dtype != DType::F32 && step.dtype != DType::I32 &&
       step.dtype != DType::I64))
    return c.fail("step type ", typeString(step.dtype, step.shape),
                  " must be a rank-0 f32, i32 or i64 tensor");
  for (size_t i = 0; i < 3; ++i)
    MWRT_TRY(expectLikeParam(c, c.out(i), "result"));
  AdamWAttrs attrs;
  MWRT_TRY(readAdamWAttrs(c, attrs));
  double lr = attrs.lr, b1 = attrs.beta1, b2 = attrs.beta2, eps = attrs.eps,
         wd = attrs.weightDecay;
  double t = elementAsDouble(step, 0);
  if (!(t >= 1.0))
    return c.fail("adamw step must be >= 1 (the 1-based count of this "
                  "update), got ",
                  t);
  // Scalars in double, as PyTorch computes them on the host (formulas.h).
  auto sc = formulas::adamWScalars<float>(
      lr, b1, b2, eps, wd, static_cast<float>(formulas::biasCorrection(b1, t)),
      static_cast<float>(formulas::biasCorrection(b2, t)));
  FloatSrc p(c.in(0)), g(c.in(1)), m(c.in(2)), v(c.in(3));
  FloatDst newP(c.out(0)), newM(c.out(1)), newV(c.out(2));
  // Elements across the workers: each one's update reads only its own.
  parallelFor(c.options, c.in(0).numElements(), kElementGrain,
              [&](int, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n)
      formulas::adamWElement(sc, p[n], g[n], m[n], v[n], newP[n], newM[n],
                             newV[n]);
  });
  newP.commit();
  newM.commit();
  newV.commit();
  return MWRT_OK;
}

mwrt_status runSgd(KernelCall &c) {
  MWRT_TRY(checkParamAndGrad(c));
  SgdAttrs attrs;
  MWRT_TRY(readSgdAttrs(c, attrs));
  double lr = attrs.lr, momentum = attrs.momentum, dampening = attrs.dampening,
         wd = attrs.weightDecay;
  bool nesterov = attrs.nesterov;
  bool hasBuffer = c.ins.size() == 3;
  if (momentum != 0.0 && !hasBuffer)
    return c.fail("momentum ", momentum, " requires a momentum_buffer operand");
  if (momentum == 0.0 && hasBuffer)
    return c.fail("has a momentum_buffer operand but momentum is 0");
  if (hasBuffer != (c.outs.size() == 2))
    return c.fail("needs a new_momentum_buffer result exactly when it has a "
                  "momentum_buffer operand");
  if (nesterov && (momentum == 0.0 || dampening != 0.0))
    return c.fail("nesterov requires a non-zero momentum and zero dampening");
  MWRT_TRY(expectLikeParam(c, c.out(0), "new_param"));
  if (hasBuffer) {
    MWRT_TRY(expectLikeParam(c, c.in(2), "momentum_buffer"));
    MWRT_TRY(expectLikeParam(c, c.out(1), "new_momentum_buffer"));
  }
  float flr = static_cast<float>(lr), mom = static_cast<float>(momentum);
  // 1 - dampening in double, as PyTorch computes it on the host.
  float keep = static_cast<float>(1.0 - dampening);
  float fwd = static_cast<float>(wd);
  FloatSrc p(c.in(0)), g(c.in(1));
  FloatDst newP(c.out(0));
  std::optional<FloatSrc> buf;
  std::optional<FloatDst> newBuf;
  if (hasBuffer) {
    buf.emplace(c.in(2));
    newBuf.emplace(c.out(1));
  }
  parallelFor(c.options, c.in(0).numElements(), kElementGrain,
              [&](int, int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n) {
      float pn = p[n];
      float gi = g[n] + fwd * pn;
      if (hasBuffer) {
        float b = mom * (*buf)[n] + keep * gi;
        (*newBuf)[n] = b;
        gi = nesterov ? gi + mom * b : b;
      }
      newP[n] = pn - flr * gi;
    }
  });
  newP.commit();
  if (newBuf)
    newBuf->commit();
  return MWRT_OK;
}

mwrt_status runLossScaleUpdate(KernelCall &c) {
  const char *inNames[] = {"overflow", "scale", "iter", "last_overflow",
                           "cur_hysteresis"};
  const char *outNames[] = {"new_scale", "new_iter", "new_last_overflow",
                            "new_hysteresis"};
  for (size_t i = 0; i < 5; ++i)
    MWRT_TRY(
        c.expectType(c.in(i), inNames[i], {}, i < 2 ? DType::F32 : DType::I64));
  for (size_t i = 0; i < 4; ++i)
    MWRT_TRY(c.expectType(c.out(i), outNames[i], {},
                          i < 1 ? DType::F32 : DType::I64));
  int64_t window, delayedShift;
  double minScale, factor;
  MWRT_TRY(c.getInt("window", window, 1000));
  MWRT_TRY(c.getInt("hysteresis", delayedShift, 2));
  MWRT_TRY(c.getFloat("min_scale", minScale, 1.0));
  MWRT_TRY(c.getFloat("factor", factor, 2.0));
  if (window < 1)
    return c.fail("window must be >= 1, got ", window);
  if (delayedShift < 1)
    return c.fail("hysteresis must be >= 1, got ", delayedShift);
  auto f32 = [&](size_t i) {
    return *static_cast<const float *>(c.in(i).data);
  };
  auto i64 = [&](size_t i) {
    return *static_cast<const int64_t *>(c.in(i).data);
  };
  // All inputs are read before any output is written.
  formulas::LossScaleState state{static_cast<double>(f32(1)), i64(2), i64(3),
                                 i64(4)};
  state = formulas::updateLossScale(state, f32(0) != 0.0f, window,
                                    delayedShift, minScale, factor);
  *static_cast<float *>(c.out(0).data) = static_cast<float>(state.scale);
  *static_cast<int64_t *>(c.out(1).data) = state.iter;
  *static_cast<int64_t *>(c.out(2).data) = state.last;
  *static_cast<int64_t *>(c.out(3).data) = state.hyst;
  return MWRT_OK;
}

} // namespace mwrt::cpu
