//===- DeepSpeedConfig.cpp - DeepSpeed JSON configuration reader ----------===//
//
// Reads DeepSpeed's JSON into a ZeroConfig (DeepSpeedConfig.h): llvm::json
// parses and validates the text (no exceptions anywhere, a syntax error comes
// back with its line and column), a small scanner over the validated text
// records where each key sits so that every diagnostic can point at its
// line, then each section is read against DeepSpeed's defaults, "auto" is
// resolved the way Hugging Face's integration does, the pass's overrides are
// applied, and the cross-key checks run. docs/zero.md has the table of keys,
// defaults and their DeepSpeed source files.
//
//===----------------------------------------------------------------------===//

#include "memwall/Zero/DeepSpeedConfig.h"
#include "memwall/Support/Nesting.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>

using namespace llvm;
using namespace memwall::zero;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

StringRef memwall::zero::stringifyOrigin(Origin origin) {
  switch (origin) {
  case Origin::Default:
    return "default";
  case Origin::Given:
    return "given";
  case Origin::Auto:
    return "auto";
  case Origin::Derived:
    return "derived";
  case Origin::Override:
    return "override";
  }
  llvm_unreachable("unknown origin");
}

StringRef memwall::zero::stringifySeverity(Severity severity) {
  switch (severity) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  llvm_unreachable("unknown severity");
}

StringRef memwall::zero::stringifyOffloadDevice(OffloadDevice device) {
  switch (device) {
  case OffloadDevice::None:
    return "none";
  case OffloadDevice::CPU:
    return "cpu";
  case OffloadDevice::NVMe:
    return "nvme";
  }
  llvm_unreachable("unknown offload device");
}

static StringRef stringifyPrecision(StepPrecision precision) {
  switch (precision) {
  case StepPrecision::FP32:
    return "fp32";
  case StepPrecision::BF16:
    return "bf16";
  case StepPrecision::FP16:
    return "fp16";
  }
  llvm_unreachable("unknown precision");
}

static StringRef stringifyOptimizer(StepOptimizer optimizer) {
  switch (optimizer) {
  case StepOptimizer::None:
    return "none";
  case StepOptimizer::AdamW:
    return "adamw";
  case StepOptimizer::SGD:
    return "sgd";
  }
  llvm_unreachable("unknown optimizer");
}

/// Numbers the way the report and the messages print them: integers in full,
/// others with up to 9 significant digits (deterministic, locale-free).
static std::string formatDouble(double v) {
  std::string s;
  raw_string_ostream os(s);
  os << format("%.9g", v);
  return s;
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

std::string ConfigDiagnostic::format(StringRef fileName) const {
  std::string s;
  raw_string_ostream os(s);
  os << fileName;
  if (line)
    os << ":" << line << ":" << column;
  os << ": " << stringifySeverity(severity) << ": ";
  if (!keyPath.empty())
    os << keyPath << ": ";
  os << message;
  return s;
}

bool DeepSpeedConfigResult::hasErrors() const {
  return llvm::any_of(diagnostics, [](const ConfigDiagnostic &d) {
    return d.severity == Severity::Error;
  });
}

void DeepSpeedConfigResult::printDiagnostics(raw_ostream &os) const {
  for (const ConfigDiagnostic &d : diagnostics)
    os << d.format(fileName) << "\n";
}

//===----------------------------------------------------------------------===//
// Key locations
//===----------------------------------------------------------------------===//

namespace {
/// Line and column (1-based) of every key path in a text that llvm::json has
/// already accepted, e.g. `zero_optimization.offload_param.device` or
/// `optimizer.params.betas[1]` (array elements point at the element).
/// llvm::json keeps no positions, and the text is valid, so a scanner that
/// only tracks strings, brackets and positions suffices.
class KeyLocator {
public:
  explicit KeyLocator(StringRef text) : text(text) {
    skipSpace();
    scanValue("");
  }

  std::pair<unsigned, unsigned> lookup(StringRef path) const {
    auto it = locations.find(path);
    if (it == locations.end())
      return {0, 0};
    return it->second;
  }

  /// Keys that appear twice in one object (llvm::json keeps the last one
  /// silently; DeepSpeed's loader rejects them).
  struct Duplicate {
    std::string path;
    unsigned line, column;
  };
  ArrayRef<Duplicate> getDuplicates() const { return duplicates; }

private:
  StringRef text;
  size_t pos = 0;
  unsigned line = 1, column = 1;
  StringMap<std::pair<unsigned, unsigned>> locations;
  SmallVector<Duplicate> duplicates;

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }
  void advance() {
    if (atEnd())
      return;
    if (text[pos] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[pos]) & 0xC0) != 0x80) {
      // Columns count characters, not UTF-8 continuation bytes.
      ++column;
    }
    ++pos;
  }
  void skipSpace() {
    while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\n' ||
                        peek() == '\r'))
      advance();
  }

  /// Scans a string literal at `pos`; returns its contents with simple
  /// escapes decoded (a \u escape is kept as written: key paths only need to
  /// match the keys DeepSpeed knows, which are ASCII).
  std::string scanString() {
    std::string out;
    advance(); // opening quote
    while (!atEnd() && peek() != '"') {
      if (peek() == '\\') {
        advance();
        char c = peek();
        switch (c) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          out += "\\u";
          break;
        default:
          out += c;
        }
        advance();
        continue;
      }
      out += peek();
      advance();
    }
    advance(); // closing quote
    return out;
  }

  static std::string join(StringRef path, StringRef key) {
    return path.empty() ? key.str() : (path + "." + key).str();
  }

  void scanValue(const std::string &path) {
    char c = peek();
    if (c == '{') {
      advance();
      skipSpace();
      while (!atEnd() && peek() != '}') {
        unsigned keyLine = line, keyColumn = column;
        std::string key = scanString();
        std::string child = join(path, key);
        if (!locations.try_emplace(child, keyLine, keyColumn).second)
          duplicates.push_back({child, keyLine, keyColumn});
        skipSpace();
        advance(); // ':'
        skipSpace();
        scanValue(child);
        skipSpace();
        if (peek() == ',') {
          advance();
          skipSpace();
        }
      }
      advance();
      return;
    }
    if (c == '[') {
      advance();
      skipSpace();
      unsigned index = 0;
      while (!atEnd() && peek() != ']') {
        std::string child = path + "[" + std::to_string(index++) + "]";
        locations.try_emplace(child, line, column);
        scanValue(child);
        skipSpace();
        if (peek() == ',') {
          advance();
          skipSpace();
        }
      }
      advance();
      return;
    }
    if (c == '"') {
      scanString();
      return;
    }
    // Numbers, true, false, null.
    while (!atEnd() && !StringRef(",}] \t\r\n").contains(peek()))
      advance();
  }
};

/// What a read of one key found.
enum class Read { Absent, Value, Auto, Invalid };

/// The keys of one section: those Memwall models, and DeepSpeed keys it
/// knows but does not model (each gets a no-effect warning).
struct SectionKeys {
  ArrayRef<StringRef> modelled;
  ArrayRef<StringRef> unmodelled;
};

//===----------------------------------------------------------------------===//
// The reader
//===----------------------------------------------------------------------===//

class Reader {
public:
  Reader(const KeyLocator &locator, const ModelFacts &facts,
         const ZeroOverrides &overrides, ZeroConfig &config,
         SmallVectorImpl<ConfigDiagnostic> &diags)
      : locator(locator), facts(facts), overrides(overrides), cfg(config),
        diags(diags) {}

  void readRoot(const json::Value &root);

private:
  const KeyLocator &locator;
  const ModelFacts &facts;
  const ZeroOverrides &overrides;
  ZeroConfig &cfg;
  SmallVectorImpl<ConfigDiagnostic> &diags;

  static std::string join(StringRef section, StringRef key) {
    return section.empty() ? key.str() : (section + "." + key).str();
  }

  void report(Severity severity, StringRef path, const Twine &message) {
    auto [line, column] = locator.lookup(path);
    diags.push_back({severity, path.str(), message.str(), line, column});
  }

  template <typename T>
  void mark(Setting<T> &setting, StringRef path, Origin origin) {
    setting.origin = origin;
    std::tie(setting.line, setting.column) = locator.lookup(path);
  }

  static bool isAuto(const json::Value &v) {
    std::optional<StringRef> s = v.getAsString();
    return s && *s == "auto";
  }

  static StringRef kindName(const json::Value &v) {
    switch (v.kind()) {
    case json::Value::Null:
      return "null";
    case json::Value::Boolean:
      return "a boolean";
    case json::Value::Number:
      return "a number";
    case json::Value::String:
      return "a string";
    case json::Value::Array:
      return "an array";
    case json::Value::Object:
      return "an object";
    }
    llvm_unreachable("unknown JSON kind");
  }

  void wrongType(StringRef path, StringRef expected, const json::Value &v) {
    report(Severity::Error, path,
           "expected " + expected + ", got " + kindName(v));
  }

  /// "auto" that Hugging Face does not fill: DeepSpeedConfigModel drops
  /// "auto" entries (non-strict mode), so DeepSpeed's default applies.
  template <typename T>
  void unresolvedAuto(Setting<T> &setting, StringRef path, StringRef why) {
    mark(setting, path, Origin::Auto);
    report(Severity::Warning, path,
           "\"auto\" is not resolved here (" + why +
               "); DeepSpeed drops \"auto\" values, so its default applies");
  }

  Read readBool(const json::Object &o, StringRef section, StringRef key,
                Setting<bool> &setting) {
    const json::Value *v = o.get(key);
    std::string path = join(section, key);
    if (!v)
      return Read::Absent;
    if (isAuto(*v))
      return Read::Auto;
    std::optional<bool> b = v->getAsBoolean();
    if (!b) {
      wrongType(path, "true or false", *v);
      return Read::Invalid;
    }
    setting.value = *b;
    mark(setting, path, Origin::Given);
    return Read::Value;
  }

  /// An integer in [minValue, maxValue]. Integral numbers written as
  /// floating point (`2e8`, `5.0e8`) are accepted as DeepSpeed's pydantic
  /// models accept them.
  Read readInt(const json::Object &o, StringRef section, StringRef key,
               Setting<int64_t> &setting, int64_t minValue,
               int64_t maxValue = INT64_MAX, StringRef why = "") {
    const json::Value *v = o.get(key);
    std::string path = join(section, key);
    if (!v)
      return Read::Absent;
    if (isAuto(*v))
      return Read::Auto;
    if (v->kind() != json::Value::Number) {
      wrongType(path, "an integer", *v);
      return Read::Invalid;
    }
    std::optional<int64_t> i = v->getAsInteger();
    if (!i) {
      report(Severity::Error, path,
             "expected an integer, got " +
                 formatDouble(v->getAsNumber().value_or(0.0)));
      return Read::Invalid;
    }
    if (*i < minValue || *i > maxValue) {
      std::string range =
          maxValue == INT64_MAX
              ? ("must be >= " + Twine(minValue)).str()
              : ("must be in [" + Twine(minValue) + ", " + Twine(maxValue) +
                 "]")
                    .str();
      report(Severity::Error, path,
             Twine(*i) + " " + range + (why.empty() ? "" : " (") + why +
                 (why.empty() ? "" : ")"));
      return Read::Invalid;
    }
    setting.value = *i;
    mark(setting, path, Origin::Given);
    return Read::Value;
  }

  Read readDouble(const json::Object &o, StringRef section, StringRef key,
                  Setting<double> &setting, double minValue,
                  double maxValue = INFINITY) {
    const json::Value *v = o.get(key);
    std::string path = join(section, key);
    if (!v)
      return Read::Absent;
    if (isAuto(*v))
      return Read::Auto;
    std::optional<double> d = v->getAsNumber();
    if (!d) {
      wrongType(path, "a number", *v);
      return Read::Invalid;
    }
    if (!std::isfinite(*d) || *d < minValue || *d > maxValue) {
      report(Severity::Error, path,
             formatDouble(*d) + " must be " +
                 (std::isinf(maxValue)
                      ? (">= " + formatDouble(minValue))
                      : ("in [" + formatDouble(minValue) + ", " +
                         formatDouble(maxValue) + "]")));
      return Read::Invalid;
    }
    setting.value = *d;
    mark(setting, path, Origin::Given);
    return Read::Value;
  }

  Read readString(const json::Object &o, StringRef section, StringRef key,
                  Setting<std::string> &setting) {
    const json::Value *v = o.get(key);
    std::string path = join(section, key);
    if (!v)
      return Read::Absent;
    if (isAuto(*v))
      return Read::Auto;
    std::optional<StringRef> s = v->getAsString();
    if (!s) {
      wrongType(path, "a string", *v);
      return Read::Invalid;
    }
    setting.value = s->str();
    mark(setting, path, Origin::Given);
    return Read::Value;
  }

  /// A section that must be an object; nullptr (with an error) otherwise.
  const json::Object *section(const json::Object &o, StringRef parent,
                              StringRef key) {
    const json::Value *v = o.get(key);
    if (!v)
      return nullptr;
    const json::Object *obj = v->getAsObject();
    if (!obj)
      wrongType(join(parent, key), "an object", *v);
    return obj;
  }

  /// Warns about every key of `o` outside `keys`, in sorted order (the
  /// diagnostics are sorted by position afterwards).
  void checkKeys(const json::Object &o, StringRef sectionPath,
                 const SectionKeys &keys) {
    SmallVector<StringRef> names;
    for (const auto &entry : o)
      names.push_back(entry.first);
    llvm::sort(names);
    for (StringRef name : names) {
      if (llvm::is_contained(keys.modelled, name))
        continue;
      std::string path = join(sectionPath, name);
      if (llvm::is_contained(keys.unmodelled, name)) {
        report(Severity::Warning, path,
               "a DeepSpeed setting Memwall does not model: it has no "
               "effect on the plan");
        continue;
      }
      // Suggest the closest modelled key: DeepSpeed's own docstring spells
      // `partitioned_activations` for `partition_activations`.
      StringRef best;
      unsigned bestDistance = 4;
      for (StringRef known : keys.modelled) {
        unsigned d = name.edit_distance(known, true, bestDistance);
        if (d < bestDistance) {
          bestDistance = d;
          best = known;
        }
      }
      report(Severity::Warning, path,
             "unknown key, ignored" +
                 (best.empty() ? std::string()
                               : (" (did you mean '" + best + "'?)").str()));
    }
  }

  int64_t effectiveStage() const {
    return overrides.stage.value_or(cfg.stage.value);
  }

  void readZero(const json::Object &root);
  void readOffloadParam(const json::Object &zero);
  void readOffloadOptimizer(const json::Object &zero);
  void readPrecision(const json::Object &root);
  void readBatch(const json::Object &root);
  void readOptimizer(const json::Object &root);
  void readActivationCheckpointing(const json::Object &root);
  void readOffloadDevice(const json::Object &o, StringRef section,
                         Setting<OffloadDevice> &device);
};
} // namespace

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

static const StringRef kRootModelled[] = {
    "zero_optimization",
    "fp16",
    "bf16",
    "bfloat16",
    "train_batch_size",
    "train_micro_batch_size_per_gpu",
    "gradient_accumulation_steps",
    "gradient_clipping",
    "optimizer",
    "activation_checkpointing",
    "gradient_checkpointing"};
/// Top-level DeepSpeed keys (deepspeed/runtime/config.py) outside the issue.
static const StringRef kRootUnmodelled[] = {
    "aio",
    "amp",
    "autotuning",
    "checkpoint",
    "comms_logger",
    "communication_data_type",
    "compile",
    "compression_training",
    "csv_monitor",
    "curriculum_learning",
    "data_efficiency",
    "data_types",
    "dataloader_drop_last",
    "disable_allgather",
    "dump_state",
    "eigenvalue",
    "elasticity",
    "flops_profiler",
    "gradient_allreduce_op",
    "gradient_predivide_factor",
    "graph_harvesting",
    "hybrid_engine",
    "memory_breakdown",
    "nebula",
    "pipeline",
    "prescale_gradients",
    "progressive_layer_drop",
    "scheduler",
    "seq_parallel_communication_data_type",
    "sparse_attention",
    "sparse_gradients",
    "steps_per_print",
    "tensor_parallel",
    "tensorboard",
    "timers",
    "torch_autocast",
    "vocabulary_size",
    "wall_clock_breakdown",
    "wandb",
    "weight_quantization",
    "zero_allow_untested_optimizer",
    "zero_force_ds_cpu_optimizer"};

static const StringRef kZeroModelled[] = {
    "stage",
    "allgather_partitions",
    "allgather_bucket_size",
    "overlap_comm",
    "reduce_scatter",
    "reduce_bucket_size",
    "contiguous_gradients",
    "stage3_prefetch_bucket_size",
    "stage3_param_persistence_threshold",
    "stage3_max_live_parameters",
    "stage3_max_reuse_distance",
    "sub_group_size",
    "offload_optimizer",
    "offload_param",
    "cpu_offload",
    "cpu_offload_param"};
/// DeepSpeedZeroConfig fields (deepspeed/runtime/zero/config.py) outside the
/// issue.
static const StringRef kZeroUnmodelled[] = {
    "compute_grad_norm",
    "cpu_offload_use_pin_memory",
    "elastic_checkpoint",
    "enable_sanity_checks",
    "ignore_unused_parameters",
    "leaf_module",
    "legacy_stage1",
    "load_from_fp32_weights",
    "log_trace_cache_warnings",
    "memory_efficient_linear",
    "mics_hierarchical_params_gather",
    "mics_shard_size",
    "override_module_apply",
    "parameter_alignment",
    "pipeline_loading_checkpoint",
    "round_robin_gradients",
    "save_muon_momentum_buffer_in_memory",
    "stage3_allgather_sequential",
    "stage3_gather_16bit_weights_on_model_save",
    "stage3_gather_fp16_weights_on_model_save",
    "stage3_model_persistence_threshold",
    "stage3_module_granularity_threshold",
    "stage3_partition_stream_chunk_size",
    "stage3_use_all_reduce_for_fetch_params",
    "use_multi_rank_bucket_allreduce",
    "zenflow",
    "zero_hpz_partition_size",
    "zero_quantized_gradients",
    "zero_quantized_nontrainable_weights",
    "zero_quantized_weights",
    "zeropp_loco_param"};

static const StringRef kOffloadParamModelled[] = {
    "device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu",
    "pin_memory"};
static const StringRef kOffloadOptimizerModelled[] = {
    "device",         "nvme_path", "buffer_count", "pin_memory",
    "pipeline_read",  "pipeline_write", "fast_init", "ratio"};
static const StringRef kOffloadOptimizerUnmodelled[] = {
    "convert_grad_on_cpu", "cpuadam_cores_perc", "super_offload"};

static const StringRef kFp16Modelled[] = {
    "enabled",    "loss_scale",     "initial_scale_power",
    "loss_scale_window", "hysteresis", "consecutive_hysteresis",
    "min_loss_scale"};
static const StringRef kFp16Unmodelled[] = {
    "auto_cast", "fp16_master_weights_and_grads", "fused_mode"};
static const StringRef kBf16Modelled[] = {"enabled"};
static const StringRef kBf16Unmodelled[] = {
    "bf16_master_weights_and_grads", "bf16_optimizer_states",
    "check_grad_overflow", "immediate_grad_update"};

static const StringRef kOptimizerModelled[] = {"type", "params"};
static const StringRef kOptimizerUnmodelled[] = {"legacy_fusion"};
static const StringRef kOptimizerParamsModelled[] = {"lr", "betas", "eps",
                                                     "weight_decay"};
/// Constructor arguments of DeepSpeed's and torch's Adam/AdamW/SGD that the
/// step's update does not take from the config.
static const StringRef kOptimizerParamsUnmodelled[] = {
    "adam_w_mode", "amsgrad",  "bias_correction", "dampening",
    "foreach",     "fused",    "maximize",        "max_grad_norm",
    "momentum",    "nesterov", "torch_adam"};

static const StringRef kActCkptModelled[] = {
    "partition_activations",          "cpu_checkpointing",
    "contiguous_memory_optimization", "number_checkpoints",
    "synchronize_checkpoint_boundary", "profile"};

void Reader::readOffloadDevice(const json::Object &o, StringRef section,
                               Setting<OffloadDevice> &device) {
  Setting<std::string> name;
  std::string path = join(section, "device");
  Read r = readString(o, section, "device", name);
  if (r == Read::Auto) {
    unresolvedAuto(device, path, "Hugging Face does not fill it");
    return;
  }
  if (r != Read::Value)
    return;
  std::optional<OffloadDevice> d =
      StringSwitch<std::optional<OffloadDevice>>(name.value)
          .Case("none", OffloadDevice::None)
          .Case("cpu", OffloadDevice::CPU)
          .Case("nvme", OffloadDevice::NVMe)
          .Default(std::nullopt);
  if (!d) {
    report(Severity::Error, path,
           "'" + name.value + "' is not an offload device (none, cpu, nvme)");
    return;
  }
  device.value = *d;
  mark(device, path, Origin::Given);
}

void Reader::readOffloadParam(const json::Object &zero) {
  const json::Object *o = section(zero, "zero_optimization", "offload_param");
  if (!o)
    return;
  StringRef s = "zero_optimization.offload_param";
  OffloadParamConfig &p = cfg.offloadParam;
  p.present = true;
  checkKeys(*o, s, {kOffloadParamModelled, {}});
  readOffloadDevice(*o, s, p.device);
  auto intKey = [&](StringRef key, Setting<int64_t> &setting) {
    if (readInt(*o, s, key, setting, 0) == Read::Auto)
      unresolvedAuto(setting, join(s, key), "Hugging Face does not fill it");
  };
  auto boolKey = [&](StringRef key, Setting<bool> &setting) {
    if (readBool(*o, s, key, setting) == Read::Auto)
      unresolvedAuto(setting, join(s, key), "Hugging Face does not fill it");
  };
  if (readString(*o, s, "nvme_path", p.nvmePath) == Read::Auto)
    unresolvedAuto(p.nvmePath, join(s, "nvme_path"),
                   "Hugging Face does not fill it");
  intKey("buffer_count", p.bufferCount);
  intKey("buffer_size", p.bufferSize);
  intKey("max_in_cpu", p.maxInCpu);
  boolKey("pin_memory", p.pinMemory);
}

void Reader::readOffloadOptimizer(const json::Object &zero) {
  const json::Object *o =
      section(zero, "zero_optimization", "offload_optimizer");
  if (!o)
    return;
  StringRef s = "zero_optimization.offload_optimizer";
  OffloadOptimizerConfig &p = cfg.offloadOptimizer;
  p.present = true;
  checkKeys(*o, s, {kOffloadOptimizerModelled, kOffloadOptimizerUnmodelled});
  readOffloadDevice(*o, s, p.device);
  auto boolKey = [&](StringRef key, Setting<bool> &setting) {
    if (readBool(*o, s, key, setting) == Read::Auto)
      unresolvedAuto(setting, join(s, key), "Hugging Face does not fill it");
  };
  if (readString(*o, s, "nvme_path", p.nvmePath) == Read::Auto)
    unresolvedAuto(p.nvmePath, join(s, "nvme_path"),
                   "Hugging Face does not fill it");
  if (readInt(*o, s, "buffer_count", p.bufferCount, 0) == Read::Auto)
    unresolvedAuto(p.bufferCount, join(s, "buffer_count"),
                   "Hugging Face does not fill it");
  boolKey("pin_memory", p.pinMemory);
  boolKey("pipeline_read", p.pipelineRead);
  boolKey("pipeline_write", p.pipelineWrite);
  boolKey("fast_init", p.fastInit);
  if (readDouble(*o, s, "ratio", p.ratio, 0.0, 1.0) == Read::Auto)
    unresolvedAuto(p.ratio, join(s, "ratio"), "Hugging Face does not fill it");
}

void Reader::readZero(const json::Object &root) {
  const json::Value *v = root.get("zero_optimization");
  if (!v)
    return;
  StringRef s = "zero_optimization";
  // DeepSpeed's deprecated form: `"zero_optimization": true` means stage 1
  // (read_zero_config_deprecated).
  if (std::optional<bool> b = v->getAsBoolean()) {
    cfg.stage.value = *b ? 1 : 0;
    mark(cfg.stage, s, Origin::Given);
    report(Severity::Warning, s,
           Twine("the boolean form is deprecated in DeepSpeed; read as "
                 "{\"stage\": ") +
               (*b ? "1" : "0") + "}");
    return;
  }
  const json::Object *z = section(root, "", "zero_optimization");
  if (!z)
    return;
  checkKeys(*z, s, {kZeroModelled, kZeroUnmodelled});

  if (readInt(*z, s, "stage", cfg.stage, 0, 3, "ZeRO stages are 0, 1, 2, 3") ==
      Read::Auto)
    unresolvedAuto(cfg.stage, "zero_optimization.stage",
                   "Hugging Face does not fill it");
  int64_t stage = effectiveStage();

  auto boolKey = [&](StringRef key, Setting<bool> &setting) {
    if (readBool(*z, s, key, setting) == Read::Auto)
      unresolvedAuto(setting, join(s, key), "Hugging Face does not fill it");
  };
  boolKey("allgather_partitions", cfg.allgatherPartitions);
  boolKey("overlap_comm", cfg.overlapComm);
  boolKey("reduce_scatter", cfg.reduceScatter);
  boolKey("contiguous_gradients", cfg.contiguousGradients);

  // Bucket sizes: DeepSpeed accepts 0 (ge=0), but a bucket of no elements
  // cannot carry a gradient or a parameter, so Memwall rejects it.
  if (readInt(*z, s, "allgather_bucket_size", cfg.allgatherBucketSize, 1,
              INT64_MAX, "a bucket must hold at least one element") ==
      Read::Auto)
    unresolvedAuto(cfg.allgatherBucketSize,
                   "zero_optimization.allgather_bucket_size",
                   "Hugging Face fills only reduce_bucket_size and the "
                   "stage3_* sizes from the hidden size");

  auto needHidden = [&](StringRef path) -> std::optional<int64_t> {
    if (facts.hiddenSize && *facts.hiddenSize > 0)
      return facts.hiddenSize;
    report(Severity::Error, path,
           "\"auto\" needs the model's hidden size, which the step does not "
           "give; replace \"auto\" with an integer");
    return std::nullopt;
  };

  std::string rbs = "zero_optimization.reduce_bucket_size";
  if (readInt(*z, s, "reduce_bucket_size", cfg.reduceBucketSize, 1, INT64_MAX,
              "a bucket must hold at least one element") == Read::Auto) {
    // HfTrainerDeepSpeedConfig.trainer_config_finalize: hidden * hidden,
    // whatever the stage.
    mark(cfg.reduceBucketSize, rbs, Origin::Auto);
    if (std::optional<int64_t> h = needHidden(rbs))
      cfg.reduceBucketSize.value = *h * *h;
  }

  std::string pbs = "zero_optimization.stage3_prefetch_bucket_size";
  if (readInt(*z, s, "stage3_prefetch_bucket_size", cfg.prefetchBucketSize,
              0) == Read::Auto) {
    if (stage != 3) {
      unresolvedAuto(cfg.prefetchBucketSize, pbs,
                     "Hugging Face fills it only for ZeRO stage 3");
    } else {
      mark(cfg.prefetchBucketSize, pbs, Origin::Auto);
      // int(0.9 * hidden_size * hidden_size), evaluated left to right in
      // double as Python does, then truncated.
      if (std::optional<int64_t> h = needHidden(pbs))
        cfg.prefetchBucketSize.value =
            static_cast<int64_t>(0.9 * static_cast<double>(*h) *
                                 static_cast<double>(*h));
    }
  }

  std::string ppt = "zero_optimization.stage3_param_persistence_threshold";
  if (readInt(*z, s, "stage3_param_persistence_threshold",
              cfg.paramPersistenceThreshold, 0) == Read::Auto) {
    if (stage != 3) {
      unresolvedAuto(cfg.paramPersistenceThreshold, ppt,
                     "Hugging Face fills it only for ZeRO stage 3");
    } else {
      mark(cfg.paramPersistenceThreshold, ppt, Origin::Auto);
      if (std::optional<int64_t> h = needHidden(ppt))
        cfg.paramPersistenceThreshold.value = 10 * *h;
    }
  }

  auto intKey = [&](StringRef key, Setting<int64_t> &setting) {
    if (readInt(*z, s, key, setting, 0) == Read::Auto)
      unresolvedAuto(setting, join(s, key), "Hugging Face does not fill it");
  };
  intKey("stage3_max_live_parameters", cfg.maxLiveParameters);
  intKey("stage3_max_reuse_distance", cfg.maxReuseDistance);
  if (readInt(*z, s, "sub_group_size", cfg.subGroupSize, 1) == Read::Auto)
    unresolvedAuto(cfg.subGroupSize, "zero_optimization.sub_group_size",
                   "Hugging Face does not fill it");

  readOffloadOptimizer(*z);
  readOffloadParam(*z);

  // Deprecated booleans that DeepSpeed maps to the offload sections
  // (DeepSpeedZeroConfig's new_param_fn).
  auto deprecatedOffload = [&](StringRef key, StringRef newKey, bool present,
                               Setting<OffloadDevice> &device,
                               bool &sectionPresent) {
    Setting<bool> flag;
    if (readBool(*z, s, key, flag) != Read::Value)
      return;
    std::string path = join(s, key);
    if (present) {
      report(Severity::Error, path,
             "cannot be given together with " + newKey +
                 " (DeepSpeed rejects both)");
      return;
    }
    report(Severity::Warning, path,
           "deprecated in DeepSpeed; read as " + newKey +
               (flag.value ? ".device = cpu" : " absent"));
    if (!flag.value)
      return;
    sectionPresent = true;
    device.value = OffloadDevice::CPU;
    mark(device, path, Origin::Given);
  };
  deprecatedOffload("cpu_offload", "zero_optimization.offload_optimizer",
                    cfg.offloadOptimizer.present, cfg.offloadOptimizer.device,
                    cfg.offloadOptimizer.present);
  deprecatedOffload("cpu_offload_param", "zero_optimization.offload_param",
                    cfg.offloadParam.present, cfg.offloadParam.device,
                    cfg.offloadParam.present);
}

void Reader::readPrecision(const json::Object &root) {
  if (const json::Object *f = section(root, "", "fp16")) {
    StringRef s = "fp16";
    checkKeys(*f, s, {kFp16Modelled, kFp16Unmodelled});
    if (readBool(*f, s, "enabled", cfg.fp16Enabled) == Read::Auto) {
      // trainer_config_process: fp16.enabled <- args.fp16 (amp backend).
      mark(cfg.fp16Enabled, "fp16.enabled", Origin::Auto);
      cfg.fp16Enabled.value = facts.precision == StepPrecision::FP16;
    }
    auto intKey = [&](StringRef key, Setting<int64_t> &setting,
                      int64_t minValue, int64_t maxValue, StringRef why) {
      if (readInt(*f, s, key, setting, minValue, maxValue, why) == Read::Auto)
        unresolvedAuto(setting, join(s, key), "Hugging Face does not fill it");
    };
    if (readDouble(*f, s, "loss_scale", cfg.lossScale, 0.0) == Read::Auto)
      unresolvedAuto(cfg.lossScale, "fp16.loss_scale",
                     "Hugging Face does not fill it");
    // 2^127 is the largest power of two an fp32 loss scale can hold.
    intKey("initial_scale_power", cfg.initialScalePower, 0, 127,
           "the initial scale 2^power must be a finite fp32");
    intKey("loss_scale_window", cfg.lossScaleWindow, 1, INT64_MAX,
           "the scale grows after this many steps without overflow");
    intKey("hysteresis", cfg.hysteresis, 1, INT64_MAX,
           "overflows tolerated before the scale drops");
    intKey("min_loss_scale", cfg.minLossScale, 1, INT64_MAX,
           "the dynamic scale never drops below it");
    if (readBool(*f, s, "consecutive_hysteresis", cfg.consecutiveHysteresis) ==
        Read::Auto)
      unresolvedAuto(cfg.consecutiveHysteresis, "fp16.consecutive_hysteresis",
                     "Hugging Face does not fill it");
  }

  // get_bfloat16_config reads "bf16", else the old name "bfloat16".
  StringRef bf16Key = root.get("bf16") ? "bf16" : "bfloat16";
  if (root.get("bf16") && root.get("bfloat16"))
    report(Severity::Warning, "bfloat16",
           "ignored: DeepSpeed reads \"bf16\" when both are present");
  if (const json::Object *b = section(root, "", bf16Key)) {
    checkKeys(*b, bf16Key, {kBf16Modelled, kBf16Unmodelled});
    if (readBool(*b, bf16Key, "enabled", cfg.bf16Enabled) == Read::Auto) {
      mark(cfg.bf16Enabled, join(bf16Key, "enabled"), Origin::Auto);
      cfg.bf16Enabled.value = facts.precision == StepPrecision::BF16;
    }
  }
}

void Reader::readBatch(const json::Object &root) {
  // DeepSpeed asserts each is > 0 (_batch_assertion).
  if (readInt(root, "", "train_micro_batch_size_per_gpu",
              cfg.trainMicroBatchSizePerGpu, 1) == Read::Auto) {
    mark(cfg.trainMicroBatchSizePerGpu, "train_micro_batch_size_per_gpu",
         Origin::Auto);
    if (facts.microBatchSize)
      cfg.trainMicroBatchSizePerGpu.value = *facts.microBatchSize;
    else
      report(Severity::Error, "train_micro_batch_size_per_gpu",
             "\"auto\" needs the step's micro-batch size, which is unknown");
  }
  if (readInt(root, "", "gradient_accumulation_steps",
              cfg.gradientAccumulationSteps, 1) == Read::Auto) {
    mark(cfg.gradientAccumulationSteps, "gradient_accumulation_steps",
         Origin::Auto);
    // TrainingArguments.gradient_accumulation_steps defaults to 1.
    cfg.gradientAccumulationSteps.value =
        facts.gradientAccumulation.value_or(1);
  }
  if (readInt(root, "", "train_batch_size", cfg.trainBatchSize, 1) ==
      Read::Auto) {
    // world_size * per_device_train_batch_size * gradient_accumulation_steps;
    // computed in checkZeroConfig once the ranks are final.
    mark(cfg.trainBatchSize, "train_batch_size", Origin::Auto);
    if (!facts.microBatchSize)
      report(Severity::Error, "train_batch_size",
             "\"auto\" needs the step's micro-batch size, which is unknown");
  }

  if (readDouble(root, "", "gradient_clipping", cfg.gradientClipping, 0.0) ==
      Read::Auto) {
    // trainer_config_process: gradient_clipping <- args.max_grad_norm; the
    // step's clip, or 0 (off) when the step clips nothing.
    mark(cfg.gradientClipping, "gradient_clipping", Origin::Auto);
    cfg.gradientClipping.value = facts.maxGradNorm.value_or(0.0);
    if (!facts.maxGradNorm)
      report(Severity::Note, "gradient_clipping",
             "\"auto\" resolves to 0 (off): the step applies no gradient "
             "clipping");
  }
}

void Reader::readOptimizer(const json::Object &root) {
  const json::Object *o = section(root, "", "optimizer");
  if (!o)
    return;
  cfg.optimizerPresent = true;
  checkKeys(*o, "optimizer", {kOptimizerModelled, kOptimizerUnmodelled});
  if (readString(*o, "optimizer", "type", cfg.optimizerType) == Read::Auto)
    unresolvedAuto(cfg.optimizerType, "optimizer.type",
                   "Hugging Face does not fill it");
  const json::Object *p = section(*o, "optimizer", "params");
  if (!p)
    return;
  StringRef s = "optimizer.params";
  checkKeys(*p, s, {kOptimizerParamsModelled, kOptimizerParamsUnmodelled});

  auto param = [&](StringRef key, std::optional<Setting<double>> &slot,
                   std::optional<double> stepValue, double minValue) {
    Setting<double> setting;
    Read r = readDouble(*p, s, key, setting, minValue);
    if (r == Read::Value) {
      slot = setting;
      return;
    }
    if (r != Read::Auto)
      return;
    std::string path = join(s, key);
    mark(setting, path, Origin::Auto);
    if (!stepValue) {
      report(Severity::Error, path,
             "\"auto\" needs the step's optimizer " + key +
                 ", which the step does not give (optimizer: " +
                 stringifyOptimizer(facts.optimizer) + ")");
      return;
    }
    setting.value = *stepValue;
    slot = setting;
  };
  param("lr", cfg.lr, facts.learningRate, 0.0);
  param("eps", cfg.eps, facts.epsilon, 0.0);
  param("weight_decay", cfg.weightDecay, facts.weightDecay, 0.0);

  // betas: [beta1, beta2], each in [0, 1); "auto" <- [adam_beta1, adam_beta2].
  const json::Value *betas = p->get("betas");
  if (!betas)
    return;
  std::string path = "optimizer.params.betas";
  if (isAuto(*betas)) {
    if (!facts.beta1 || !facts.beta2) {
      report(Severity::Error, path,
             "\"auto\" needs the step's Adam betas, which the step does not "
             "give (optimizer: " +
                 stringifyOptimizer(facts.optimizer) + ")");
      return;
    }
    Setting<double> b1(*facts.beta1), b2(*facts.beta2);
    mark(b1, path, Origin::Auto);
    mark(b2, path, Origin::Auto);
    cfg.beta1 = b1;
    cfg.beta2 = b2;
    return;
  }
  const json::Array *a = betas->getAsArray();
  if (!a || a->size() != 2) {
    report(Severity::Error, path,
           a ? "expected two numbers [beta1, beta2], got " +
                   Twine(a->size()) + " elements"
             : "expected two numbers [beta1, beta2], got " + kindName(*betas));
    return;
  }
  std::optional<Setting<double>> *slots[] = {&cfg.beta1, &cfg.beta2};
  for (unsigned i = 0; i < 2; ++i) {
    std::string elt = path + "[" + std::to_string(i) + "]";
    std::optional<double> d = (*a)[i].getAsNumber();
    if (!d) {
      wrongType(elt, "a number", (*a)[i]);
      continue;
    }
    if (*d < 0.0 || *d >= 1.0) {
      report(Severity::Error, elt, formatDouble(*d) + " must be in [0, 1)");
      continue;
    }
    Setting<double> b(*d);
    mark(b, elt, Origin::Given);
    *slots[i] = b;
  }
}

void Reader::readActivationCheckpointing(const json::Object &root) {
  const json::Object *o = section(root, "", "activation_checkpointing");
  if (!o)
    return;
  StringRef s = "activation_checkpointing";
  ActivationCheckpointingConfig &a = cfg.activationCheckpointing;
  a.present = true;
  checkKeys(*o, s, {kActCkptModelled, {}});
  auto boolKey = [&](StringRef key, Setting<bool> &setting) {
    if (readBool(*o, s, key, setting) == Read::Auto)
      unresolvedAuto(setting, join(s, key), "Hugging Face does not fill it");
  };
  boolKey("partition_activations", a.partitionActivations);
  boolKey("cpu_checkpointing", a.cpuCheckpointing);
  boolKey("contiguous_memory_optimization", a.contiguousMemoryOptimization);
  boolKey("synchronize_checkpoint_boundary", a.synchronizeCheckpointBoundary);
  boolKey("profile", a.profile);
  // number_checkpoints defaults to None; configs also write false for "not
  // set" (the pattern many examples copy), which DeepSpeed treats as falsy.
  const json::Value *n = o->get("number_checkpoints");
  if (n && !isAuto(*n) && n->kind() != json::Value::Null &&
      !n->getAsBoolean()) {
    if (readInt(*o, s, "number_checkpoints", a.numberCheckpoints, 0) ==
        Read::Auto)
      unresolvedAuto(a.numberCheckpoints,
                     "activation_checkpointing.number_checkpoints",
                     "Hugging Face does not fill it");
  } else if (n && n->getAsBoolean() && *n->getAsBoolean()) {
    wrongType("activation_checkpointing.number_checkpoints", "an integer",
              *n);
  } else if (n) {
    mark(a.numberCheckpoints, "activation_checkpointing.number_checkpoints",
         Origin::Given);
  }
}

void Reader::readRoot(const json::Value &value) {
  const json::Object *root = value.getAsObject();
  if (!root) {
    report(Severity::Error, "",
           "a DeepSpeed configuration is a JSON object, got " +
               kindName(value));
    return;
  }
  checkKeys(*root, "", {kRootModelled, kRootUnmodelled});
  readZero(*root);
  readPrecision(*root);
  readBatch(*root);
  readOptimizer(*root);
  readActivationCheckpointing(*root);

  // Not a DeepSpeed key: DeepSpeed ignores it (Hugging Face has a
  // TrainingArguments flag of that name). The source articles write it in
  // the DeepSpeed file, so Memwall reads it as a request for --mw-remat.
  if (const json::Value *g = root->get("gradient_checkpointing")) {
    if (std::optional<bool> b = g->getAsBoolean()) {
      cfg.rematRequested.value = *b;
      mark(cfg.rematRequested, "gradient_checkpointing", Origin::Given);
      report(Severity::Warning, "gradient_checkpointing",
             Twine("not a DeepSpeed key (DeepSpeed ignores it); Memwall "
                   "maps it to --mw-remat") +
                 (*b ? (facts.rematApplied
                            ? ", which the step already has"
                            : ", which --mw-zero runs on the step first "
                              "(strategy=every-k k=1: a checkpoint per "
                              "transformer block, as Hugging Face's)")
                     : ", which stays off"));
    } else {
      wrongType("gradient_checkpointing", "true or false", *g);
    }
  }
}

//===----------------------------------------------------------------------===//
// Overrides and checks
//===----------------------------------------------------------------------===//

SmallVector<ConfigDiagnostic, 2>
memwall::zero::applyOverrides(ZeroConfig &config,
                              const ZeroOverrides &overrides) {
  SmallVector<ConfigDiagnostic, 2> diags;
  auto apply = [&](auto &setting, const auto &value, StringRef key,
                   StringRef option, bool valid, StringRef why) {
    if (!value)
      return;
    if (!valid) {
      diags.push_back({Severity::Error, key.str(),
                       ("option " + option + " " + why).str(), 0, 0});
      return;
    }
    if (setting.origin == Origin::Given || setting.origin == Origin::Auto)
      diags.push_back({Severity::Note, key.str(),
                       ("the pass option " + option +
                        " replaces the value from the file")
                           .str(),
                       setting.line, setting.column});
    setting.value = *value;
    setting.origin = Origin::Override;
  };
  auto positive = [](const std::optional<int64_t> &v) { return !v || *v > 0; };
  auto nonNegative = [](const std::optional<int64_t> &v) {
    return !v || *v >= 0;
  };
  apply(config.stage, overrides.stage, "zero_optimization.stage", "stage",
        !overrides.stage || (*overrides.stage >= 0 && *overrides.stage <= 3),
        "must be 0, 1, 2 or 3");
  apply(config.ranks, overrides.ranks, "ranks", "ranks",
        positive(overrides.ranks), "must be >= 1");
  apply(config.reduceBucketSize, overrides.reduceBucketSize,
        "zero_optimization.reduce_bucket_size", "reduce-bucket",
        positive(overrides.reduceBucketSize), "must be >= 1 element");
  apply(config.allgatherBucketSize, overrides.allgatherBucketSize,
        "zero_optimization.allgather_bucket_size", "allgather-bucket",
        positive(overrides.allgatherBucketSize), "must be >= 1 element");
  apply(config.prefetchBucketSize, overrides.prefetchBucketSize,
        "zero_optimization.stage3_prefetch_bucket_size", "prefetch-bucket",
        nonNegative(overrides.prefetchBucketSize), "must be >= 0 elements");
  apply(config.paramPersistenceThreshold, overrides.paramPersistenceThreshold,
        "zero_optimization.stage3_param_persistence_threshold",
        "persistence-threshold",
        nonNegative(overrides.paramPersistenceThreshold),
        "must be >= 0 elements");
  apply(config.maxLiveParameters, overrides.maxLiveParameters,
        "zero_optimization.stage3_max_live_parameters", "max-live-parameters",
        nonNegative(overrides.maxLiveParameters), "must be >= 0 elements");
  apply(config.overlapComm, overrides.overlapComm,
        "zero_optimization.overlap_comm", "overlap", true, "");
  return diags;
}

namespace {
/// Collects the diagnostics of checkZeroConfig.
struct Checker {
  ZeroConfig &cfg;
  const ModelFacts &facts;
  SmallVector<ConfigDiagnostic, 4> diags;

  template <typename T>
  void report(Severity severity, StringRef path, const Setting<T> &at,
              const Twine &message) {
    diags.push_back({severity, path.str(), message.str(), at.line, at.column});
  }
  /// A warning on a setting the file gives that has no effect, saying why.
  template <typename T>
  void noEffect(StringRef path, const Setting<T> &setting, const Twine &why) {
    if (setting.origin == Origin::Given || setting.origin == Origin::Auto)
      report(Severity::Warning, path, setting, "has no effect: " + why);
  }

  void checkBatch();
  void checkZero();
  void checkPrecision();
  void checkOptimizer();
  void checkOffload();
  void checkActivationCheckpointing();
};
} // namespace

/// A batch value the user fixed (in the file, through "auto" or an option),
/// as opposed to one derived or defaulted that the arithmetic recomputes.
static bool isFixed(const Setting<int64_t> &s) {
  return s.origin == Origin::Given || s.origin == Origin::Auto ||
         s.origin == Origin::Override;
}

void Checker::checkBatch() {
  Setting<int64_t> &tb = cfg.trainBatchSize;
  Setting<int64_t> &mb = cfg.trainMicroBatchSizePerGpu;
  Setting<int64_t> &ga = cfg.gradientAccumulationSteps;
  int64_t w = cfg.ranks.value;
  // An "auto" train_batch_size is world_size * micro * accumulation
  // (trainer_config_process), computed below like a derived one.
  bool hasTb = isFixed(tb) && tb.origin != Origin::Auto;
  bool hasMb = isFixed(mb), hasGa = isFixed(ga);
  auto derive = [](Setting<int64_t> &s, int64_t value) {
    s.value = value;
    if (s.origin != Origin::Auto)
      s.origin = Origin::Derived;
  };

  // Neither batch key given: DeepSpeed would assert; the step supplies them,
  // as Hugging Face supplies "auto" from TrainingArguments.
  if (!hasTb && !hasMb) {
    if (!facts.microBatchSize) {
      diags.push_back({Severity::Warning, "train_batch_size",
                       "neither the file nor the step gives a batch size; "
                       "the batch arithmetic is not checked",
                       0, 0});
      return;
    }
    derive(mb, *facts.microBatchSize);
    hasMb = true;
    if (!hasGa && facts.gradientAccumulation) {
      derive(ga, *facts.gradientAccumulation);
      hasGa = true;
    }
  }

  // DeepSpeedConfig._set_batch_related_parameters.
  if (hasTb && hasMb && !hasGa) {
    if (tb.value % (mb.value * w) != 0) {
      report(Severity::Error, "train_batch_size", tb,
             "train_batch_size is not divisible by "
             "train_micro_batch_size_per_gpu * ranks: " +
                 Twine(tb.value) + " % (" + Twine(mb.value) + " * " +
                 Twine(w) + ") = " + Twine(tb.value % (mb.value * w)));
      return;
    }
    derive(ga, tb.value / mb.value / w);
  } else if (hasTb && !hasMb) {
    if (!hasGa)
      derive(ga, 1);
    if (tb.value % (w * ga.value) != 0) {
      report(Severity::Error, "train_batch_size", tb,
             "train_batch_size is not divisible by ranks * "
             "gradient_accumulation_steps: " +
                 Twine(tb.value) + " % (" + Twine(w) + " * " +
                 Twine(ga.value) + ") = " + Twine(tb.value % (w * ga.value)));
      return;
    }
    derive(mb, tb.value / w / ga.value);
  } else if (!hasTb) {
    if (!hasGa)
      derive(ga, 1);
    derive(tb, mb.value * ga.value * w);
  }

  // _batch_assertion.
  int64_t product = mb.value * ga.value * w;
  if (tb.value != product) {
    report(Severity::Error, "train_batch_size", tb,
           "train_batch_size != train_micro_batch_size_per_gpu * "
           "gradient_accumulation_steps * ranks: " +
               Twine(tb.value) + " != " + Twine(mb.value) + " * " +
               Twine(ga.value) + " * " + Twine(w) + " = " + Twine(product));
    return;
  }
  // The step's shapes fix its micro-batch and accumulation.
  std::string arithmetic = ("train_batch_size = " + Twine(tb.value) + " = " +
                            Twine(mb.value) + " * " + Twine(ga.value) + " * " +
                            Twine(w) + " ranks")
                               .str();
  if (facts.microBatchSize && mb.value != *facts.microBatchSize)
    report(Severity::Error, "train_micro_batch_size_per_gpu", mb,
           Twine(mb.value) + " differs from the step's micro-batch size " +
               Twine(*facts.microBatchSize) + " (" + arithmetic + ")");
  if (facts.gradientAccumulation && ga.value != *facts.gradientAccumulation)
    report(Severity::Error, "gradient_accumulation_steps", ga,
           Twine(ga.value) +
               " differs from the step's gradient accumulation " +
               Twine(*facts.gradientAccumulation) + " (" + arithmetic + ")");
}

void Checker::checkZero() {
  int64_t stage = cfg.stage.value;
  // DeepSpeedZeroConfig.overlap_comm_valid: None becomes `stage == 3`.
  if (cfg.overlapComm.origin == Origin::Default)
    cfg.overlapComm.value = stage == 3;

  std::string stageText = "stage is " + std::to_string(stage);
  if (stage < 3) {
    std::string why =
        "stage3_* settings apply only to ZeRO stage 3 (" + stageText + ")";
    noEffect("zero_optimization.stage3_prefetch_bucket_size",
             cfg.prefetchBucketSize, why);
    noEffect("zero_optimization.stage3_param_persistence_threshold",
             cfg.paramPersistenceThreshold, why);
    noEffect("zero_optimization.stage3_max_live_parameters",
             cfg.maxLiveParameters, why);
    noEffect("zero_optimization.stage3_max_reuse_distance",
             cfg.maxReuseDistance, why);
  } else {
    noEffect("zero_optimization.stage3_max_reuse_distance",
             cfg.maxReuseDistance,
             "Memwall's schedule is static: a gathered parameter is released "
             "at its last use in the plan, not by a reuse-distance heuristic");
    // Stage 3 gathers parameters through its own prefetcher
    // (DeepSpeedZeroOptimizer_Stage3 takes no allgather settings) and always
    // reduce-scatters gradients.
    noEffect("zero_optimization.allgather_partitions", cfg.allgatherPartitions,
             "stage 3 gathers parameters before each use, sized by "
             "stage3_prefetch_bucket_size");
    noEffect("zero_optimization.allgather_bucket_size",
             cfg.allgatherBucketSize,
             "stage 3 gathers parameters in stage3_prefetch_bucket_size "
             "buckets");
    noEffect("zero_optimization.reduce_scatter", cfg.reduceScatter,
             "stage 3 always reduce-scatters gradients");
    if (cfg.prefetchBucketSize.value == 0 &&
        cfg.prefetchBucketSize.origin != Origin::Default)
      report(Severity::Note, "zero_optimization.stage3_prefetch_bucket_size",
             cfg.prefetchBucketSize,
             "0 disables prefetch: each parameter is gathered when it is "
             "first used");
  }
  if (stage == 0) {
    std::string why = "stage 0 is plain data parallelism: gradients are "
                "all-reduced and nothing is partitioned";
    noEffect("zero_optimization.reduce_scatter", cfg.reduceScatter, why);
    noEffect("zero_optimization.contiguous_gradients",
             cfg.contiguousGradients, why);
    noEffect("zero_optimization.allgather_partitions",
             cfg.allgatherPartitions, why);
    noEffect("zero_optimization.allgather_bucket_size",
             cfg.allgatherBucketSize, why);
    noEffect("zero_optimization.overlap_comm", cfg.overlapComm,
             "DeepSpeed's overlap applies to the ZeRO optimizers of stages "
             "1-3");
  }
  if (cfg.ranks.value == 1 && stage > 0)
    diags.push_back({Severity::Warning, "zero_optimization.stage",
                     "has no effect on one rank: ZeRO partitions across "
                     "data-parallel ranks, and there is only one",
                     cfg.stage.line, cfg.stage.column});
  else if (cfg.ranks.value == 1)
    noEffect("zero_optimization.overlap_comm", cfg.overlapComm,
             "there is no communication on one rank");
  noEffect("zero_optimization.sub_group_size", cfg.subGroupSize,
           "Memwall updates a rank's whole partition in one kernel");
}

void Checker::checkPrecision() {
  StringRef step = stringifyPrecision(facts.precision);
  if (cfg.fp16Enabled.value && cfg.bf16Enabled.value) {
    report(Severity::Error, "bf16.enabled", cfg.bf16Enabled,
           "fp16 and bf16 cannot both be enabled (DeepSpeed asserts)");
    return;
  }
  // The step's precision decides: the pass does not change the dtypes of
  // the IR it is given, while DeepSpeed would cast the model.
  if (cfg.fp16Enabled.value && facts.precision != StepPrecision::FP16)
    report(Severity::Warning, "fp16.enabled", cfg.fp16Enabled,
           "the step computes in " + step +
               ": the step's precision decides (DeepSpeed would cast the "
               "model to fp16; Memwall plans the step as written)");
  if (cfg.bf16Enabled.value && facts.precision != StepPrecision::BF16)
    report(Severity::Warning, "bf16.enabled", cfg.bf16Enabled,
           "the step computes in " + step +
               ": the step's precision decides (DeepSpeed would cast the "
               "model to bf16; Memwall plans the step as written)");
  if (!cfg.fp16Enabled.value && !cfg.bf16Enabled.value &&
      facts.precision != StepPrecision::FP32)
    diags.push_back({Severity::Warning, "fp16.enabled",
                     ("the step computes in " + step +
                      " but the file enables neither fp16 nor bf16: the "
                      "step's precision decides")
                         .str(),
                     cfg.fp16Enabled.line, cfg.fp16Enabled.column});

  // fp16.* settings without an fp16 step.
  std::string why;
  if (!cfg.fp16Enabled.value)
    why = "fp16.enabled is false";
  else if (facts.precision != StepPrecision::FP16)
    why = ("the step is " + step + ", not fp16").str();
  if (!why.empty()) {
    noEffect("fp16.loss_scale", cfg.lossScale, why);
    noEffect("fp16.initial_scale_power", cfg.initialScalePower, why);
    noEffect("fp16.loss_scale_window", cfg.lossScaleWindow, why);
    noEffect("fp16.hysteresis", cfg.hysteresis, why);
    noEffect("fp16.consecutive_hysteresis", cfg.consecutiveHysteresis, why);
    noEffect("fp16.min_loss_scale", cfg.minLossScale, why);
    return;
  }
  if (cfg.lossScale.value != 0.0) {
    report(Severity::Note, "fp16.loss_scale", cfg.lossScale,
           "static loss scale " + formatDouble(cfg.lossScale.value) +
               " (0 selects dynamic scaling)");
    std::string staticWhy = "the loss scale is static (fp16.loss_scale = " +
                      formatDouble(cfg.lossScale.value) + ")";
    noEffect("fp16.initial_scale_power", cfg.initialScalePower, staticWhy);
    noEffect("fp16.loss_scale_window", cfg.lossScaleWindow, staticWhy);
    noEffect("fp16.hysteresis", cfg.hysteresis, staticWhy);
    noEffect("fp16.consecutive_hysteresis", cfg.consecutiveHysteresis,
             staticWhy);
    noEffect("fp16.min_loss_scale", cfg.minLossScale, staticWhy);
  }
}

void Checker::checkOptimizer() {
  Setting<double> &clip = cfg.gradientClipping;
  if (clip.value > 0.0 && !facts.maxGradNorm)
    report(Severity::Warning, "gradient_clipping", clip,
           "not applied: the step has no gradient clipping (--mw-autodiff "
           "emits none), so gradients are not clipped to " +
               formatDouble(clip.value));
  else if (facts.maxGradNorm && clip.value != *facts.maxGradNorm &&
           clip.origin != Origin::Default)
    report(Severity::Warning, "gradient_clipping", clip,
           "the step clips at " + formatDouble(*facts.maxGradNorm) +
               "; the step's value is used");

  if (!cfg.optimizerPresent)
    return;
  if (facts.optimizer == StepOptimizer::None) {
    report(Severity::Warning, "optimizer", cfg.optimizerType,
           "has no effect: the step has no optimizer update");
    return;
  }
  // DeepSpeed's "Adam" is AdamW unless adam_w_mode is false; the step's
  // update is what runs either way.
  if (cfg.optimizerType.origin == Origin::Given) {
    std::string type = StringRef(cfg.optimizerType.value).lower();
    StepOptimizer kind = StringSwitch<StepOptimizer>(type)
                             .Cases("adam", "adamw", "fusedadam",
                                    StepOptimizer::AdamW)
                             .Case("sgd", StepOptimizer::SGD)
                             .Default(StepOptimizer::None);
    if (kind != facts.optimizer)
      report(Severity::Warning, "optimizer.type", cfg.optimizerType,
             "'" + cfg.optimizerType.value + "' is not the step's optimizer (" +
                 stringifyOptimizer(facts.optimizer) +
                 "): the step's update runs");
  }
  auto compare = [&](StringRef key, const std::optional<Setting<double>> &v,
                     std::optional<double> step) {
    if (!v || v->origin != Origin::Given || !step || v->value == *step)
      return;
    report(Severity::Warning, ("optimizer.params." + key).str(), *v,
           formatDouble(v->value) + " differs from the step's " +
               formatDouble(*step) +
               ": the step's value is used (its update is already built)");
  };
  compare("lr", cfg.lr, facts.learningRate);
  compare("betas[0]", cfg.beta1, facts.beta1);
  compare("betas[1]", cfg.beta2, facts.beta2);
  compare("eps", cfg.eps, facts.epsilon);
  compare("weight_decay", cfg.weightDecay, facts.weightDecay);
}

void Checker::checkOffload() {
  int64_t stage = cfg.stage.value;
  OffloadParamConfig &p = cfg.offloadParam;
  OffloadOptimizerConfig &o = cfg.offloadOptimizer;
  if (p.present) {
    StringRef s = "zero_optimization.offload_param";
    if (p.device.value != OffloadDevice::None && stage != 3 &&
        !facts.inference)
      report(Severity::Warning, (s + ".device").str(), p.device,
             "has no effect: parameter offload is valid only with ZeRO stage "
             "3 (stage is " +
                 Twine(stage) + "); nothing is offloaded");
    // --mw-offload's path= may give it instead; the pass checks.
    if (p.device.value == OffloadDevice::NVMe && p.nvmePath.value.empty() &&
        !facts.inference)
      report(Severity::Error, (s + ".nvme_path").str(), p.device,
             "device nvme needs nvme_path");
    if (p.device.value == OffloadDevice::None) {
      noEffect((s + ".pin_memory").str(), p.pinMemory, "device is none");
      noEffect((s + ".nvme_path").str(), p.nvmePath, "device is none");
    }
    if (p.device.value != OffloadDevice::NVMe) {
      std::string why = "used only when device is nvme";
      // --mw-offload: the prefetch depth on either device.
      if (!facts.inference)
        noEffect((s + ".buffer_count").str(), p.bufferCount, why);
      noEffect((s + ".buffer_size").str(), p.bufferSize, why);
      noEffect((s + ".max_in_cpu").str(), p.maxInCpu, why);
      if (p.device.value == OffloadDevice::CPU)
        noEffect((s + ".nvme_path").str(), p.nvmePath, why);
    }
  }
  if (o.present) {
    StringRef s = "zero_optimization.offload_optimizer";
    if (o.device.value != OffloadDevice::None && stage == 0)
      report(Severity::Warning, (s + ".device").str(), o.device,
             "has no effect: optimizer offload needs ZeRO stage 1, 2 or 3 "
             "(stage is 0); nothing is offloaded");
    if (o.device.value != OffloadDevice::None &&
        facts.optimizer == StepOptimizer::None)
      report(Severity::Warning, (s + ".device").str(), o.device,
             "has no effect: the step has no optimizer state");
    if (o.device.value == OffloadDevice::NVMe && o.nvmePath.value.empty())
      report(Severity::Error, (s + ".nvme_path").str(), o.device,
             "device nvme needs nvme_path");
    if (o.ratio.value < 1.0 && stage != 3)
      report(Severity::Error, (s + ".ratio").str(), o.ratio,
             "partial offload (ratio < 1) is supported only with ZeRO stage "
             "3 (DeepSpeed asserts)");
    if (o.device.value == OffloadDevice::None) {
      noEffect((s + ".pin_memory").str(), o.pinMemory, "device is none");
      noEffect((s + ".nvme_path").str(), o.nvmePath, "device is none");
    }
    if (o.device.value != OffloadDevice::NVMe) {
      std::string why = "used only when device is nvme";
      noEffect((s + ".buffer_count").str(), o.bufferCount, why);
      noEffect((s + ".pipeline_read").str(), o.pipelineRead, why);
      noEffect((s + ".pipeline_write").str(), o.pipelineWrite, why);
      noEffect((s + ".fast_init").str(), o.fastInit, why);
    }
  }
}

void Checker::checkActivationCheckpointing() {
  ActivationCheckpointingConfig &a = cfg.activationCheckpointing;
  if (!a.present)
    return;
  StringRef s = "activation_checkpointing";
  auto flag = [&](StringRef key, const Setting<bool> &setting,
                  const Twine &why) {
    if (setting.value)
      noEffect((s + "." + key).str(), setting, why);
  };
  flag("partition_activations", a.partitionActivations,
       "it splits checkpoints across model-parallel ranks, and Memwall's "
       "ranks are data-parallel only");
  flag("cpu_checkpointing", a.cpuCheckpointing,
       "Memwall keeps checkpoints in HBM (activation offload is not "
       "implemented)");
  flag("contiguous_memory_optimization", a.contiguousMemoryOptimization,
       "the static arena already places every checkpoint at a planned "
       "offset");
  flag("synchronize_checkpoint_boundary", a.synchronizeCheckpointBoundary,
       "Memwall's step has no per-checkpoint device synchronization");
  flag("profile", a.profile,
       "it times DeepSpeed's checkpoint function, which Memwall does not run");
  if (a.numberCheckpoints.value > 0)
    noEffect((s + ".number_checkpoints").str(), a.numberCheckpoints,
             "--mw-remat chooses the checkpoints under a memory budget");
  if (!cfg.rematRequested.value && !facts.rematApplied)
    diags.push_back({Severity::Warning, s.str(),
                     "DeepSpeed's section only configures its checkpoint "
                     "API and enables nothing by itself; run --mw-remat (or "
                     "set gradient_checkpointing) to recompute activations",
                     0, 0});
}

SmallVector<ConfigDiagnostic, 4>
memwall::zero::checkZeroConfig(ZeroConfig &config, const ModelFacts &facts) {
  Checker checker{config, facts, {}};
  // An inference step has no batch arithmetic, stage, precision or
  // optimizer to check against: only the offload of its weights.
  if (facts.inference) {
    checker.checkOffload();
    return std::move(checker.diags);
  }
  checker.checkBatch();
  checker.checkZero();
  checker.checkPrecision();
  checker.checkOptimizer();
  checker.checkOffload();
  checker.checkActivationCheckpointing();
  return std::move(checker.diags);
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

/// Splits llvm::json's `[LINE:COL, byte=N]: MESSAGE`: its ParseError keeps
/// the position private and prints it only in that form. Its column counts
/// from 0 at the character after the one it rejected (the parser has
/// consumed it), which is the rejected character's 1-based column.
static ConfigDiagnostic parseErrorDiagnostic(StringRef text) {
  ConfigDiagnostic d;
  d.severity = Severity::Error;
  d.message = ("invalid JSON: " + text).str();
  StringRef rest = text;
  unsigned line = 0, column = 0;
  if (!rest.consume_front("[") || rest.consumeInteger(10, line) ||
      !rest.consume_front(":") || rest.consumeInteger(10, column))
    return d;
  size_t colon = rest.find("]: ");
  if (colon != StringRef::npos)
    d.message = ("invalid JSON: " + rest.drop_front(colon + 3)).str();
  d.line = line;
  d.column = column;
  return d;
}

DeepSpeedConfigResult
memwall::zero::parseDeepSpeedConfig(StringRef text, StringRef fileName,
                                    const ModelFacts &facts,
                                    const ZeroOverrides &overrides) {
  DeepSpeedConfigResult result;
  result.fileName = fileName.str();
  result.config.ranks.value = facts.ranks;
  result.config.ranks.origin = Origin::Derived;

  // llvm::json's parser and json::Value's destructor recurse once per level.
  if (std::optional<NestingExcess> deep =
          findExcessNesting(text, NestingSyntax::Json)) {
    result.diagnostics.push_back({Severity::Error, "",
                                  "invalid JSON: " + describeExcessNesting(),
                                  deep->line, deep->column});
    return result;
  }
  Expected<json::Value> value = json::parse(text);
  if (!value) {
    result.diagnostics.push_back(
        parseErrorDiagnostic(toString(value.takeError())));
    return result;
  }
  KeyLocator locator(text);
  // json.load(..., object_pairs_hook=dict_raise_error_on_duplicate_keys).
  for (const KeyLocator::Duplicate &d : locator.getDuplicates())
    result.diagnostics.push_back(
        {Severity::Error, d.path,
         "duplicate key (DeepSpeed rejects a configuration with duplicate "
         "keys)",
         d.line, d.column});
  Reader reader(locator, facts, overrides, result.config, result.diagnostics);
  reader.readRoot(*value);

  for (ConfigDiagnostic &d : applyOverrides(result.config, overrides))
    result.diagnostics.push_back(std::move(d));
  for (ConfigDiagnostic &d : checkZeroConfig(result.config, facts))
    result.diagnostics.push_back(std::move(d));

  // File order first; diagnostics without a position keep their order at
  // the end.
  llvm::stable_sort(result.diagnostics, [](const ConfigDiagnostic &a,
                                           const ConfigDiagnostic &b) {
    auto key = [](const ConfigDiagnostic &d) {
      return std::make_pair(d.line ? d.line : UINT_MAX, d.column);
    };
    return key(a) < key(b);
  });
  return result;
}

//===----------------------------------------------------------------------===//
// Host-resident bytes
//===----------------------------------------------------------------------===//

SmallVector<ConfigDiagnostic, 2>
memwall::zero::inferenceOffloadOf(const ZeroConfig &config,
                                  InferenceOffload &out) {
  SmallVector<ConfigDiagnostic, 2> diags;
  const OffloadParamConfig &p = config.offloadParam;
  if (!p.present)
    return diags;
  StringRef s = "zero_optimization.offload_param";
  switch (p.device.value) {
  case OffloadDevice::None:
    if (p.device.origin == Origin::Given)
      diags.push_back({Severity::Error, (s + ".device").str(),
                       "is none: there is nothing to offload (cpu or nvme)",
                       p.device.line, p.device.column});
    break;
  case OffloadDevice::CPU:
    out.weights = "cpu";
    break;
  case OffloadDevice::NVMe:
    out.weights = "nvme";
    if (!p.nvmePath.value.empty())
      out.path = p.nvmePath.value;
    break;
  }
  if (p.bufferCount.origin == Origin::Given) {
    if (p.bufferCount.value < 1)
      diags.push_back({Severity::Error, (s + ".buffer_count").str(),
                       "must be >= 1 (the prefetch depth is buffer_count - 1), "
                       "got " + std::to_string(p.bufferCount.value),
                       p.bufferCount.line, p.bufferCount.column});
    else
      out.prefetch = p.bufferCount.value - 1;
  }
  return diags;
}

HostResidentBytes
memwall::zero::computeHostResidentBytes(const ZeroConfig &config,
                                        const ModelFacts &facts) {
  HostResidentBytes bytes;
  int64_t ranks = std::max<int64_t>(config.ranks.value, 1);
  int64_t partition = (facts.numParameters + ranks - 1) / ranks;
  int64_t paramElementBytes = facts.precision == StepPrecision::FP32 ? 4 : 2;
  int64_t stage = config.stage.value;

  const OffloadParamConfig &p = config.offloadParam;
  if (p.device.value != OffloadDevice::None && stage == 3) {
    // The rank's partition of the compute-precision parameters.
    int64_t paramBytes = partition * paramElementBytes;
    if (p.device.value == OffloadDevice::CPU) {
      bytes.paramHostBytes = paramBytes;
    } else {
      bytes.nvmeBytes += paramBytes;
      // The pinned swap buffers: buffer_count x buffer_size elements.
      bytes.pinnedBufferBytes =
          p.bufferCount.value * p.bufferSize.value * paramElementBytes;
    }
  }

  const OffloadOptimizerConfig &o = config.offloadOptimizer;
  if (o.device.value != OffloadDevice::None && stage >= 1 &&
      facts.optimizer != StepOptimizer::None) {
    // Per partition element: the fp32 master copy the CPU optimizer
    // updates, the fp32 gradient it reads, and the optimizer's state
    // (AdamW: two fp32 moments; SGD: one momentum buffer when momentum != 0).
    int64_t stateBytes = facts.optimizer == StepOptimizer::AdamW ? 8
                         : facts.momentum != 0.0                 ? 4
                                                                 : 0;
    int64_t offloaded = static_cast<int64_t>(
        static_cast<double>(partition) * o.ratio.value);
    if (o.device.value == OffloadDevice::CPU) {
      bytes.optimizerHostBytes = offloaded * (4 + 4 + stateBytes);
    } else {
      // States and master weights swap to NVMe; gradients stay in host
      // memory for the CPU optimizer.
      bytes.nvmeBytes += offloaded * (4 + stateBytes);
      bytes.optimizerHostBytes = offloaded * 4;
    }
  }
  return bytes;
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

namespace {
/// One line of the report.
struct Entry {
  std::string key;
  json::Value value;
  Origin origin;
  std::string note; ///< Why a default is what it is, if that needs saying.
};
} // namespace

static std::vector<Entry> collectEntries(const ZeroConfig &c) {
  std::vector<Entry> e;
  auto add = [&](StringRef key, const auto &setting, StringRef note = "") {
    e.push_back({key.str(), json::Value(setting.value), setting.origin,
                 note.str()});
  };
  auto addDevice = [&](StringRef key, const Setting<OffloadDevice> &s) {
    e.push_back({key.str(), json::Value(stringifyOffloadDevice(s.value)),
                 s.origin, ""});
  };
  add("zero_optimization.stage", c.stage);
  add("zero_optimization.allgather_partitions", c.allgatherPartitions);
  add("zero_optimization.allgather_bucket_size", c.allgatherBucketSize);
  add("zero_optimization.overlap_comm", c.overlapComm,
      c.overlapComm.isDefault() ? "DeepSpeed: true at stage 3, else false"
                                : "");
  add("zero_optimization.reduce_scatter", c.reduceScatter);
  add("zero_optimization.reduce_bucket_size", c.reduceBucketSize);
  add("zero_optimization.contiguous_gradients", c.contiguousGradients);
  add("zero_optimization.stage3_prefetch_bucket_size", c.prefetchBucketSize);
  add("zero_optimization.stage3_param_persistence_threshold",
      c.paramPersistenceThreshold);
  add("zero_optimization.stage3_max_live_parameters", c.maxLiveParameters);
  add("zero_optimization.stage3_max_reuse_distance", c.maxReuseDistance);
  add("zero_optimization.sub_group_size", c.subGroupSize);
  const OffloadOptimizerConfig &o = c.offloadOptimizer;
  addDevice("zero_optimization.offload_optimizer.device", o.device);
  if (o.present) {
    add("zero_optimization.offload_optimizer.nvme_path", o.nvmePath);
    add("zero_optimization.offload_optimizer.buffer_count", o.bufferCount);
    add("zero_optimization.offload_optimizer.pin_memory", o.pinMemory);
    add("zero_optimization.offload_optimizer.pipeline_read", o.pipelineRead);
    add("zero_optimization.offload_optimizer.pipeline_write", o.pipelineWrite);
    add("zero_optimization.offload_optimizer.fast_init", o.fastInit);
    add("zero_optimization.offload_optimizer.ratio", o.ratio);
  }
  const OffloadParamConfig &p = c.offloadParam;
  addDevice("zero_optimization.offload_param.device", p.device);
  if (p.present) {
    add("zero_optimization.offload_param.nvme_path", p.nvmePath);
    add("zero_optimization.offload_param.buffer_count", p.bufferCount);
    add("zero_optimization.offload_param.buffer_size", p.bufferSize);
    add("zero_optimization.offload_param.max_in_cpu", p.maxInCpu);
    add("zero_optimization.offload_param.pin_memory", p.pinMemory);
  }
  add("fp16.enabled", c.fp16Enabled);
  add("fp16.loss_scale", c.lossScale, "0 means dynamic");
  add("fp16.initial_scale_power", c.initialScalePower);
  add("fp16.loss_scale_window", c.lossScaleWindow);
  add("fp16.hysteresis", c.hysteresis);
  add("fp16.consecutive_hysteresis", c.consecutiveHysteresis);
  add("fp16.min_loss_scale", c.minLossScale);
  add("bf16.enabled", c.bf16Enabled);
  add("train_batch_size", c.trainBatchSize);
  add("train_micro_batch_size_per_gpu", c.trainMicroBatchSizePerGpu);
  add("gradient_accumulation_steps", c.gradientAccumulationSteps);
  add("ranks", c.ranks);
  add("gradient_clipping", c.gradientClipping, "0 means off");
  if (c.optimizerPresent) {
    add("optimizer.type", c.optimizerType);
    auto addParam = [&](StringRef key, const std::optional<Setting<double>> &v) {
      if (v)
        add(key, *v);
    };
    addParam("optimizer.params.lr", c.lr);
    addParam("optimizer.params.betas[0]", c.beta1);
    addParam("optimizer.params.betas[1]", c.beta2);
    addParam("optimizer.params.eps", c.eps);
    addParam("optimizer.params.weight_decay", c.weightDecay);
  }
  const ActivationCheckpointingConfig &a = c.activationCheckpointing;
  if (a.present) {
    add("activation_checkpointing.partition_activations",
        a.partitionActivations);
    add("activation_checkpointing.cpu_checkpointing", a.cpuCheckpointing);
    add("activation_checkpointing.contiguous_memory_optimization",
        a.contiguousMemoryOptimization);
    add("activation_checkpointing.number_checkpoints", a.numberCheckpoints,
        a.numberCheckpoints.value == 0 ? "DeepSpeed: None" : "");
    add("activation_checkpointing.synchronize_checkpoint_boundary",
        a.synchronizeCheckpointBoundary);
    add("activation_checkpointing.profile", a.profile);
  }
  add("gradient_checkpointing", c.rematRequested, "Memwall: --mw-remat");
  return e;
}

/// A JSON scalar as the text report prints it.
static std::string formatValue(const json::Value &v) {
  if (v.kind() == json::Value::Number) {
    if (std::optional<int64_t> i = v.getAsInteger())
      return std::to_string(*i);
    return formatDouble(*v.getAsNumber());
  }
  if (std::optional<bool> b = v.getAsBoolean())
    return *b ? "true" : "false";
  if (std::optional<StringRef> s = v.getAsString())
    return s->empty() ? "\"\"" : s->str();
  return "null";
}

void memwall::zero::printZeroConfigReport(const ZeroConfig &config,
                                          const ModelFacts &facts,
                                          raw_ostream &os) {
  for (const Entry &e : collectEntries(config)) {
    std::string value = formatValue(e.value);
    os << e.key << " = " << value << " (";
    if (e.origin == Origin::Auto)
      os << "auto -> " << value;
    else
      os << stringifyOrigin(e.origin);
    if (!e.note.empty())
      os << "; " << e.note;
    os << ")\n";
  }
  HostResidentBytes bytes = computeHostResidentBytes(config, facts);
  os << "host-resident bytes per rank = " << bytes.total()
     << " (params " << bytes.paramHostBytes << ", optimizer "
     << bytes.optimizerHostBytes << ", nvme buffers "
     << bytes.pinnedBufferBytes << "); nvme bytes = " << bytes.nvmeBytes
     << "\n";
}

json::Value memwall::zero::zeroConfigToJson(const ZeroConfig &config,
                                            const ModelFacts &facts) {
  json::Array settings;
  for (Entry &e : collectEntries(config)) {
    json::Object o;
    o["key"] = e.key;
    o["value"] = std::move(e.value);
    o["origin"] = stringifyOrigin(e.origin);
    if (!e.note.empty())
      o["note"] = e.note;
    settings.push_back(std::move(o));
  }
  HostResidentBytes bytes = computeHostResidentBytes(config, facts);
  return json::Object{
      {"settings", std::move(settings)},
      {"host_resident_bytes",
       json::Object{{"params", bytes.paramHostBytes},
                    {"optimizer", bytes.optimizerHostBytes},
                    {"nvme_buffers", bytes.pinnedBufferBytes},
                    {"total", bytes.total()},
                    {"nvme", bytes.nvmeBytes}}}};
}
