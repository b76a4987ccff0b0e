//===- DeepSpeedConfig.h - DeepSpeed JSON configuration reader --*- C++ -*-===//
//
// Reads a DeepSpeed configuration file (the JSON a user hands to
// `deepspeed.initialize`) into a ZeroConfig that the coming `--mw-zero` pass
// consumes through its `config=FILE` option. Every setting starts at the value
// DeepSpeed's code gives it (docs/zero.md lists each with its source file),
// "auto" values are resolved from the step the way Hugging Face's DeepSpeed
// integration resolves them, and each setting remembers whether it was given,
// defaulted, resolved from "auto", derived from other settings or overridden
// by an option of the pass. Problems come back as diagnostics that name the
// key path and, where the text has one, its line and column: errors for wrong
// types and impossible values, warnings for unknown keys and for settings that
// have no effect on this step. The library depends on LLVM's Support library
// only (llvm::json, no MLIR), so the pass, the plugin and tests can link it.
//
//===----------------------------------------------------------------------===//

#ifndef MEMWALL_ZERO_DEEPSPEEDCONFIG_H
#define MEMWALL_ZERO_DEEPSPEEDCONFIG_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

namespace llvm {
class raw_ostream;
namespace json {
class Value;
} // namespace json
} // namespace llvm

namespace memwall::zero {

//===----------------------------------------------------------------------===//
// What the step tells the reader
//===----------------------------------------------------------------------===//

/// The precision the training step computes in.
enum class StepPrecision { FP32, BF16, FP16 };

/// The optimizer update the step contains, if any.
enum class StepOptimizer { None, AdamW, SGD };

/// Facts about the model and its training step that "auto" values and the
/// consistency checks need. The pass fills them from the IR; a field left
/// unset makes an "auto" that needs it an error naming the key.
struct ModelFacts {
  /// The model's hidden size (Hugging Face's `config.hidden_size`).
  std::optional<int64_t> hiddenSize;
  /// Trainable parameters (elements) of the whole model.
  int64_t numParameters = 0;
  /// Data-parallel ranks (DeepSpeed's world size for the batch arithmetic).
  int64_t ranks = 1;
  /// Samples one rank processes in one forward/backward (the step's batch).
  std::optional<int64_t> microBatchSize;
  /// Micro-batches accumulated per optimizer step.
  std::optional<int64_t> gradientAccumulation;
  StepPrecision precision = StepPrecision::FP32;
  StepOptimizer optimizer = StepOptimizer::None;
  /// The step's optimizer hyper-parameters (used when the config says "auto").
  std::optional<double> learningRate;
  std::optional<double> beta1, beta2, epsilon, weightDecay;
  /// SGD momentum; a non-zero value means one fp32 buffer per parameter.
  double momentum = 0.0;
  /// The global gradient-norm clip the step applies; none today
  /// (--mw-autodiff emits no clipping).
  std::optional<double> maxGradNorm;
  /// Whether --mw-remat has been or will be applied to the step.
  bool rematApplied = false;
  /// The steps are inference steps (--mw-offload, ZeRO-Inference): only
  /// the offload_param checks apply, and buffer_count sets the prefetch
  /// depth whatever the device.
  bool inference = false;
};

//===----------------------------------------------------------------------===//
// The configuration
//===----------------------------------------------------------------------===//

/// Where a setting's value came from.
enum class Origin {
  Default,  ///< DeepSpeed's default (the key was absent).
  Given,    ///< Written in the file.
  Auto,     ///< Written as "auto" and resolved from the step.
  Derived,  ///< Computed from other settings (DeepSpeed's batch arithmetic).
  Override, ///< Set by an explicit option of the pass.
};

/// One setting: its value, where the value came from and, when the file
/// holds the key, its 1-based line and column (0 when unknown).
template <typename T>
struct Setting {
  T value{};
  Origin origin = Origin::Default;
  unsigned line = 0, column = 0;

  Setting() = default;
  Setting(T v) : value(v) {}
  bool isGiven() const { return origin == Origin::Given; }
  bool isDefault() const { return origin == Origin::Default; }
  bool isAuto() const { return origin == Origin::Auto; }
};

/// DeepSpeed's OffloadDeviceEnum.
enum class OffloadDevice { None, CPU, NVMe };

/// `zero_optimization.offload_param` (DeepSpeedZeroOffloadParamConfig).
struct OffloadParamConfig {
  bool present = false; ///< The section appears in the file.
  Setting<OffloadDevice> device{OffloadDevice::None};
  Setting<std::string> nvmePath;
  Setting<int64_t> bufferCount{5};
  Setting<int64_t> bufferSize{100000000}; ///< Elements.
  Setting<int64_t> maxInCpu{1000000000};  ///< Elements.
  Setting<bool> pinMemory{false};
};

/// `zero_optimization.offload_optimizer`
/// (DeepSpeedZeroOffloadOptimizerConfig).
struct OffloadOptimizerConfig {
  bool present = false;
  Setting<OffloadDevice> device{OffloadDevice::None};
  Setting<std::string> nvmePath;
  Setting<int64_t> bufferCount{4};
  Setting<bool> pinMemory{false};
  Setting<bool> pipelineRead{false};
  Setting<bool> pipelineWrite{false};
  Setting<bool> fastInit{false};
  Setting<double> ratio{1.0};
};

/// `activation_checkpointing` (DeepSpeedActivationCheckpointingConfig).
struct ActivationCheckpointingConfig {
  bool present = false;
  Setting<bool> partitionActivations{false};
  Setting<bool> cpuCheckpointing{false};
  Setting<bool> contiguousMemoryOptimization{false};
  /// DeepSpeed's default is None; 0 stands for it here.
  Setting<int64_t> numberCheckpoints{0};
  Setting<bool> synchronizeCheckpointBoundary{false};
  Setting<bool> profile{false};
};

/// Every setting of the ZeRO issue with DeepSpeed's defaults. Sizes are in
/// elements where DeepSpeed counts elements (all the bucket sizes, the
/// persistence threshold, max live parameters, sub-group size).
struct ZeroConfig {
  // zero_optimization (DeepSpeedZeroConfig).
  Setting<int64_t> stage{0};
  Setting<bool> allgatherPartitions{true};
  Setting<int64_t> allgatherBucketSize{500000000};
  /// DeepSpeed's default is None, then `stage == 3` (overlap_comm_valid).
  Setting<bool> overlapComm{false};
  Setting<bool> reduceScatter{true};
  Setting<int64_t> reduceBucketSize{500000000};
  Setting<bool> contiguousGradients{true};
  Setting<int64_t> prefetchBucketSize{50000000};
  Setting<int64_t> paramPersistenceThreshold{100000};
  Setting<int64_t> maxLiveParameters{1000000000};
  Setting<int64_t> maxReuseDistance{1000000000};
  Setting<int64_t> subGroupSize{1000000000};
  OffloadOptimizerConfig offloadOptimizer;
  OffloadParamConfig offloadParam;

  // fp16 (DeepSpeedFP16Config) and bf16 (DeepSpeedBF16Config).
  Setting<bool> fp16Enabled{false};
  Setting<double> lossScale{0.0}; ///< 0 means dynamic loss scaling.
  Setting<int64_t> initialScalePower{16};
  Setting<int64_t> lossScaleWindow{1000};
  Setting<int64_t> hysteresis{2};
  Setting<bool> consecutiveHysteresis{false};
  Setting<int64_t> minLossScale{1};
  Setting<bool> bf16Enabled{false};

  // Batch (DeepSpeedConfig._set_batch_related_parameters); 0 until known.
  Setting<int64_t> trainBatchSize{0};
  Setting<int64_t> trainMicroBatchSizePerGpu{0};
  Setting<int64_t> gradientAccumulationSteps{0};
  /// The data-parallel world size: the step's ranks or the pass's option.
  Setting<int64_t> ranks{1};

  Setting<double> gradientClipping{0.0}; ///< 0 disables clipping.

  // optimizer: DeepSpeed has no defaults for the params (the optimizer's
  // constructor does); absent means "not in the file".
  bool optimizerPresent = false;
  Setting<std::string> optimizerType;
  std::optional<Setting<double>> lr, beta1, beta2, eps, weightDecay;

  ActivationCheckpointingConfig activationCheckpointing;

  /// The top-level `gradient_checkpointing` key (not DeepSpeed's; Memwall
  /// maps it to --mw-remat).
  Setting<bool> rematRequested{false};
};

//===----------------------------------------------------------------------===//
// Diagnostics and the result
//===----------------------------------------------------------------------===//

enum class Severity { Note, Warning, Error };

/// One message about the configuration.
struct ConfigDiagnostic {
  Severity severity = Severity::Error;
  /// Dotted key path, e.g. `zero_optimization.reduce_bucket_size`; empty for
  /// the file as a whole.
  std::string keyPath;
  std::string message;
  /// 1-based position in the file; 0 when there is none (e.g. a default).
  unsigned line = 0, column = 0;

  /// `FILE:LINE:COL: warning: KEY: MESSAGE` (position and key when known).
  std::string format(llvm::StringRef fileName) const;
};

/// The explicit options of the pass, which win over the file.
struct ZeroOverrides {
  std::optional<int64_t> stage;
  std::optional<int64_t> ranks;
  std::optional<int64_t> reduceBucketSize;
  std::optional<int64_t> allgatherBucketSize;
  std::optional<int64_t> prefetchBucketSize;
  std::optional<int64_t> paramPersistenceThreshold;
  std::optional<int64_t> maxLiveParameters;
  std::optional<bool> overlapComm;
};

/// What parseDeepSpeedConfig returns: the configuration (complete even when
/// there are errors, with defaults where a value was rejected) and the
/// diagnostics, sorted by position in the file.
struct DeepSpeedConfigResult {
  ZeroConfig config;
  llvm::SmallVector<ConfigDiagnostic, 8> diagnostics;
  std::string fileName;

  bool hasErrors() const;
  /// Writes every diagnostic, one per line.
  void printDiagnostics(llvm::raw_ostream &os) const;
};

/// Parses `text` (the contents of `fileName`) as a DeepSpeed configuration,
/// resolves "auto" from `facts`, applies `overrides` and runs the consistency
/// checks (checkZeroConfig). A JSON syntax error is one error with the line
/// and column of the fault.
DeepSpeedConfigResult parseDeepSpeedConfig(llvm::StringRef text,
                                           llvm::StringRef fileName,
                                           const ModelFacts &facts,
                                           const ZeroOverrides &overrides = {});

/// Applies the explicit options of the pass (Origin::Override). A value the
/// options make impossible (stage outside 0-3, a zero bucket, ...) is an
/// error naming the option's key; an option that replaces a value written in
/// the file is a note.
llvm::SmallVector<ConfigDiagnostic, 2>
applyOverrides(ZeroConfig &config, const ZeroOverrides &overrides);

/// The checks that involve several settings or the step: the batch
/// arithmetic, the settings with no effect on this stage or step, offload
/// constraints. parseDeepSpeedConfig runs it; run it again after changing
/// the configuration by hand.
llvm::SmallVector<ConfigDiagnostic, 4>
checkZeroConfig(ZeroConfig &config, const ModelFacts &facts);

/// What --mw-offload takes from `zero_optimization.offload_param`
/// (ZeRO-Inference), each unset when the file does not give it: `device`
/// cpu or nvme as `weights`, `nvme_path` as `path`, `buffer_count` - 1 as
/// `prefetch` (DeepSpeed's buffers: the one in use and those being filled).
struct InferenceOffload {
  std::optional<std::string> weights, path;
  std::optional<int64_t> prefetch;
};

/// Fills `out` from `config` (parsed with ModelFacts::inference); errors for
/// a device of none and a buffer_count below 1.
llvm::SmallVector<ConfigDiagnostic, 2>
inferenceOffloadOf(const ZeroConfig &config, InferenceOffload &out);

/// Bytes a rank keeps outside HBM because of offload_* (what the memory
/// report shows until the offload issue executes offload).
struct HostResidentBytes {
  int64_t paramHostBytes = 0;     ///< offload_param to cpu.
  int64_t optimizerHostBytes = 0; ///< offload_optimizer to cpu.
  int64_t nvmeBytes = 0;          ///< Either, to nvme.
  int64_t pinnedBufferBytes = 0;  ///< offload_param's nvme buffer pool.
  int64_t total() const {
    return paramHostBytes + optimizerHostBytes + pinnedBufferBytes;
  }
};

/// Host-resident bytes per rank for `config` on the step of `facts`; the
/// formulas are in docs/zero.md.
HostResidentBytes computeHostResidentBytes(const ZeroConfig &config,
                                           const ModelFacts &facts);

/// Writes the resolved configuration, one `key = value (origin)` line per
/// setting (`(auto -> VALUE)` for resolved "auto"), then host-resident bytes.
void printZeroConfigReport(const ZeroConfig &config, const ModelFacts &facts,
                           llvm::raw_ostream &os);

/// The same report as JSON: `{"settings": [{"key", "value", "origin"}...],
/// "host_resident_bytes": {...}}`, keys in a fixed order.
llvm::json::Value zeroConfigToJson(const ZeroConfig &config,
                                   const ModelFacts &facts);

llvm::StringRef stringifyOrigin(Origin origin);
llvm::StringRef stringifySeverity(Severity severity);
llvm::StringRef stringifyOffloadDevice(OffloadDevice device);

} // namespace memwall::zero

#endif // MEMWALL_ZERO_DEEPSPEEDCONFIG_H
