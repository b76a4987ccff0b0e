//===- initial_values.h - What a step's state starts as ---------*- C++ -*-===//
//
// The one definition of the values a step's arguments take when no file
// gives them, shared by mw-eval's random inputs (lib/Eval) and mw-run's
// default initialization (runtime/src/session.cpp): the seeded normal
// generator, the fresh state of dynamic loss scaling (DeepSpeed's
// DynamicLossScaler before its first step), AdamW's step counter, and the
// two weight rules. The rules differ on purpose and are both here so that
// neither drifts: mw-eval draws every float (biases and norm scales too,
// around their usual values) so a test exercises every term of every
// formula, while mw-run starts a parameter the way a model's fresh
// initialization does (zero biases, unit norm scales, N(0, 0.02) weights),
// so that training from defaults behaves like training a real model.
// Header-only and MLIR-free (docs/runtime.md, "Initialization").
//
//===----------------------------------------------------------------------===//

#ifndef MWRT_INITIAL_VALUES_H
#define MWRT_INITIAL_VALUES_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

namespace mwrt::initial {

/// Normal variates from a 64-bit Mersenne Twister by Box-Muller, written out
/// because std::normal_distribution's output differs between standard
/// libraries. Each variate takes two draws.
class NormalGenerator {
public:
  explicit NormalGenerator(uint64_t seed) : rng(seed) {}
  double next() {
    uint64_t a = rng();
    uint64_t b = rng();
    return boxMuller(a, b);
  }
  /// The next `n` variates, exactly as n next() calls give them, passed to
  /// store(i, v) for i in [0, n). The draws are made in order; their
  /// transforms (a log, a square root and a cosine each, most of the
  /// time) are independent, so `parallelFor(count, fn)` may run
  /// fn(begin, end) over [0, count) split any way, on any threads: store
  /// is then called concurrently for distinct i.
  template <typename ParallelFor, typename Store>
  void fill(int64_t n, ParallelFor &&parallelFor, Store &&store) {
    constexpr int64_t kBlock = int64_t{1} << 18; // 4 MiB of draws
    std::vector<uint64_t> draws;
    for (int64_t first = 0; first < n; first += kBlock) {
      int64_t m = std::min(kBlock, n - first);
      draws.resize(static_cast<size_t>(2 * m));
      for (uint64_t &d : draws)
        d = rng();
      parallelFor(m, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          store(first + i, boxMuller(draws[2 * i], draws[2 * i + 1]));
      });
    }
  }
  /// A raw 64-bit draw (integer inputs).
  uint64_t raw() { return rng(); }
  /// Advances past `variates` variates exactly as that many next() calls
  /// would, without computing them (a value a file gives is not drawn).
  void skip(uint64_t variates) { rng.discard(2 * variates); }

private:
  /// Uniform in (0, 1): the top 53 bits of a draw, centred in their
  /// interval.
  static double uniform01(uint64_t draw) {
    return (static_cast<double>(draw >> 11) + 0.5) * (1.0 / 9007199254740992.0);
  }
  /// One variate from two draws, in their order.
  static double boxMuller(uint64_t a, uint64_t b) {
    double u1 = uniform01(a), u2 = uniform01(b);
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  std::mt19937_64 rng;
};

/// The standard deviation of weights (GPT-2's and BERT's initializer range).
inline constexpr double kWeightStd = 0.02;

/// The state mw.loss_scale_update carries, in the order of its operands
/// after `overflow`.
enum class LossScaleSlot { Scale, Iter, LastOverflow, Hysteresis };

/// DeepSpeed's initial loss scale, 2^16 (initial_scale_power 16).
inline constexpr double kInitialLossScale = 65536.0;

/// The fresh value of loss-scaling state `slot`; `hysteresis` is the op's
/// attribute (DeepSpeed's delayed_shift), 2 by default.
inline double lossScaleInitialValue(LossScaleSlot slot,
                                    double hysteresis = 2.0) {
  switch (slot) {
  case LossScaleSlot::Scale:
    return kInitialLossScale;
  case LossScaleSlot::Iter:
    return 0.0;
  case LossScaleSlot::LastOverflow:
    return -1.0; // no overflow yet
  case LossScaleSlot::Hysteresis:
    return hysteresis;
  }
  return 0.0;
}

/// The slot of a state named as --mw-autodiff names it (`loss_scale.scale`,
/// ...), for state that no mw.loss_scale_update reads directly.
inline std::optional<LossScaleSlot> lossScaleSlotOfName(std::string_view n) {
  if (n == "loss_scale.scale")
    return LossScaleSlot::Scale;
  if (n == "loss_scale.iter")
    return LossScaleSlot::Iter;
  if (n == "loss_scale.last_overflow")
    return LossScaleSlot::LastOverflow;
  if (n == "loss_scale.hysteresis")
    return LossScaleSlot::Hysteresis;
  return std::nullopt;
}

/// AdamW's step counter before the first update (bias correction divides by
/// 1 - beta^step, so it starts at 1). Other optimizer state starts at zero.
inline constexpr double kInitialAdamStep = 1.0;

inline bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.substr(s.size() - suffix.size()) == suffix;
}

/// The f32 master weights of --mw-autodiff's master-weights=optimizer
/// (`<param>.master`, or a ZeRO piece `zero.bucketK.master`) start as the
/// parameters they belong to, widened to f32: DeepSpeed makes its masters
/// from the half-precision parameters the same way. The name of the
/// parameter (or of the ZeRO piece `zero.bucketK`, whose parameters' piece
/// is `zero.bucketK.param`) a state named `name` is the master of, or
/// nothing for other state.
inline std::optional<std::string_view> masterOf(std::string_view name) {
  constexpr std::string_view kSuffix = ".master";
  if (name.size() <= kSuffix.size() ||
      name.substr(name.size() - kSuffix.size()) != kSuffix)
    return std::nullopt;
  return name.substr(0, name.size() - kSuffix.size());
}

/// Whether a float parameter named `name` of rank `rank` is a norm's scale
/// (layer_norm's and rms_norm's gamma: rank 1, named "...weight").
inline bool isNormScale(std::string_view name, size_t rank) {
  return rank == 1 && endsWith(name, "weight");
}

/// mw-run's default for one element of float parameter `name`: zero biases,
/// unit norm scales, N(0, kWeightStd) otherwise.
/// Whether defaultParamValue draws a variate for float parameter `name`
/// (biases are 0 and norm scales 1 without drawing).
inline bool drawsParamValue(std::string_view name, size_t rank) {
  return !endsWith(name, "bias") && !isNormScale(name, rank);
}

inline double defaultParamValue(std::string_view name, size_t rank,
                                NormalGenerator &weights) {
  if (drawsParamValue(name, rank))
    return kWeightStd * weights.next();
  return endsWith(name, "bias") ? 0.0 : 1.0;
}

/// mw-eval's random value for one element of float argument `name`: every
/// value drawn, norm scales around 1.
inline double randomFloatValue(std::string_view name, size_t rank,
                               NormalGenerator &gen) {
  return (isNormScale(name, rank) ? 1.0 : 0.0) + kWeightStd * gen.next();
}

} // namespace mwrt::initial

#endif // MWRT_INITIAL_VALUES_H
