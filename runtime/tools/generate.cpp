//===- generate.cpp - mw-run --generate: serving with a paged KV cache ----===//
//
// Two plans of one model (mw-models --inference, compiled with
// mw-translate --mw-to-plan --mw-plan-function=decode and =prefill), two
// sessions over one memory: the session with the larger arena owns the
// arena, the weights and the KV caches, and the other is created with
// SessionOptions::shareWith, so both read and write the same caches and the
// device holds one arena (DESIGN.md decision 8). A block manager hands out
// cache blocks; requests join the batch when a batch row and their blocks
// are free (a prefill for the newcomers), leave it when they finish, and a
// running sequence that needs a block when none is free is preempted (its
// blocks freed) and later recomputed by prefill of its prompt and the
// tokens it had generated. docs/inference.md, "Serving".
//
//===----------------------------------------------------------------------===//

#include "generate.h"

#include "mwrt/block_manager.h"
#include "mwrt/runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <random>
#include <string>
#include <vector>

using namespace mwrt;

namespace {

const char *kGenerateUsage =
    "usage: mw-run DECODE.mwplan --generate --prefill PREFILL.mwplan\n"
    "              (--prompts FILE.jsonl | --synthetic N) --max-new-tokens T\n"
    "              [--greedy | --temperature X] [--seed S]\n"
    "              [--kv-layout paged|contiguous] [--kv-blocks N]\n"
    "              [--weights W.safetensors] [--device cpu|cuda]\n"
    "              [--reference-matmul] [--report json]\n"
    "\n"
    "Serves the requests with continuous batching over the plans' paged KV\n"
    "cache (docs/inference.md, \"Serving\") and prints tokens/s, the median\n"
    "time to first token, the KV cache utilization and the preemptions.\n"
    "\n"
    "  --prefill FILE         the @prefill plan of the same model\n"
    "  --prompts FILE         JSONL, one request a line: {\"prompt\": [ids...]}\n"
    "                         (an optional \"max_new_tokens\" overrides T)\n"
    "  --synthetic N          N requests of seeded random tokens, prompt\n"
    "                         lengths log-uniform in [1, max-seq / 2]\n"
    "  --max-new-tokens T     tokens to generate per request (a sequence\n"
    "                         also stops at max-seq tokens)\n"
    "  --greedy               argmax sampling (the default)\n"
    "  --temperature X        sample from softmax(logits / X), seeded by --seed\n"
    "  --seed S               sampling, --synthetic and default weights\n"
    "  --kv-layout L          paged (default): blocks as sequences grow;\n"
    "                         contiguous: max-seq reserved per sequence\n"
    "  --kv-blocks N          use only the first N of the cache's blocks\n"
    "  --print-tokens         print each request's generated tokens\n";

int usage(const std::string &message) {
  std::fprintf(stderr, "mw-run: %s\n(run mw-run --generate --help for usage)\n",
               message.c_str());
  return 2;
}

int fail(const std::string &message) {
  std::fprintf(stderr, "mw-run: error: %s\n", message.c_str());
  return 1;
}

bool parseCount(const std::string &text, uint64_t max, uint64_t &out) {
  return parseUnsignedArg(text, max, out);
}

struct GenOptions {
  std::string decode, prefill, prompts, weights, device = "cpu";
  uint64_t synthetic = 0, maxNew = 0, seed = 0, kvBlocks = 0;
  bool haveSynthetic = false, haveMaxNew = false, greedy = true;
  bool haveGreedy = false, contiguous = false, json = false;
  bool referenceMatmul = false, printTokens = false;
  double temperature = 1;
};

int parseGenerate(int argc, char **argv, GenOptions &o) {
  int status = splitCommandLine(
      argc, argv, kGenerateUsage,
      {"--generate", "--greedy", "--reference-matmul", "--print-tokens"},
      {"--prefill", "--prompts", "--synthetic", "--max-new-tokens",
       "--temperature", "--seed", "--kv-layout", "--kv-blocks", "--weights",
       "--device", "--report"},
      " for --generate", usage, o.decode,
      [&](const std::string &flag, const std::string &value) {
        if (flag == "--greedy") {
          o.haveGreedy = true;
        } else if (flag == "--reference-matmul") {
          o.referenceMatmul = true;
        } else if (flag == "--print-tokens") {
          o.printTokens = true;
        } else if (flag == "--prefill") {
          o.prefill = value;
        } else if (flag == "--prompts") {
          o.prompts = value;
        } else if (flag == "--weights") {
          o.weights = value;
        } else if (flag == "--device") {
          if (value != "cpu" && value != "cuda")
            return usage("unknown device '" + value +
                         "' (expected cpu or cuda)");
          o.device = value;
        } else if (flag == "--report") {
          if (value != "json")
            return usage("unknown report format '" + value +
                         "' (expected json)");
          o.json = true;
        } else if (flag == "--kv-layout") {
          if (value != "paged" && value != "contiguous")
            return usage("unknown --kv-layout '" + value +
                         "' (expected paged or contiguous)");
          o.contiguous = value == "contiguous";
        } else if (flag == "--synthetic") {
          if (!parseCount(value, 1000000, o.synthetic) || o.synthetic == 0)
            return usage("--synthetic expects a count in [1, 10^6], got '" +
                         value + "'");
          o.haveSynthetic = true;
        } else if (flag == "--max-new-tokens") {
          if (!parseCount(value, 1000000, o.maxNew) || o.maxNew == 0)
            return usage(
                "--max-new-tokens expects a count in [1, 10^6], got '" + value +
                "'");
          o.haveMaxNew = true;
        } else if (flag == "--kv-blocks") {
          if (!parseCount(value, 1u << 30, o.kvBlocks) || o.kvBlocks == 0)
            return usage("--kv-blocks expects a count in [1, 2^30], got '" +
                         value + "'");
        } else if (flag == "--seed") {
          if (!parseCount(value, UINT64_MAX, o.seed))
            return usage("--seed expects an integer in [0, 2^64), got '" +
                         value + "'");
        } else if (flag == "--temperature") {
          char *end = nullptr;
          errno = 0;
          double t = std::strtod(value.c_str(), &end);
          if (errno || *end || !(t > 0) || !std::isfinite(t))
            return usage("--temperature expects a positive number, got '" +
                         value + "'");
          o.temperature = t;
          o.greedy = false;
        }
        return 0;
      });
  if (status != 0)
    return status;
  if (o.decode.empty())
    return usage("--generate: no decode plan given");
  if (o.prefill.empty())
    return usage("--generate needs --prefill PREFILL.mwplan");
  if (o.prompts.empty() == !o.haveSynthetic)
    return usage("--generate needs one of --prompts FILE.jsonl and "
                 "--synthetic N");
  if (!o.haveMaxNew)
    return usage("--generate needs --max-new-tokens T");
  if (o.haveGreedy && !o.greedy)
    return usage("--greedy and --temperature exclude each other");
  return 0;
}

struct Request {
  std::vector<int32_t> tokens; ///< prompt, then the generated tokens
  size_t promptLen = 0;
  uint64_t maxNew = 0;
  int64_t cached = 0; ///< tokens whose K/V are in the cache
  int row = -1;       ///< batch row while running
  double ttftMs = -1;
  bool done = false;
  uint64_t generated() const { return tokens.size() - promptLen; }
};

/// The geometry both plans must agree on, read from their inputs.
struct Geometry {
  int64_t batch = 0, promptLen = 0, maxBlocks = 0, blocks = 0, blockSize = 0;
  int64_t vocab = 0;
  std::vector<std::string> caches;
};

const PersistentDesc *input(const Plan &p, const char *name) {
  int i = p.findPersistent(name);
  if (i < 0 || p.persistents()[i].role != Role::Input ||
      p.persistents()[i].dtype != DType::I32)
    return nullptr;
  return &p.persistents()[i];
}

/// Checks that `p` is an inference step as mw-models --inference writes it
/// and returns its geometry.
bool readGeometry(const Plan &p, Geometry &g, std::string &error) {
  const char *names[] = {"tokens", "positions", "slot_mapping", "block_tables",
                         "context_lens"};
  for (const char *n : names)
    if (!input(p, n)) {
      error = p.source() + ": not an inference step (no i32 input '" + n +
              "'; docs/inference.md)";
      return false;
    }
  const PersistentDesc &tok = *input(p, "tokens");
  const PersistentDesc &tables = *input(p, "block_tables");
  if (tok.shape.size() != 2 || tables.shape.size() != 2) {
    error = p.source() + ": tokens and block_tables must be 2-D";
    return false;
  }
  g.batch = tok.shape[0];
  g.promptLen = tok.shape[1];
  g.maxBlocks = tables.shape[1];
  for (const PersistentDesc &d : p.persistents()) {
    if (d.role != Role::KvCache || d.argument < 0)
      continue;
    if (d.shape.size() != 4) {
      error = p.source() + ": KV cache '" + d.name + "' is not 4-D";
      return false;
    }
    if (g.caches.empty()) {
      g.blocks = d.shape[0];
      g.blockSize = d.shape[1];
    } else if (d.shape[0] != g.blocks || d.shape[1] != g.blockSize) {
      error = p.source() + ": KV caches of different block counts or sizes";
      return false;
    }
    g.caches.push_back(d.name);
  }
  if (g.caches.empty()) {
    error = p.source() + ": no KV cache (role kv_cache)";
    return false;
  }
  int logits = p.findResult("logits");
  if (logits < 0 || p.results()[logits].value.shape.size() != 2 ||
      p.results()[logits].value.dtype != DType::F32) {
    error = p.source() + ": no f32 result 'logits' [B, V]";
    return false;
  }
  g.vocab = p.results()[logits].value.shape[1];
  return true;
}

/// Reads the JSONL prompts: one object a line with "prompt", a non-empty
/// list of token ids in [0, vocab) of at most maxSeq tokens. Blank lines are
/// skipped.
bool readPrompts(const std::string &path, int64_t vocab, int64_t maxSeq,
                 uint64_t maxNew, std::vector<Request> &out,
                 std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = "--prompts " + path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string where = path + ":" + std::to_string(number) + ": ";
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded()) {
      error = where + "not a JSON object";
      return false;
    }
    if (!j.is_object() || !j.contains("prompt")) {
      error = where + (j.is_object() && j.contains("text")
                           ? "\"text\" is not supported (mw-run has no "
                             "tokenizer): give \"prompt\" as token ids"
                           : "expected an object with \"prompt\": [token "
                             "ids]");
      return false;
    }
    const nlohmann::json &p = j["prompt"];
    if (!p.is_array()) {
      error = where + "\"prompt\" must be a list of token ids";
      return false;
    }
    if (p.empty()) {
      error = where + "the prompt is empty";
      return false;
    }
    if (static_cast<int64_t>(p.size()) > maxSeq) {
      error = where + "the prompt's " + std::to_string(p.size()) +
              " tokens are more than max-seq " + std::to_string(maxSeq) +
              " (the plan's block tables)";
      return false;
    }
    Request r;
    r.maxNew = maxNew;
    if (j.contains("max_new_tokens")) {
      const nlohmann::json &m = j["max_new_tokens"];
      if (!m.is_number_integer() || m.get<int64_t>() < 1) {
        error = where + "\"max_new_tokens\" must be a positive integer";
        return false;
      }
      r.maxNew = m.get<uint64_t>();
    }
    for (size_t k = 0; k < p.size(); ++k) {
      if (!p[k].is_number_integer()) {
        error = where + "prompt[" + std::to_string(k) + "] is not an integer";
        return false;
      }
      int64_t id = p[k].get<int64_t>();
      if (id < 0 || id >= vocab) {
        error = where + "token id " + std::to_string(id) + " (prompt[" +
                std::to_string(k) + "]) is outside the vocabulary of " +
                std::to_string(vocab);
        return false;
      }
      r.tokens.push_back(static_cast<int32_t>(id));
    }
    r.promptLen = r.tokens.size();
    out.push_back(std::move(r));
  }
  if (out.empty()) {
    error = "--prompts " + path + ": no requests (the file is empty)";
    return false;
  }
  return true;
}

/// --synthetic: prompt lengths log-uniform in [1, maxPrompt] (many short
/// prompts, a long tail), tokens uniform in [0, vocab).
void syntheticPrompts(uint64_t n, uint64_t seed, int64_t vocab,
                      int64_t maxPrompt, uint64_t maxNew,
                      std::vector<Request> &out) {
  std::mt19937_64 rng(seed ^ 0x5eed5eedull);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::uniform_int_distribution<int32_t> tok(0, static_cast<int32_t>(vocab - 1));
  for (uint64_t i = 0; i < n; ++i) {
    Request r;
    int64_t len = static_cast<int64_t>(
        std::floor(std::exp(u(rng) * std::log(maxPrompt + 1.0))));
    len = std::clamp<int64_t>(len, 1, maxPrompt);
    for (int64_t k = 0; k < len; ++k)
      r.tokens.push_back(tok(rng));
    r.promptLen = r.tokens.size();
    r.maxNew = maxNew;
    out.push_back(std::move(r));
  }
}

/// Sets an i32 input of `s`.
mwrt_status setI32(Session &s, const char *name, std::vector<int64_t> shape,
                   const std::vector<int32_t> &v) {
  return s.setTensor(name, DType::I32, shape, v.data(), v.size() * 4);
}

struct Sampler {
  bool greedy;
  double temperature;
  std::mt19937_64 rng;
  int32_t operator()(const float *row, int64_t v) {
    if (greedy)
      return static_cast<int32_t>(std::max_element(row, row + v) - row);
    double peak = *std::max_element(row, row + v);
    std::vector<double> w(v);
    for (int64_t j = 0; j < v; ++j)
      w[j] = std::exp((row[j] - peak) / temperature);
    std::discrete_distribution<int32_t> d(w.begin(), w.end());
    return d(rng);
  }
};

} // namespace

bool wantsGenerate(int argc, char **argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--generate") == 0)
      return true;
  return false;
}

int generateMain(int argc, char **argv) {
  GenOptions o;
  if (int st = parseGenerate(argc, argv, o))
    return st < 0 ? 0 : st;

  std::shared_ptr<const Plan> decodePlan, prefillPlan;
  if (Plan::load(o.decode, decodePlan) || Plan::load(o.prefill, prefillPlan))
    return fail(mwrt_last_error());
  Geometry gd, gp;
  std::string error;
  if (!readGeometry(*decodePlan, gd, error) ||
      !readGeometry(*prefillPlan, gp, error))
    return fail(error);
  if (gd.promptLen != 1)
    return fail(o.decode + ": not a decode step (tokens [B, 1]; the plans "
                           "may be swapped: --prefill takes @prefill's)");
  if (gp.batch != gd.batch || gp.maxBlocks != gd.maxBlocks ||
      gp.blocks != gd.blocks || gp.blockSize != gd.blockSize ||
      gp.vocab != gd.vocab || gp.caches != gd.caches)
    return fail(o.prefill + " and " + o.decode +
                " are not the prefill and decode steps of one model (batch, "
                "block tables, caches or vocabulary differ)");
  const int64_t B = gd.batch, P = gp.promptLen, MB = gd.maxBlocks;
  const int64_t BS = gd.blockSize, V = gd.vocab, maxSeq = MB * BS;
  int64_t blocks = gd.blocks;
  if (o.kvBlocks) {
    if (static_cast<int64_t>(o.kvBlocks) > gd.blocks)
      return fail("--kv-blocks " + std::to_string(o.kvBlocks) +
                  " is more than the cache's " + std::to_string(gd.blocks) +
                  " blocks");
    blocks = static_cast<int64_t>(o.kvBlocks);
  }
  if (blocks < MB)
    return fail("the KV cache's " + std::to_string(blocks) +
                " blocks cannot hold one sequence of max-seq " +
                std::to_string(maxSeq) + " tokens (" + std::to_string(MB) +
                " blocks)");

  std::vector<Request> reqs;
  if (!o.prompts.empty()) {
    if (!readPrompts(o.prompts, V, maxSeq, o.maxNew, reqs, error))
      return fail(error);
  } else {
    syntheticPrompts(o.synthetic, o.seed, V, std::max<int64_t>(1, maxSeq / 2),
                     o.maxNew, reqs);
  }

  // One memory: the larger arena's session owns it, the weights and the
  // caches; the other shares them.
  bool prefillOwns = prefillPlan->arenaSize() >= decodePlan->arenaSize();
  SessionOptions so;
  so.seed = o.seed;
  so.referenceMatmul = o.referenceMatmul;
  so.checkLoss = false;
  std::unique_ptr<Session> owner, sharer;
  if (Session::create(prefillOwns ? prefillPlan : decodePlan, o.device, so,
                      owner))
    return fail(mwrt_last_error());
  SessionOptions shared = so;
  shared.shareWith = owner.get();
  if (Session::create(prefillOwns ? decodePlan : prefillPlan, o.device, shared,
                      sharer))
    return fail(mwrt_last_error());
  if (!o.weights.empty() && owner->loadWeights(o.weights))
    return fail(mwrt_last_error());
  // The defaults of what the file did not give, before the clock starts.
  if (owner->initializeRest() || sharer->initializeRest())
    return fail(mwrt_last_error());
  Session &prefill = prefillOwns ? *owner : *sharer;
  Session &decode = prefillOwns ? *sharer : *owner;

  BlockManager bm(blocks, BS, MB, o.contiguous);
  Sampler sample{o.greedy, o.temperature, std::mt19937_64(o.seed)};
  std::deque<int> waiting;
  for (size_t i = 0; i < reqs.size(); ++i)
    waiting.push_back(static_cast<int>(i));
  std::vector<int> rows(B, -1); // request in each batch row
  std::vector<int> admitted;    // running requests, oldest first
  uint64_t preemptions = 0, prefillSteps = 0, decodeSteps = 0, newTokens = 0;
  double utilSum = 0, peakUtil = 0;
  uint64_t utilSamples = 0, peakBlocks = 0;
  auto start = std::chrono::steady_clock::now();
  auto elapsedMs = [&] {
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  };
  auto sampleUtil = [&] {
    int64_t reserved = bm.reservedBlocks();
    peakBlocks = std::max<uint64_t>(peakBlocks, reserved);
    if (reserved == 0)
      return;
    int64_t stored = 0;
    for (int r : admitted)
      stored += reqs[r].cached;
    double u = static_cast<double>(stored) / (reserved * BS);
    utilSum += u;
    peakUtil = std::max(peakUtil, u);
    ++utilSamples;
  };
  auto finishIfDone = [&](int r) {
    Request &q = reqs[r];
    if (q.generated() < q.maxNew && static_cast<int64_t>(q.tokens.size()) < maxSeq)
      return;
    q.done = true;
    bm.release(r);
    rows[q.row] = -1;
    q.row = -1;
    admitted.erase(std::find(admitted.begin(), admitted.end(), r));
  };
  auto took = [&](int r, int32_t token) {
    Request &q = reqs[r];
    q.tokens.push_back(token);
    ++newTokens;
    if (q.ttftMs < 0)
      q.ttftMs = elapsedMs();
  };
  auto logitsOf = [&](Session &s, std::vector<float> &out) -> mwrt_status {
    TensorData t;
    if (mwrt_status st = s.readResult("logits", t))
      return st;
    out.resize(t.bytes.size() / 4);
    std::memcpy(out.data(), t.bytes.data(), t.bytes.size());
    return MWRT_OK;
  };
  std::vector<float> logits;

  while (!waiting.empty() || !admitted.empty()) {
    // Join: FIFO, while a row and the head's blocks are free.
    std::vector<int> joining;
    while (!waiting.empty()) {
      int r = waiting.front();
      Request &q = reqs[r];
      auto row = std::find(rows.begin(), rows.end(), -1);
      if (row == rows.end() ||
          !bm.admit(r, static_cast<int64_t>(q.tokens.size())))
        break;
      waiting.pop_front();
      q.row = static_cast<int>(row - rows.begin());
      *row = r;
      q.cached = 0;
      admitted.push_back(r);
      joining.push_back(r);
    }
    // Prefill the newcomers (prompt, plus what a preempted one had
    // generated), P tokens per row per step; rows of running sequences get
    // context length 0 and slot -1.
    while (!joining.empty()) {
      std::vector<int32_t> tok(B * P, 0), pos(B * P, 0), slots(B * P, -1);
      std::vector<int32_t> tables(B * MB, -1), lens(B, 0);
      std::vector<int> last; // rows whose whole context is in after this step
      for (int r : joining) {
        Request &q = reqs[r];
        int64_t n = static_cast<int64_t>(q.tokens.size());
        int64_t k = std::min<int64_t>(P, n - q.cached);
        for (int64_t t = P - k; t < P; ++t) {
          int64_t p = q.cached + t - (P - k);
          tok[q.row * P + t] = q.tokens[p];
          pos[q.row * P + t] = static_cast<int32_t>(p);
          slots[q.row * P + t] = bm.slot(r, p);
        }
        std::vector<int32_t> row = bm.table(r);
        std::copy(row.begin(), row.end(), tables.begin() + q.row * MB);
        q.cached += k;
        lens[q.row] = static_cast<int32_t>(q.cached);
        if (q.cached == n)
          last.push_back(r);
      }
      if (setI32(prefill, "tokens", {B, P}, tok) ||
          setI32(prefill, "positions", {B, P}, pos) ||
          setI32(prefill, "slot_mapping", {B * P}, slots) ||
          setI32(prefill, "block_tables", {B, MB}, tables) ||
          setI32(prefill, "context_lens", {B}, lens) || prefill.step() ||
          logitsOf(prefill, logits))
        return fail(mwrt_last_error());
      ++prefillSteps;
      sampleUtil();
      for (int r : last) {
        took(r, sample(logits.data() + reqs[r].row * V, V));
        joining.erase(std::find(joining.begin(), joining.end(), r));
        finishIfDone(r);
      }
    }
    if (admitted.empty())
      continue;
    // Each running sequence stores its newest token: a block when it starts
    // one; none free: preempt the latest admitted (possibly itself).
    for (size_t i = 0; i < admitted.size();) {
      int r = admitted[i];
      Request &q = reqs[r];
      if (bm.grow(r, q.cached)) {
        ++i;
        continue;
      }
      int victim = admitted.back();
      Request &v = reqs[victim];
      bm.release(victim);
      rows[v.row] = -1;
      v.row = -1;
      v.cached = 0;
      admitted.pop_back();
      waiting.push_front(victim);
      ++preemptions;
      // Retry r (or stop when r itself left).
    }
    if (admitted.empty())
      continue;
    std::vector<int32_t> tok(B, 0), pos(B, 0), slots(B, -1), lens(B, 0);
    std::vector<int32_t> tables(B * MB, -1);
    for (int r : admitted) {
      Request &q = reqs[r];
      tok[q.row] = q.tokens[q.cached];
      pos[q.row] = static_cast<int32_t>(q.cached);
      slots[q.row] = bm.slot(r, q.cached);
      std::vector<int32_t> row = bm.table(r);
      std::copy(row.begin(), row.end(), tables.begin() + q.row * MB);
      ++q.cached;
      lens[q.row] = static_cast<int32_t>(q.cached);
    }
    if (setI32(decode, "tokens", {B, 1}, tok) ||
        setI32(decode, "positions", {B, 1}, pos) ||
        setI32(decode, "slot_mapping", {B}, slots) ||
        setI32(decode, "block_tables", {B, MB}, tables) ||
        setI32(decode, "context_lens", {B}, lens) || decode.step() ||
        logitsOf(decode, logits))
      return fail(mwrt_last_error());
    ++decodeSteps;
    sampleUtil();
    std::vector<int> running = admitted;
    for (int r : running) {
      took(r, sample(logits.data() + reqs[r].row * V, V));
      finishIfDone(r);
    }
  }
  double seconds = elapsedMs() / 1000;

  std::vector<double> ttft;
  for (const Request &q : reqs)
    ttft.push_back(q.ttftMs);
  std::sort(ttft.begin(), ttft.end());
  size_t n = ttft.size();
  double ttftMedian = n % 2 ? ttft[n / 2] : (ttft[n / 2 - 1] + ttft[n / 2]) / 2;
  double tps = seconds > 0 ? newTokens / seconds : 0;
  double util = utilSamples ? utilSum / utilSamples : 0;
  SessionStats so1 = owner->stats(), so2 = sharer->stats();
  uint64_t measured = so1.measuredPeakBytes + so2.measuredPeakBytes;
  // Offloaded weights: both sessions' fetches (they share the host store).
  OffloadStats of1 = owner->offloadStats(), of2 = sharer->offloadStats();
  uint64_t fetches = of1.fetches + of2.fetches;
  nlohmann::ordered_json offload = nullptr;
  if (fetches)
    offload = {{"compute_s", of1.computeSeconds + of2.computeSeconds},
               {"copy_s", of1.copySeconds + of2.copySeconds},
               {"wait_s", of1.waitSeconds + of2.waitSeconds},
               {"read_s", of1.readSeconds + of2.readSeconds},
               {"bytes_streamed", of1.bytesStreamed + of2.bytesStreamed},
               {"fetches", fetches},
               {"host_bytes", so1.hostBytes + so2.hostBytes}};

  if (o.json) {
    nlohmann::ordered_json j;
    j["decode_plan"] = o.decode;
    j["prefill_plan"] = o.prefill;
    j["device"] = o.device;
    j["kv_layout"] = o.contiguous ? "contiguous" : "paged";
    j["sampling"] = o.greedy ? "greedy" : "temperature";
    j["requests"] = reqs.size();
    j["generated_tokens"] = newTokens;
    j["seconds"] = seconds;
    j["tokens_per_s"] = tps;
    j["ttft_ms"] = ttftMedian;
    j["kv_utilization"] = util;
    j["kv_utilization_peak"] = peakUtil;
    j["preemptions"] = preemptions;
    j["prefill_steps"] = prefillSteps;
    j["decode_steps"] = decodeSteps;
    j["max_batch"] = B;
    j["prompt_len"] = P;
    j["max_seq"] = maxSeq;
    j["block_size"] = BS;
    j["kv_blocks"] = blocks;
    j["kv_blocks_peak"] = peakBlocks;
    j["measured_peak_bytes"] = measured;
    j["offload"] = offload;
    nlohmann::ordered_json outs = nlohmann::ordered_json::array();
    for (const Request &q : reqs)
      outs.push_back(std::vector<int32_t>(q.tokens.begin() + q.promptLen,
                                          q.tokens.end()));
    j["outputs"] = outs;
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  if (o.printTokens)
    for (size_t i = 0; i < reqs.size(); ++i) {
      std::printf("request %zu:", i);
      for (size_t k = reqs[i].promptLen; k < reqs[i].tokens.size(); ++k)
        std::printf(" %d", reqs[i].tokens[k]);
      std::printf("\n");
    }
  std::printf("mw-run --generate: %zu requests, %llu tokens in %.3f s on %s "
              "(max batch %lld, %s KV cache of %lld blocks of %lld)\n",
              reqs.size(), static_cast<unsigned long long>(newTokens), seconds,
              o.device.c_str(), static_cast<long long>(B),
              o.contiguous ? "contiguous" : "paged",
              static_cast<long long>(blocks), static_cast<long long>(BS));
  std::printf("tokens/s %.1f\ntime to first token: median %.3f ms\n", tps,
              ttftMedian);
  std::printf("KV utilization %.3f (time-averaged; peak %.3f, %llu of %lld "
              "blocks at most)\npreemptions %llu\n",
              util, peakUtil, static_cast<unsigned long long>(peakBlocks),
              static_cast<long long>(blocks),
              static_cast<unsigned long long>(preemptions));
  std::printf("steps: %llu prefill, %llu decode; memory measured %llu B (one "
              "arena, one set of weights and caches)\n",
              static_cast<unsigned long long>(prefillSteps),
              static_cast<unsigned long long>(decodeSteps),
              static_cast<unsigned long long>(measured));
  if (fetches)
    std::printf("offload (all steps): compute %.3f s, copy %.3f s, waiting "
                "for weights %.3f s, file reads %.3f s; %llu B streamed\n",
                offload["compute_s"].get<double>(),
                offload["copy_s"].get<double>(),
                offload["wait_s"].get<double>(),
                offload["read_s"].get<double>(),
                static_cast<unsigned long long>(
                    offload["bytes_streamed"].get<uint64_t>()));
  return 0;
}
